"""reljudge: judge search results with LLMs by the published methods, and measure the labels.

The public API is re-exported here lazily, so `import reljudge` (and `judge --help`) stay fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from reljudge.version import __version__

#: The public names, each with the module it is imported from: the one list of the façade. It drives
#: the lazy loading (``__getattr__``), ``__all__`` and ``dir()``; the imports under TYPE_CHECKING
#: below repeat it for type checkers (tests/test_facade.py checks that the two agree).
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

if TYPE_CHECKING:  # the same names for type checkers and editors ("X as X": exported)
    from reljudge.datasets import Dataset as Dataset
    from reljudge.datasets import list_datasets as list_datasets
    from reljudge.datasets import load_dataset as load_dataset
    from reljudge.errors import InputError as InputError
    from reljudge.io.corpus import Corpus as Corpus
    from reljudge.io.corpus import load_corpus as load_corpus
    from reljudge.io.judgment_table import to_dataframe as to_dataframe
    from reljudge.io.judgments import JudgmentWriter as JudgmentWriter
    from reljudge.io.judgments import iter_judgments as iter_judgments
    from reljudge.io.judgments import load_judgments as load_judgments
    from reljudge.io.judgments import read_judgments as read_judgments
    from reljudge.io.qrels_formats import judgments_from_qrels as judgments_from_qrels
    from reljudge.io.qrels_formats import to_ir_measures_qrels as to_ir_measures_qrels
    from reljudge.io.qrels_formats import to_qrels as to_qrels
    from reljudge.io.qrels_formats import to_ranx_qrels as to_ranx_qrels
    from reljudge.io.rundir import RunDir as RunDir
    from reljudge.io.trec import Run as Run
    from reljudge.io.trec import read_qrels as read_qrels
    from reljudge.io.trec import read_run as read_run
    from reljudge.io.trec import read_topics as read_topics
    from reljudge.io.trec import write_qrels as write_qrels
    from reljudge.io.trec import write_run as write_run
    from reljudge.judges.registry import available_judges as available_judges
    from reljudge.judges.registry import get_judge as get_judge
    from reljudge.judges.scoring import judgments_to_scores as judgments_to_scores
    from reljudge.judges.scoring import score_sets as score_sets
    from reljudge.llm import ClientConfig as ClientConfig
    from reljudge.llm import LLMClient as LLMClient
    from reljudge.prompts import PromptTemplate as PromptTemplate
    from reljudge.prompts import get_prompt as get_prompt
    from reljudge.prompts import list_prompts as list_prompts
    from reljudge.records import Judgment as Judgment
    from reljudge.records import Provenance as Provenance
    from reljudge.records import Usage as Usage
    from reljudge.run import RunConfig as RunConfig
    from reljudge.run import RunSummary as RunSummary
    from reljudge.run import run_job as run_job
    from reljudge.run import run_job_async as run_job_async


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'reljudge' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = ["__version__", *_EXPORTS]
