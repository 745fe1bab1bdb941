"""Collections from ``ir_datasets`` (``--dataset irds:<id>``), read offline from its cache.

``read_irds(id)`` gives the topics (each query's text: ``default_text()``, else ``text``, else
``title``), the qrels, the grade scale from the dataset's qrels definitions and a lookup that reads
only the wanted passages from its docs store. Nothing is downloaded: while reljudge reads a
dataset, every network mirror of ir_datasets is blocked, so a file that is not yet in its cache
(``$IR_DATASETS_HOME``, default ``~/.ir_datasets``) is an `InputError` naming what is missing and
how to fetch it (``ir_datasets`` can download it once, on a machine that may, e.g. with
``python -c "import ir_datasets; ir_datasets.load('<id>').qrels_iter().__next__()"``, or the files
can be copied into that cache). ``ir_datasets`` is imported only here, when an ``irds:`` dataset
is named.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reljudge.errors import InputError

PREFIX = "irds:"


@dataclass
class IrdsCollection:
    """What reljudge reads of one ir_datasets dataset."""

    dataset_id: str
    topics: dict[str, str]
    qrels: dict[str, dict[str, int]] | None
    grade_labels: dict[int, str] = field(default_factory=dict)
    has_docs: bool = False
    lookup: Callable[[Collection[str]], dict[str, str]] | None = None
    documentation: str = ""


class _Blocked(Exception):
    """A download ir_datasets tried while reljudge reads offline."""

    def __init__(self, source: str) -> None:
        super().__init__(f"download blocked (reljudge reads ir_datasets offline): {source}")
        self.source = source


@contextlib.contextmanager
def offline(blocked: list[str]) -> Iterator[None]:
    """While inside: every ir_datasets network mirror raises `_Blocked` instead of connecting
    (the sources are appended to ``blocked``); local files and the cache are read as usual."""
    from ir_datasets.util import download

    classes: list[Any] = [  # the mirror classes, whose ``stream`` is replaced while inside
        cls
        for cls in vars(download).values()
        if isinstance(cls, type)
        and issubclass(cls, download.BaseDownload)
        and cls is not download.BaseDownload
        and cls.__name__ != "LocalDownload"
    ]

    def stop(self: Any) -> Any:
        source = str(getattr(self, "url", None) or getattr(self, "gdrive_id", None) or type(self).__name__)
        blocked.append(source)
        raise _Blocked(source)

    saved = {cls: cls.__dict__.get("stream") for cls in classes}
    for cls in classes:
        cls.stream = stop
    try:
        yield
    finally:
        for cls, original in saved.items():
            if original is None:
                delattr(cls, "stream")
            else:
                cls.stream = original


def _text(record: Any) -> str:
    for name in ("default_text",):
        method = getattr(record, name, None)
        if callable(method):
            with contextlib.suppress(Exception):
                return str(method())
    for name in ("text", "title", "body"):
        value = getattr(record, name, None)
        if isinstance(value, str):
            return value
    raise InputError(f"an ir_datasets record of type {type(record).__name__} has no text field")


def _load(dataset_id: str) -> Any:
    try:
        import ir_datasets
    except ImportError as err:  # a dependency, but stated clearly if an environment lacks it
        raise InputError(
            "--dataset irds:... needs the ir_datasets package (pip install ir_datasets)"
        ) from err
    try:
        return ir_datasets.load(dataset_id)
    except KeyError as err:
        raise InputError(f"ir_datasets has no dataset {dataset_id!r} (see https://ir-datasets.com)") from err


def _missing(dataset_id: str, what: str, blocked: list[str]) -> InputError:
    import ir_datasets

    home = ir_datasets.util.home_path()
    sources = ", ".join(dict.fromkeys(blocked)) or "a file"
    return InputError(
        f"irds:{dataset_id}: the {what} are not in the ir_datasets cache ({home}) and reljudge does not "
        f"download (it would fetch {sources}). Fetch them once where downloads are allowed, e.g. "
        f"`python -c \"import ir_datasets; next(ir_datasets.load('{dataset_id}').{what}_iter())\"`, "
        "or copy the cache directory here (IR_DATASETS_HOME points elsewhere)"
    )


def read_irds(dataset_id: str, *, topics: bool = True, qrels: bool = True) -> IrdsCollection:
    """The topics, qrels and a passage lookup of ``dataset_id`` (without the ``irds:`` prefix)."""
    ds = _load(dataset_id)
    blocked: list[str] = []
    topic_map: dict[str, str] = {}
    qrels_map: dict[str, dict[str, int]] | None = None
    with offline(blocked):
        if topics:
            if not ds.has_queries():
                raise InputError(f"irds:{dataset_id} has no queries")
            try:
                topic_map = {str(q.query_id): _text(q) for q in ds.queries_iter()}
            except InputError:
                raise
            except Exception as err:
                if blocked:
                    raise _missing(dataset_id, "queries", blocked) from err
                raise InputError(f"irds:{dataset_id}: reading its queries failed: {err}") from err
        if qrels and ds.has_qrels():
            qrels_map = {}
            try:
                for q in ds.qrels_iter():
                    qrels_map.setdefault(str(q.query_id), {})[str(q.doc_id)] = int(q.relevance)
            except Exception as err:
                if blocked:
                    raise _missing(dataset_id, "qrels", blocked) from err
                raise InputError(f"irds:{dataset_id}: reading its qrels failed: {err}") from err
    labels = {int(k): str(v) for k, v in (ds.qrels_defs() or {}).items()} if ds.has_qrels() else {}
    return IrdsCollection(
        dataset_id=dataset_id,
        topics=topic_map,
        qrels=qrels_map,
        grade_labels=labels,
        has_docs=bool(ds.has_docs()),
        lookup=(lambda docids: _passages(ds, dataset_id, docids)) if ds.has_docs() else None,
        documentation=f"ir_datasets {dataset_id} (https://ir-datasets.com)",
    )


def _passages(ds: Any, dataset_id: str, docids: Collection[str]) -> dict[str, str]:
    """The texts of ``docids`` found in the dataset's docs store (built by ir_datasets on first
    use, from files in its cache)."""
    blocked: list[str] = []
    with offline(blocked):
        try:
            store = ds.docs_store()
            found = store.get_many(list(docids))
        except Exception as err:
            if blocked:
                raise _missing(dataset_id, "docs", blocked) from err
            raise InputError(f"irds:{dataset_id}: reading its documents failed: {err}") from err
        texts = {str(docid): _text(doc) for docid, doc in found.items()}
        lookup = getattr(store, "lookup", None)
        with contextlib.suppress(Exception):  # release its memory maps now, not at exit
            lookup.close()  # type: ignore[union-attr]
    return texts


def grade_scale(
    labels: Mapping[int, str], qrels: Mapping[str, Mapping[str, float]] | None
) -> tuple[int, int | None, int]:
    """(min grade, max grade, relevant threshold) of a collection: from its qrels definitions, else
    from the grades in its qrels (truncated to whole grades, as for a dataset directory). The
    threshold is 1 on a binary scale, else ``min + 2`` (capped at the maximum): 2 on TREC DL's 0-3
    and 3 on ANTIQUE's 1-4, the conventions of those collections."""
    grades = set(labels) or {int(g) for docs in (qrels or {}).values() for g in docs.values()}
    if not grades:
        return 0, None, 1
    low, high = min(grades), max(grades)
    threshold = 1 if high - low <= 1 else min(low + 2, high)
    return low, high, threshold


def dataset_fields(
    dataset_id: str,
    topics: str | Path | None,
    qrels: str | Path | None,
    corpus: str | Path | None,
    runs: str | Path | None,
    passages: bool,
) -> dict[str, Any]:
    """The fields of the `reljudge.datasets.Dataset` of ``irds:<dataset_id>``; explicit files
    override its parts (a ``corpus`` file is read instead of the docs store)."""
    from reljudge.io.corpus import load_corpus
    from reljudge.io.trec import read_qrels, read_topics

    found = read_irds(dataset_id, topics=topics is None, qrels=qrels is None)
    paths: dict[str, Path] = {}
    for key, value in (("topics", topics), ("qrels", qrels), ("corpus", corpus), ("runs", runs)):
        if value is not None:
            paths[key] = Path(value)
    if "runs" in paths and not paths["runs"].is_dir():
        raise InputError("runs: expected a directory of run files", paths["runs"])
    qrels_map = read_qrels(qrels) if qrels is not None else found.qrels
    low, high, threshold = grade_scale(found.grade_labels if qrels is None else {}, qrels_map)
    return {
        "name": PREFIX + dataset_id,
        "topics": read_topics(topics) if topics is not None else found.topics,
        "paths": paths,
        "runs_dir": paths.get("runs"),
        "description": found.documentation,
        "min_grade": low,
        "max_grade": high,
        "relevant_threshold": threshold,
        "grade_labels": found.grade_labels,
        "passage_lookup": found.lookup,
        "_qrels": qrels_map,
        "_corpus": load_corpus(paths["corpus"]) if "corpus" in paths and passages else None,
    }
