"""``judge report DIR``: one self-contained HTML file to look at a run, an evaluation or a sweep
(or any directory of reljudge tables and figures) -- summary, status counts, cost, the figures,
the tables and, for a run, a per-item browser with filters.

- `reljudge.report.contents`: what a directory holds, gathered into a `Page` (bounded);
- `reljudge.report.items`: the per-item rows of a run (human grades, prompts as sent);
- `reljudge.report.html`: the page as HTML (escaped, no network).
"""

from __future__ import annotations

from pathlib import Path

from reljudge.report.contents import Page, collect
from reljudge.report.html import render_html
from reljudge.report.items import DEFAULT_MAX_ITEMS

DEFAULT_REPORT_FILE = "report.html"


def write_html_report(
    directory: str | Path,
    out: str | Path | None = None,
    *,
    qrels: str | Path | None = None,
    max_items: int = DEFAULT_MAX_ITEMS,
    assessments: list[Path] | None = None,
    task: str | Path | None = None,
) -> Path:
    """Write the report of ``directory`` to ``out`` (default ``DIRECTORY/report.html``)
    atomically; return its path."""
    from reljudge.io.atomic import write_text_atomic

    page = collect(
        directory,
        qrels=Path(qrels) if qrels is not None else None,
        max_items=max_items,
        assessments=assessments or (),
        task=Path(task) if task is not None else None,
    )
    target = Path(out) if out is not None else Path(directory) / DEFAULT_REPORT_FILE
    write_text_atomic(target, render_html(page))
    return target


__all__ = ["DEFAULT_REPORT_FILE", "Page", "collect", "render_html", "write_html_report"]
