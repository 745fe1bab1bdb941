"""What the commands print for ``--json``: one helper, so every command prints JSON the same way
(NaN and ±inf as null, numpy values as numbers, UTF-8 kept, indented)."""

from __future__ import annotations

from typing import Any

import typer


def echo_json(value: Any) -> None:
    import json

    from reljudge.io.tables import json_ready

    typer.echo(json.dumps(json_ready(value), indent=2, ensure_ascii=False))
