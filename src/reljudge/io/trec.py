"""TREC files: topics (``qid<TAB>query``), qrels (``qid iter docid grade``) and runs
(``qid Q0 docid rank score runid``), and how a score becomes a qrels grade (the float policy).

Readers are tolerant of layout (any run of spaces or tabs between columns, blank lines,
trailing whitespace, CRLF, gzip by the ``.gz`` suffix) and strict about content: a wrong
column count, a non-numeric grade or score, a duplicate entry, bytes that are not UTF-8, or
an empty file raise `InputError` naming ``file:line``. Writers replace files atomically.

Float labels and the ``float_policy``
-------------------------------------
Several methods give non-integer labels (EXAM means, nugget scores). trec_eval parses the
relevance column as an integer and ranx and ir_measures (pytrec_eval) *truncate* floats, so
0.9 silently becomes 0. `qrels_topics` (and `reljudge.io.qrels_formats.to_qrels`) therefore
make the choice explicit:

- ``"round"`` (default): round half up to the nearest integer (0.5 -> 1, 2.5 -> 3);
- ``"scale"``: multiply by ``scale`` (default 100) and round half up: keeps the order of
  fractional scores (0.3 -> 30) for gain-based measures, at the cost of a new gain scale;
- ``"keep"``: keep floats as they are (fine for rank-based tools such as compatibility, and
  for reljudge's own metrics); a warning is logged when a label is not integral, because
  trec_eval / ranx would truncate it.

Integral floats (2.0) always become ints.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Literal

from reljudge.errors import InputError
from reljudge.io.atomic import atomic_write
from reljudge.io.lines import read_lines

logger = logging.getLogger(__name__)

Grade = int | float
Qrels = dict[str, dict[str, Grade]]
Topics = dict[str, str]
OnDuplicate = Literal["error", "max", "last"]
FloatPolicy = Literal["round", "scale", "keep"]
FLOAT_POLICIES: tuple[str, ...] = ("round", "scale", "keep")


class Run(dict[str, dict[str, float]]):
    """A system run: ``{qid: {docid: score}}`` in file order, with the run's name."""

    def __init__(self, data: Mapping[str, Mapping[str, float]] | None = None, name: str = ""):
        super().__init__({qid: dict(docs) for qid, docs in (data or {}).items()})
        self.name = name

    def ranked(self, qid: str) -> list[str]:
        """Docids of a topic in trec_eval order: score descending, ties by docid descending."""
        docs = self.get(qid, {})
        return sorted(docs, key=lambda d: (docs[d], d), reverse=True)


#: the shared line reader under its former private name, kept for code that imported it
_lines = read_lines


def _number(text: str, what: str, path: Path, line: int) -> Grade:
    value: Grade
    try:
        value = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            raise InputError(f"{what} {text!r} is not a number", path, line) from None
    if not math.isfinite(value):
        raise InputError(f"{what} {text!r} is not a finite number", path, line)
    return value


def read_topics(path: str | Path) -> Topics:
    """Read ``qid<TAB>query`` lines (a query may contain spaces; the first tab splits)."""
    path = Path(path)
    topics: Topics = {}
    for number, line in read_lines(path):
        if not line.strip():
            continue
        if "\t" in line:
            qid, _, query = line.partition("\t")
        else:
            parts = line.split(None, 1)
            if len(parts) != 2:
                raise InputError("expected 'qid<TAB>query'", path, number)
            qid, query = parts
        qid, query = qid.strip(), query.strip()
        if not qid or not query:
            raise InputError("expected 'qid<TAB>query' with a non-empty qid and query", path, number)
        if qid in topics:
            raise InputError(f"duplicate topic id {qid!r}", path, number)
        topics[qid] = query
    if not topics:
        raise InputError("no topics in file", path)
    return topics


def read_qrels(
    path: str | Path, *, on_duplicate: OnDuplicate = "error", integer_grades: bool = False
) -> Qrels:
    """Read qrels ``qid iter docid grade``; grades stay int when written as ints, else float.

    ``on_duplicate`` decides what a repeated (qid, docid) does: raise, keep the max, or keep
    the last. ``integer_grades=True`` rejects float grades (as trec_eval would truncate them).
    """
    path = Path(path)
    qrels: Qrels = {}
    for number, line in read_lines(path):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 4:
            raise InputError(f"expected 4 columns 'qid iter docid grade', found {len(parts)}", path, number)
        qid, _, docid, grade_text = parts
        grade = _number(grade_text, "grade", path, number)
        if integer_grades and not isinstance(grade, int):
            raise InputError(f"grade {grade_text!r} is not an integer", path, number)
        docs = qrels.setdefault(qid, {})
        if docid in docs:
            if on_duplicate == "error":
                raise InputError(f"duplicate judgment for topic {qid!r}, document {docid!r}", path, number)
            if on_duplicate == "max":
                grade = max(grade, docs[docid])
        docs[docid] = grade
    if not qrels:
        raise InputError("no judgments in file", path)
    return qrels


def read_run(
    path: str | Path,
    *,
    topics: Iterable[str] | None = None,
    name: str | None = None,
    top_k: int | None = None,
) -> Run:
    """Read a run ``qid Q0 docid rank score runid``. With ``topics``, an unknown qid is an error.

    With ``top_k``, only each topic's first ``top_k`` documents in trec_eval order (score
    descending, ties by docid descending: `Run.ranked`) are kept, the file streamed: memory
    holds ``top_k`` documents per topic and a hash (8 bytes) per line, which still finds a
    document listed twice for a topic (the same error, with its line)."""
    path = Path(path)
    if top_k is not None:
        return _read_run_top(path, topics, name, top_k)
    known = set(topics) if topics is not None else None
    run = Run(name=name or "")
    for number, line in read_lines(path):
        row = _run_line(line, path, number, known)
        if row is None:
            continue
        qid, docid, score, runid = row
        docs = run.setdefault(qid, {})
        if docid in docs:
            raise InputError(f"document {docid!r} appears twice for topic {qid!r}", path, number)
        docs[docid] = score
        if not run.name:
            run.name = runid
    if not run:
        raise InputError("no ranked documents in file", path)
    return run


def _run_line(
    line: str, path: Path, number: int, known: set[str] | None
) -> tuple[str, str, float, str] | None:
    """(qid, docid, score, runid) of one run line, None for a blank one."""
    parts = line.split()
    if not parts:
        return None
    if len(parts) != 6:
        raise InputError(
            f"expected 6 columns 'qid Q0 docid rank score runid', found {len(parts)}", path, number
        )
    qid, _, docid, rank_text, score_text, runid = parts
    try:
        int(rank_text)
    except ValueError:
        raise InputError(f"rank {rank_text!r} is not an integer", path, number) from None
    score = float(_number(score_text, "score", path, number))
    if known is not None and qid not in known:
        raise InputError(f"topic {qid!r} is not among the topics", path, number)
    return qid, docid, score, runid


def _read_run_top(path: Path, topics: Iterable[str] | None, name: str | None, top_k: int) -> Run:
    import heapq
    from array import array

    known = set(topics) if topics is not None else None
    heaps: dict[str, list[tuple[float, str]]] = {}
    hashes: dict[str, array[int]] = {}
    runname = name or ""
    for number, line in read_lines(path, stream=True):
        row = _run_line(line, path, number, known)
        if row is None:
            continue
        qid, docid, score, runid = row
        runname = runname or runid
        heap = heaps.setdefault(qid, [])
        hashes.setdefault(qid, array("q")).append(hash(docid))
        if len(heap) < top_k:
            heapq.heappush(heap, (score, docid))
        elif (score, docid) > heap[0]:
            heapq.heapreplace(heap, (score, docid))
    if not heaps:
        raise InputError("no ranked documents in file", path)
    for qid, found in hashes.items():
        if len(set(found)) != len(found):  # perhaps a document twice (or two equal hashes)
            _check_twice(path, qid, known)
    del hashes
    return Run({qid: {d: s for s, d in sorted(heap, reverse=True)} for qid, heap in heaps.items()}, runname)


def _check_twice(path: Path, qid: str, known: set[str] | None) -> None:
    """Raise the error of `read_run` for a document listed twice for ``qid``, if there is one."""
    seen: set[str] = set()
    for number, line in read_lines(path, stream=True):
        row = _run_line(line, path, number, known)
        if row is None or row[0] != qid:
            continue
        if row[1] in seen:
            raise InputError(f"document {row[1]!r} appears twice for topic {qid!r}", path, number)
        seen.add(row[1])


#: file-name endings dropped to name a run after its file (``bm25.run.gz`` -> ``bm25``)
RUN_FILE_SUFFIXES: tuple[str, ...] = (".run", ".trec", ".txt", ".tsv", ".res")


def run_files(directory: str | Path) -> list[Path]:
    """The run files of a directory: its regular, non-hidden files, sorted by name."""
    return sorted(p for p in Path(directory).iterdir() if p.is_file() and not p.name.startswith("."))


def _file_run_name(path: Path) -> str:
    name = path.name
    if name.endswith(".gz") and len(name) > 3:
        name = name[:-3]
    for suffix in RUN_FILE_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def read_runs_dir(directory: str | Path, *, topics: Iterable[str] | None = None) -> dict[str, Run]:
    """Every run file of a directory (`run_files`, ``.gz`` allowed), keyed by run name.

    A run is named by its runid column; when another run already has that name, by its file
    name without ``.gz`` and a `RUN_FILE_SUFFIXES` ending; two runs that still share a name are
    an `InputError`, as are a path that is not a directory and a directory without files.
    With ``topics``, a topic id outside them is an `InputError` naming ``file:line``.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError("expected a directory of TREC run files", directory)
    known = set(topics) if topics is not None else None
    runs: dict[str, Run] = {}
    for path in run_files(directory):
        run = read_run(path, topics=known)
        name = run.name or _file_run_name(path)
        if name in runs:
            name = _file_run_name(path)
        if name in runs:
            raise InputError(f"two runs are named {name!r}", path)
        runs[name] = run
    if not runs:
        raise InputError("no run files in directory", directory)
    return runs


def _round_half_up(value: float) -> int:
    return int(math.floor(value + 0.5))


def apply_float_policy(grade: Grade, policy: FloatPolicy = "round", scale: float = 100.0) -> Grade:
    """One label under a float policy (see the module docstring)."""
    if policy not in FLOAT_POLICIES:
        raise InputError(f"unknown float policy {policy!r} (choose one of {', '.join(FLOAT_POLICIES)})")
    if isinstance(grade, bool):
        grade = int(grade)
    if policy == "scale":
        return _round_half_up(grade * scale)
    if isinstance(grade, int):
        return grade
    if grade.is_integer():
        return int(grade)
    if policy == "round":
        return _round_half_up(grade)
    return grade


def qrels_topics(
    scores: Mapping[str, Mapping[str, Grade]],
    policy: FloatPolicy = "round",
    *,
    scale: float = 100.0,
    leave_out: Collection[tuple[str, str]] = (),
) -> Iterator[tuple[str, dict[str, Grade]]]:
    """Document scores ``{qid: {docid: score}}`` as qrels grades (``policy``, see the module
    docstring), topic by topic in their order (one topic's grades at a time: for `write_qrels`).
    ``leave_out``: (qid, docid) of documents to leave out; a topic left without documents is then
    left out too. With ``"keep"``, non-integral grades are counted and warned about at the end."""
    if policy not in FLOAT_POLICIES:
        raise InputError(f"unknown float policy {policy!r} (choose one of {', '.join(FLOAT_POLICIES)})")
    fractional = 0
    for qid, docs in scores.items():
        grades = {
            str(d): apply_float_policy(g, policy, scale) for d, g in docs.items() if (qid, d) not in leave_out
        }
        if leave_out and not grades:
            continue
        if policy == "keep":
            fractional += sum(1 for g in grades.values() if isinstance(g, float))
        yield str(qid), grades
    if fractional:
        logger.warning(
            "%d label(s) are not integers and are kept as floats: trec_eval, ranx and "
            "ir_measures truncate them to int (use --float round or scale for those tools)",
            fractional,
        )


def _grade_text(grade: Grade) -> str:
    if isinstance(grade, float) and grade.is_integer():
        return str(int(grade))
    return str(grade)


def write_qrels(
    qrels: Mapping[str, Mapping[str, Grade]] | Iterable[tuple[str, Mapping[str, Grade]]],
    path: str | Path,
    *,
    iteration: str = "0",
) -> int:
    """Write qrels atomically, topics and documents in the order given: a ``{qid: {docid:
    grade}}`` mapping, or ``(qid, {docid: grade})`` pairs (one topic held at a time). Returns
    the number of lines written."""
    topics = qrels.items() if isinstance(qrels, Mapping) else qrels
    lines = 0
    with atomic_write(path) as handle:
        for qid, docs in topics:
            for docid, grade in docs.items():
                handle.write(f"{qid} {iteration} {docid} {_grade_text(grade)}\n")
            lines += len(docs)
    return lines


def write_run(run: Mapping[str, Mapping[str, float]], path: str | Path, *, name: str | None = None) -> None:
    """Write a run atomically, each topic ranked by score descending (ties by docid descending)."""
    runid = name or getattr(run, "name", "") or "reljudge"
    with atomic_write(path) as handle:
        for qid, docs in run.items():
            ranked = sorted(docs, key=lambda d: (docs[d], d), reverse=True)
            for rank, docid in enumerate(ranked, start=1):
                handle.write(f"{qid} Q0 {docid} {rank} {docs[docid]} {runid}\n")


def write_topics(topics: Mapping[str, str], path: str | Path) -> None:
    with atomic_write(path) as handle:
        for qid, query in topics.items():
            handle.write(f"{qid}\t{query}\n")
