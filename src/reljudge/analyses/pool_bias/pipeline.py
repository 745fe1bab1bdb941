"""``judge pool-bias`` from paths: the simulated pooling bias
(`reljudge.analyses.pool_bias.simulation`) of a qrels file, a directory of runs and a run-type
file."""

from __future__ import annotations

from pathlib import Path

from reljudge.analyses.pool_bias.simulation import PoolBiasReport, simulate


def pool_bias_paths(qrels: str | Path, runs: str | Path, run_info: str | Path, **options) -> PoolBiasReport:
    """`simulate` on a qrels file, a directory of runs and a run-type file. Runs listed in the
    run-type file but absent from the directory are noted in the settings (``listed_not_found``)."""
    from reljudge.analyses.inputs import load_runs
    from reljudge.io.runinfo import read_run_info
    from reljudge.io.trec import read_qrels

    human = read_qrels(qrels)
    run_map = load_runs(runs)
    info = read_run_info(run_info)
    report = simulate(human, run_map, info, **options)
    report.settings["listed_not_found"] = sorted(r for r in info if r not in run_map)
    report.settings["run_info"] = str(run_info)
    return report
