"""``judge evaluate`` from paths: the human labels, the judgment sets and the runs read
(`reljudge.analyses.inputs`), then the comparison (`reljudge.analyses.evaluate.comparison`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reljudge.analyses.evaluate.comparison import Report, evaluate

__all__ = ["evaluate_paths"]


def evaluate_paths(
    judgments: Sequence[str | Path],
    *,
    qrels: str | Path | None = None,
    dataset: str | None = None,
    runs: str | Path | None = None,
    missing_zero: Sequence[str] = (),
    unacceptable: float | None = None,
    human_threshold: float | None = None,
    relevance_level: int | None = None,
    plot: bool = False,
    answers: Sequence[Path] = (),
    vectors: Mapping[str, Any] | None = None,
    **options: Any,
) -> Report:
    """``judge evaluate`` from paths: the human labels from ``qrels`` or a ``dataset`` (exactly
    one; a dataset also gives the grade scale), the judgment sets, the runs (optional); then
    `evaluate` with ``options``. Binary measures count ``grade >= relevance_level`` as relevant:
    by default the level the dataset declares, else trec_eval's default 1. With ``plot``, a missing matplotlib is an error now, not after
    the evaluation. With ``answers`` (answer files) and ``vectors`` (the options of
    `reljudge.analyses.answers.pipeline.answer_ranking`: encoder or embeddings, ...), the report
    also ranks the generators and the runs together."""
    from reljudge.analyses.inputs import load_human_labels, load_judgment_sets, load_runs

    if plot:
        from reljudge.io.figures import pyplot

        pyplot()
    human = load_human_labels(qrels, dataset, unacceptable=unacceptable, human_threshold=human_threshold)
    sets = load_judgment_sets(judgments, missing_zero=missing_zero)
    run_map = load_runs(runs) if runs is not None else None
    if relevance_level is not None:
        level, source = relevance_level, "given with --rel-threshold"
    elif human.relevance_level is not None:
        level, source = human.relevance_level, f"declared by dataset {human.dataset}"
    else:
        level, source = 1, "trec_eval's default: no dataset declares a level"
    report = evaluate(
        human.qrels,
        sets,
        run_map,
        unacceptable=human.unacceptable,
        human_threshold=human.human_threshold,
        relevance_level=level,
        relevance_level_source=source,
        **options,
    )
    if answers:
        from reljudge.analyses.answers.pipeline import answer_ranking

        report.system_ranking = answer_ranking(human.qrels, answers, run_map, **(vectors or {}))
    return report
