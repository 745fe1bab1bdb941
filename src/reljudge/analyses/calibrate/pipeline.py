"""``judge calibrate`` from paths: the human labels and the chosen judgment set read, then the
mapping from the judge's scores to human grades fitted on a few labelled topics and measured on
the other topics (`reljudge.analyses.calibrate.calibration`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reljudge.errors import InputError

__all__ = ["calibrate_paths"]


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
    from reljudge.analyses.calibrate.calibration import cross_validate
    from reljudge.analyses.inputs import load_human_labels, load_judgment_sets

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
