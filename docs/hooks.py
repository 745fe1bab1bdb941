"""mkdocs hooks: the CLI reference is generated from the ``judge`` command tree at build time
(`reljudge.cli.reference`), so it can never drift from ``judge --help``."""

from __future__ import annotations

from typing import Any

MARKER = "<!-- judge-cli-reference -->"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER not in markdown:
        return markdown
    from reljudge.cli.reference import markdown as cli_markdown

    return markdown.replace(MARKER, cli_markdown(heading_level=2))
