"""Assessment task files for the tests of ``judge assess`` (`write_task`), written the way
``judge select`` writes them: a header line, then one line per item."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

SCALE_NAMES = {"0": "Irrelevant", "1": "Related", "2": "Highly relevant", "3": "Perfectly relevant"}


def header(
    run: str = "run", fingerprint: str | None = None, mode: str = "judge", **over: Any
) -> dict[str, Any]:
    return {
        "reljudge_task": 1,
        "run": run,
        "run_fingerprint": fingerprint or hashlib.sha256(b"").hexdigest(),
        "strategy": "stratified",
        "seed": 0,
        "budget": 4,
        "scale": [0, 1, 2, 3],
        "scale_names": SCALE_NAMES,
        "mode": mode,
        "strata": {"all": {"items": 4}},
        "created": "2026-11-27T04:00:00Z",
    } | over


def item(
    qid: str, docid: str, text: str = "a passage", llm_label: int | None = 2, **over: Any
) -> dict[str, Any]:
    return {
        "item": f"{qid}\t{docid}",
        "qid": qid,
        "docid": docid,
        "query": f"query of topic {qid}",
        "text": text,
        "llm_label": llm_label,
        "llm_answer": None if llm_label is None else f"##final score: {llm_label}",
        "stratum": "all",
        "inclusion_prob": 0.5,
        "why": "stratified random",
    } | over


def default_items() -> list[dict[str, Any]]:
    return [
        item("19335", "d1", "Anthropology is the study of humans.", 2),
        item("19335", "d2", "Unrelated text about cars.", 0),
        item("47923", "d3", "Axons carry signals away from the cell body.", 3),
        item("47923", "d4", "A short, partly related passage.", 1),
    ]


def write_task(
    path: Path, items: list[dict[str, Any]] | None = None, lines: list[str] | None = None, **head: Any
) -> Path:
    """A task file at ``path``: the header (`header` with ``head``), the items (default:
    `default_items`), then ``lines`` as they are (hostile lines)."""
    rows = [json.dumps(header(**head))] + [
        json.dumps(i) for i in (default_items() if items is None else items)
    ]
    path.write_text("\n".join(rows + (lines or [])) + "\n", encoding="utf-8")
    return path


def assessment(
    item_name: str, label: int | None, seq: int, assessor: str = "ann", mode: str = "judge"
) -> str:
    qid, docid = item_name.split("\t")
    return json.dumps(
        {
            "item": item_name,
            "qid": qid,
            "docid": docid,
            "label": label,
            "llm_label": None,
            "assessor": assessor,
            "mode": mode,
            "seconds": 1.5,
            "at": "2026-11-27T04:00:00.000Z",
            "seq": seq,
        }
    )
