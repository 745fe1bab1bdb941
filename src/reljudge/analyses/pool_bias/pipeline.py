"""``judge pool-bias`` from paths: the simulated pooling bias
(`reljudge.analyses.pool_bias.simulation`) of a qrels file, a directory of runs and a run-type
file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from reljudge.analyses.pool_bias.simulation import PoolBiasReport, simulate

if TYPE_CHECKING:
    from reljudge.analyses.inputs import Scores


def pool_bias_paths(
    qrels: str | Path | Scores, runs: str | Path, run_info: str | Path, **options
) -> PoolBiasReport:
    """`simulate` on a qrels file, a directory of runs and a run-type file. Runs listed in the
    run-type file but absent from the directory are noted in the settings (``listed_not_found``)."""
    from reljudge.analyses.inputs import load_runs, read_human
    from reljudge.io.runinfo import read_run_info

    human = read_human(qrels)
    run_map = load_runs(runs)
    info = read_run_info(run_info)
    report = simulate(human, run_map, info, **options)
    report.settings["listed_not_found"] = sorted(r for r in info if r not in run_map)
    report.settings["run_info"] = str(run_info)
    return report
