"""The files of ``judge calibrate``: ``calibration.json`` and the first split's calibrated
qrels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reljudge.io.tables import json_ready

__all__ = ["write_calibration"]


def write_calibration(chosen: Any, result: Any, out_dir: str | Path) -> list[Path]:
    """``calibration.json`` (the summary and every split) and ``qrels.txt``: the judge's scores of
    the held-out topics of the first split mapped to binary labels by that split's threshold
    (``binary.qrels``) and to grades by its cut-points (``graded.qrels``)."""
    from reljudge.io.atomic import write_text_atomic

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    first = result.splits[0]
    fit = set(first.fit_topics)
    binary, graded = [], []
    for qid, docs in chosen.scores.items():
        if qid in fit:
            continue
        for docid, score in docs.items():
            binary.append(f"{qid} 0 {docid} {int(score >= first.threshold)}")
            grade = first.low + sum(score >= c for c in first.cuts)
            graded.append(f"{qid} 0 {docid} {int(grade) if float(grade).is_integer() else grade}")
    data = {
        "summary": result.summary,
        "splits": [vars(s) for s in result.splits],
    }
    files = {
        out / "calibration.json": json.dumps(json_ready(data), indent=1) + "\n",
        out / "binary.qrels": "\n".join(binary) + "\n",
        out / "graded.qrels": "\n".join(graded) + "\n",
    }
    for path, text in files.items():
        write_text_atomic(path, text)
    return list(files)
