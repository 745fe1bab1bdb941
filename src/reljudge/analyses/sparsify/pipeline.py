"""``judge sparsify`` from paths: `reljudge.analyses.sparsify.sparse_qrels.sparsified_agreement`
on a qrels file and a directory of runs."""

from __future__ import annotations

from pathlib import Path

from reljudge.analyses.sparsify.sparse_qrels import SparsifyReport, sparsified_agreement


def sparsify_paths(qrels: str | Path, runs: str | Path, **options) -> SparsifyReport:
    from reljudge.analyses.inputs import load_runs
    from reljudge.io.trec import read_qrels

    return sparsified_agreement(read_qrels(qrels), load_runs(runs), **options)
