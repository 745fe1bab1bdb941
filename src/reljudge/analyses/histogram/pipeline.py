"""``judge histogram`` from paths: DO and HSA of every run (`reljudge.analyses.histogram.do_hsa`)
from a qrels file and a directory of TREC runs or a file of scores."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from reljudge.analyses.histogram.do_hsa import HistogramReport, do_hsa_runs
from reljudge.analyses.histogram.files import read_system_scores

if TYPE_CHECKING:
    from reljudge.analyses.inputs import Scores


def histogram_paths(
    qrels: str | Path | Scores,
    runs: str | Path | None = None,
    *,
    scores: str | Path | None = None,
    **options,
) -> HistogramReport:
    """`do_hsa_runs` on a qrels file and a directory of TREC runs (or a ``system qid docid score``
    file with ``scores``: each system's scored pairs are its "run")."""
    from reljudge.analyses.inputs import read_human
    from reljudge.errors import InputError

    if (runs is None) == (scores is None):
        raise InputError("give exactly one of --runs DIR or --scores FILE")
    human = read_human(qrels)
    run_map: Mapping[str, Mapping[str, Mapping[str, float]]]
    if runs is not None:
        from reljudge.analyses.inputs import load_runs

        run_map = load_runs(runs)
    else:
        assert scores is not None  # exactly one of the two, checked above
        run_map = read_system_scores(scores)
    return do_hsa_runs(human, run_map, **options)
