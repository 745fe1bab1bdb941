"""``judge sparsify`` from paths: `reljudge.analyses.sparsify.sparse_qrels.sparsified_agreement`
on a qrels file and a directory of runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from reljudge.analyses.sparsify.sparse_qrels import SparsifyReport, sparsified_agreement

if TYPE_CHECKING:
    from reljudge.analyses.inputs import Scores


def sparsify_paths(qrels: str | Path | Scores, runs: str | Path, **options) -> SparsifyReport:
    from reljudge.analyses.inputs import load_runs, read_human

    return sparsified_agreement(read_human(qrels), load_runs(runs), **options)
