"""reljudge: judge search results with LLMs by the published methods, and measure the labels.

The public API is re-exported here lazily, so `import reljudge` (and `judge --help`) stay fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from reljudge.version import __version__

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
    "to_qrels": "reljudge.io.qrels_formats",
    "to_dataframe": "reljudge.io.judgment_table",
    "to_ir_measures_qrels": "reljudge.io.qrels_formats",
    "to_ranx_qrels": "reljudge.io.qrels_formats",
    "judgments_from_qrels": "reljudge.io.qrels_formats",
    "Dataset": "reljudge.datasets",
    "load_dataset": "reljudge.datasets",
    "list_datasets": "reljudge.datasets",
    "RunConfig": "reljudge.run",
    "RunSummary": "reljudge.run",
    "run_job": "reljudge.run",
    "run_job_async": "reljudge.run",
    "get_judge": "reljudge.judges.registry",
    "available_judges": "reljudge.judges.registry",
    "get_prompt": "reljudge.prompts",
    "list_prompts": "reljudge.prompts",
    "PromptTemplate": "reljudge.prompts",
    "judgments_to_scores": "reljudge.judges.scoring",
    "score_sets": "reljudge.judges.scoring",
    "LLMClient": "reljudge.llm",
    "ClientConfig": "reljudge.llm",
}

if TYPE_CHECKING:  # the real names, for type checkers and editors (imported lazily at run time)
    from reljudge.datasets import Dataset, list_datasets, load_dataset
    from reljudge.errors import InputError
    from reljudge.io.corpus import Corpus, load_corpus
    from reljudge.io.judgment_table import to_dataframe
    from reljudge.io.judgments import JudgmentWriter, iter_judgments, load_judgments, read_judgments
    from reljudge.io.qrels_formats import judgments_from_qrels, to_ir_measures_qrels, to_qrels, to_ranx_qrels
    from reljudge.io.rundir import RunDir
    from reljudge.io.trec import Run, read_qrels, read_run, read_topics, write_qrels, write_run
    from reljudge.judges.registry import available_judges, get_judge
    from reljudge.judges.scoring import judgments_to_scores, score_sets
    from reljudge.llm import ClientConfig, LLMClient
    from reljudge.prompts import PromptTemplate, get_prompt, list_prompts
    from reljudge.records import Judgment, Provenance, Usage
    from reljudge.run import RunConfig, RunSummary, run_job, run_job_async


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'reljudge' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "__version__",
    "ClientConfig",
    "Corpus",
    "Dataset",
    "InputError",
    "Judgment",
    "JudgmentWriter",
    "LLMClient",
    "PromptTemplate",
    "Provenance",
    "Run",
    "RunConfig",
    "RunDir",
    "RunSummary",
    "Usage",
    "available_judges",
    "get_judge",
    "get_prompt",
    "iter_judgments",
    "judgments_from_qrels",
    "judgments_to_scores",
    "list_datasets",
    "list_prompts",
    "load_corpus",
    "load_dataset",
    "load_judgments",
    "read_judgments",
    "read_qrels",
    "read_run",
    "read_topics",
    "run_job",
    "run_job_async",
    "score_sets",
    "to_dataframe",
    "to_ir_measures_qrels",
    "to_qrels",
    "to_ranx_qrels",
    "write_qrels",
    "write_run",
]
