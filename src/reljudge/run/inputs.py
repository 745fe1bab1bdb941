"""The data a job reads: topics, qrels and passages (a dataset or explicit files), and the
resources the judge takes (a question bank)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reljudge.errors import InputError
from reljudge.run.config import RESOURCE_FIELDS, RunConfig

if TYPE_CHECKING:
    from reljudge.io.pairs import PairCategories, Pairs
    from reljudge.judges.base import Judge


@dataclass
class ResolvedInputs:
    """The data a job reads, before pooling. ``corpus`` holds every passage, or, once
    `reljudge.run.passages.read_passages` ran, only the pooled ones (read from ``dataset``)."""

    name: str
    topics: Mapping[str, str]
    qrels: Mapping[str, Mapping[str, int | float]] | None
    corpus: Mapping[str, str]
    sources: dict[str, str] = field(default_factory=dict)  # what was read from where
    nonrelevant_grade: int = 0  # the lowest grade of the human scale (1 on ANTIQUE)
    dataset: Any = None  # the `reljudge.datasets.Dataset` the inputs come from


def resolve_inputs(config: RunConfig, *, passages: bool = True, need_corpus: bool = True) -> ResolvedInputs:
    """Load the dataset named by ``config.dataset`` and/or the explicit files (which override).

    ``passages=False`` leaves the passage texts unread (``corpus`` is empty): a job builds its
    pool first and then reads only the pooled passages (`reljudge.run.passages.read_passages`).
    ``need_corpus=False`` accepts inputs without passage texts (a judge that reads none)."""
    from reljudge.datasets import load_dataset

    if config.dataset is None and config.topics is None:
        raise InputError("no input: give --dataset NAME|DIR, or --topics FILE with --qrels and --corpus")
    data = load_dataset(
        config.dataset, topics=config.topics, qrels=config.qrels, corpus=config.corpus, passages=passages
    )
    if need_corpus and not data.has_corpus:
        raise InputError(f"dataset {data.name!r} has no passage texts: give --corpus FILE")
    return ResolvedInputs(
        name=data.name if config.dataset is not None else dataset_name(config),
        topics=data.topics,
        qrels=data.qrels if data.has_qrels else None,
        corpus=data.corpus if passages else {},
        sources={k: str(v) for k, v in data.paths.items()},
        nonrelevant_grade=data.min_grade,
        dataset=data,
    )


class SharedInputs:
    """Inputs that many jobs on the same data share (a sweep's cells): each dataset loaded and
    resolved once (`resolve`), each set of wanted passages read once (`passages`), each pairs
    file read once (`pairs`). The topics, qrels and pairs mappings are shared (read-only); each
    job gets its own `ResolvedInputs` shell, so that reading its passages sets only its own
    ``corpus``."""

    def __init__(self, said: set[str] | None = None) -> None:
        self._inputs: dict[tuple[Any, ...], ResolvedInputs] = {}
        self._passages: dict[tuple[Any, ...], Mapping[str, str]] = {}
        self._pairs: dict[Path, tuple[Pairs, PairCategories]] = {}
        self._said: set[str] = said if said is not None else set()  # shared with the caller's

    def first_time(self, note: str) -> bool:
        """Whether ``note`` (a warning about a model's price, say) was not said for an earlier
        job: the jobs on the same data say it once."""
        new = note not in self._said
        self._said.add(note)
        return new

    def resolve(self, config: RunConfig) -> ResolvedInputs:
        """`resolve_inputs(config, passages=False)`, once per dataset and explicit files."""
        from dataclasses import replace

        key = (config.dataset, config.topics, config.qrels, config.corpus)
        if key not in self._inputs:
            self._inputs[key] = resolve_inputs(config, passages=False)
        base = self._inputs[key]
        return replace(base, corpus={}, sources=dict(base.sources))

    def passages(self, source: Any, wanted: frozenset[str], read: Any) -> dict[str, str]:
        """``read()`` (the wanted passages of ``source``, a dataset or corpus), once per source
        and set of docids; a copy of the ``{docid: text}`` each time (a job may cut texts)."""
        key = (id(source), wanted)
        if key not in self._passages:
            self._passages[key] = read()
        return dict(self._passages[key])

    def pairs(self, path: Path) -> tuple[Pairs, PairCategories]:
        """`reljudge.io.pairs.read_pairs` of ``path``, once per file (the same pairs file of a
        dataset is every pairwise cell's): shared, to be read and not changed."""
        from reljudge.io.pairs import read_pairs

        key = Path(path).resolve()
        if key not in self._pairs:
            self._pairs[key] = read_pairs(path)
        return self._pairs[key]


def dataset_name(config: RunConfig) -> str:
    """The name of a job's data: the dataset's, or the directory of an explicit topics file."""
    if config.dataset is not None:
        path = Path(config.dataset)
        return path.name if path.exists() else config.dataset
    assert config.topics is not None
    parent = config.topics.resolve().parent.name
    return parent or config.topics.stem


def load_resources(config: RunConfig, judge: Judge | type[Judge]) -> dict[str, Any]:
    """The resources the run gives the judge (`reljudge.judges.base.Resource`), read from the
    files the options name (``--question-bank FILE``), or ``dataset`` for the dataset's own copy.
    An option the judge takes no resource for is bad input."""
    given = {name: getattr(config, name) for name in RESOURCE_FIELDS if getattr(config, name) is not None}
    declared = {r.name: r for r in judge.resources}
    resources: dict[str, Any] = {}
    for name, value in given.items():
        option = "--" + name.replace("_", "-")
        resource = declared.get(name)
        if resource is None:
            from reljudge.judges.registry import registered

            takers = [
                n for n, cls in sorted(registered().items()) if any(r.name == name for r in cls.resources)
            ]
            raise InputError(
                f"{option} is for --method {' or '.join(takers) or '(none)'}, not {config.method!r}"
            )
        if value == "dataset":
            from reljudge.datasets import load_dataset

            if config.dataset is None:
                raise InputError(f"{option} dataset needs --dataset")
            path = load_dataset(config.dataset).paths.get(resource.dataset_file or name)
            if path is None:
                raise InputError(
                    f"dataset {config.dataset!r} has no {name.replace('_', ' ')}; give {option} FILE"
                )
        elif isinstance(value, list):  # several files (--answers A B): the reader takes them all
            resources[name] = resource.read([Path(v) for v in value])
            continue
        else:
            path = Path(value)
        settings = {} if isinstance(judge, type) else {o: getattr(judge, o) for o in resource.options}
        resources[name] = resource.read(path, **settings)
    return resources
