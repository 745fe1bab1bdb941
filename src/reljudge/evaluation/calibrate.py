"""``judge calibrate``: fit the mapping from a judge's scores to human grades on a few labelled
topics, and measure on the other topics what it gains over the default threshold
(`reljudge.metrics.calibration`)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.io.tables import json_ready

__all__ = ["calibrate_paths", "summary", "write_calibration"]


def _choose(sets: Sequence[Any], name: str | None) -> Any:
    if name is not None:
        found = [s for s in sets if s.name == name or s.name.endswith(f":{name}")]
        if not found:
            raise InputError(f"no score set {name!r} (the judgments give: {', '.join(s.name for s in sets)})")
        return found[0]
    if len(sets) > 1:
        raise InputError(
            f"the judgments give several score sets ({', '.join(s.name for s in sets)}); choose one with --set"
        )
    return sets[0]


def calibrate_paths(
    judgments: str | Path,
    *,
    qrels: str | Path | None = None,
    dataset: str | None = None,
    set_name: str | None = None,
    fit_fraction: float = 0.2,
    repeats: int = 50,
    seed: int = 0,
    human_threshold: float | None = None,
) -> tuple[Any, Any]:
    """(the judgment set, its `Calibration`) for ``judgments`` against the human labels."""
    from reljudge.analyses.inputs import load_human_labels, load_judgment_sets
    from reljudge.metrics.calibration import cross_validate

    human = load_human_labels(qrels, dataset, human_threshold=human_threshold)
    chosen = _choose(load_judgment_sets([judgments]), set_name)
    try:
        result = cross_validate(
            human.qrels,
            chosen.scores,
            human_threshold=human.human_threshold,
            fit_fraction=fit_fraction,
            repeats=repeats,
            seed=seed,
        )
    except ValueError as err:
        raise InputError(str(err)) from None
    result.summary["set"] = chosen.name
    result.summary["human_threshold"] = human.human_threshold
    return chosen, result


def _fmt(block: dict[str, float] | None) -> str:
    if not block or math.isnan(block["mean"]):
        return "-"
    return f"{block['mean']:.3f} [{block['low']:.3f}, {block['high']:.3f}]"


def summary(result: Any) -> str:
    s = result.summary
    return "\n".join(
        [
            f"{s['set']}: {result.pairs} labelled pairs on {result.topics} topics; fitted on {s['fit_topics']} "
            f"topics, judged on the other {s['held_out_topics']}, {s['repeats']} random splits "
            f"(mean [2.5 %, 97.5 %] over the splits; human relevant: grade >= {s['human_threshold']:g})",
            f"binary kappa, calibrated threshold {_fmt(s['threshold'])}: {_fmt(s['binary_calibrated'])}",
            f"binary kappa, default threshold ({s['default_threshold']}): {_fmt(s['binary_default'])}",
            f"gain (paired): {_fmt(s['binary_gain'])}",
            f"graded kappa, calibrated cut-points: {_fmt(s['graded_calibrated'])}; "
            f"as labelled: {_fmt(s['graded_default'])}",
        ]
    )


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
