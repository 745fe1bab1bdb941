"""reljudge: judge search results with LLMs by the published methods, and measure the labels.

The public API is re-exported here lazily, so `import reljudge` (and `judge --help`) stay fast.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# name -> module that defines it
_EXPORTS: dict[str, str] = {
    "Judgment": "reljudge.records",
    "Usage": "reljudge.records",
    "Provenance": "reljudge.records",
    "InputError": "reljudge.errors",
    # data: files, datasets, run directories, export
    "read_topics": "reljudge.io.trec",
    "read_qrels": "reljudge.io.trec",
    "read_run": "reljudge.io.trec",
    "write_qrels": "reljudge.io.trec",
    "write_run": "reljudge.io.trec",
    "Run": "reljudge.io.trec",
    "Corpus": "reljudge.io.corpus",
    "load_corpus": "reljudge.io.corpus",
    "JudgmentWriter": "reljudge.io.judgments",
    "read_judgments": "reljudge.io.judgments",
    "iter_judgments": "reljudge.io.judgments",
    "load_judgments": "reljudge.io.judgments",
    "RunDir": "reljudge.io.rundir",
    "to_qrels": "reljudge.io.export",
    "to_dataframe": "reljudge.io.export",
    "to_ir_measures_qrels": "reljudge.io.export",
    "to_ranx_qrels": "reljudge.io.export",
    "judgments_from_qrels": "reljudge.io.export",
    "Dataset": "reljudge.datasets",
    "load_dataset": "reljudge.datasets",
    "list_datasets": "reljudge.datasets",
    "RunConfig": "reljudge.runner",
    "RunSummary": "reljudge.runner",
    "run_job": "reljudge.runner",
    "run_job_async": "reljudge.runner",
    "get_judge": "reljudge.judges.base",
    "available_judges": "reljudge.judges.base",
    "get_prompt": "reljudge.prompts",
    "list_prompts": "reljudge.prompts",
    "PromptTemplate": "reljudge.prompts",
    "judgments_to_scores": "reljudge.aggregation.qrels",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'reljudge' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = ["__version__", *_EXPORTS]
