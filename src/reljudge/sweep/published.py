"""Published prompt-sensitivity judgments (``judgments.tar.gz``) as sweep cells.

Layout of the release (Arabzadeh & Clarke, SIGIR 2025 short paper; see
``../shared/data/README.md``), in a ``.tar.gz`` or an extracted directory::

    <model>/<binary|graded|pairwise>/<model>_<task>_dl<yy>_<promptid>.txt

- binary and graded files are qrels lines ``qid 0 docid label``. The release was reduced to one
  integer per answer by unreleased cleaning code and keeps some residue (llama binary ``9``,
  graded ``4``-``9``): a label outside {0, 1} (binary) or {0..3} (graded) counts as *invalid*
  (a parse failure), never as a label;
- pairwise files are lines ``qid pairtype doc1 doc2 agree|tie|disagree``, already alignment
  outcomes against the human categories (``pairtype`` ``mid_top`` = Best vs Acceptable,
  ``low_top`` = Best vs Unacceptable, ``low_mid`` = Acceptable vs Unacceptable).

Prompt ids 4, 6, 13 (human) and 23, 27, 30 (LLM) were excluded by the authors (no or broken
placeholders, a content-filtered prompt); some files of them are in the release for mistral and
llama3.2. `read_published` leaves them out unless ``exclude=()`` is given.
"""

from __future__ import annotations

import re
import sys
import tarfile
from collections.abc import Callable, Collection, Iterator, Mapping
from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.io.lines import loads_json
from reljudge.sweep.labels import PAIR_TYPES, CellLabels, pair_key

EXCLUDED_BY_AUTHORS: frozenset[str] = frozenset({"4", "6", "13", "23", "27", "30"})
VALID_LABELS: dict[str, frozenset[str]] = {"binary": frozenset("01"), "graded": frozenset("0123")}
_NAME = re.compile(
    r"^(?P<model>.+)_(?P<task>binary|graded|pairwise)_(?P<ds>dl\d+)_(?P<pid>[^_/]+)\.txt$", re.IGNORECASE
)


def _iter_files(path: Path) -> Iterator[tuple[str, bytes]]:
    """(relative path, bytes) of every ``.txt`` member of the tarball or directory, one member
    at a time (the tarball is streamed: read once, in order, never extracted)."""
    if path.is_dir():
        for file in sorted(path.rglob("*.txt")):
            yield file.relative_to(path).as_posix(), file.read_bytes()
        return
    if not path.exists():
        raise InputError("file not found", path)
    try:
        with tarfile.open(path, "r:*") as tar:
            for member in tar:
                if member.isfile() and member.name.endswith(".txt"):
                    handle = tar.extractfile(member)
                    if handle is not None:
                        yield member.name.removeprefix("./"), handle.read()
    except tarfile.TarError as err:
        raise InputError(f"not a readable tar archive: {err}", path) from None


def is_published_layout(path: Path) -> bool:
    """Whether ``path`` looks like the published release (a tarball, or model/task/*.txt dirs)."""
    if path.is_file():
        return path.name.endswith((".tar.gz", ".tgz", ".tar"))
    return any(_NAME.match(p.name) for p in path.glob("*/*/*.txt"))


def _columns(text: str, width: int, what: str, where: str) -> list[str]:
    """The whitespace tokens of a file whose non-blank lines all have ``width`` columns.

    Fast path: the token count equals ``width`` × the line count (no blank lines). Otherwise
    the lines are checked one by one and the first bad one raises `InputError` with its line.
    """
    tokens = text.split()
    n_lines = text.count("\n") + (0 if not text or text.endswith("\n") else 1)
    if len(tokens) == width * n_lines:
        return tokens
    for number, line in enumerate(text.splitlines(), 1):
        n = len(line.split())
        if n and n != width:
            raise InputError(f"expected '{what}', found {n} columns", where, number)
    return tokens


def _parse_pointwise(text: str, task: str, cell: CellLabels, where: str) -> None:
    import numpy as np

    valid = VALID_LABELS[task]
    # the same topic and passage ids recur in every cell: one string object each (sys.intern),
    # not one per cell -- the release's 474 cells then hold lists of shared strings
    tokens = list(map(sys.intern, _columns(text, 4, "qid 0 docid label", where)))
    if any(t != "0" for t in tokens[1::4]):  # the iteration column; also catches shifted columns
        raise InputError("expected 'qid 0 docid label': the second column is not always 0", where)
    qids, docids, labels = tokens[0::4], tokens[2::4], tokens[3::4]
    ok = [label in valid for label in labels]
    invalid = len(labels) - sum(ok)
    if invalid:
        cell.invalid_qids = [q for q, k in zip(qids, ok, strict=True) if not k]
        cell.invalid_docids = [d for d, k in zip(docids, ok, strict=True) if not k]
        qids = [q for q, k in zip(qids, ok, strict=True) if k]
        docids = [d for d, k in zip(docids, ok, strict=True) if k]
        labels = [x for x, k in zip(labels, ok, strict=True) if k]
    cell.qids, cell.docids = qids, docids
    cell.values = np.array(labels, dtype=float)
    cell.items, cell.invalid = len(ok), invalid


def _parse_pairwise(text: str, cell: CellLabels, where: str, keys: dict[Any, Any] | None = None) -> None:
    """``keys``: the pair keys of earlier cells, so that cells share one key object per pair."""
    keys = {} if keys is None else keys
    tokens = list(map(sys.intern, _columns(text, 5, "qid pairtype doc1 doc2 agree|tie|disagree", where)))
    invalid = 0
    for qid, pairtype, a, b, outcome in zip(*(tokens[i::5] for i in range(5)), strict=True):
        comparison = PAIR_TYPES.get(pairtype)
        if comparison is None:
            raise InputError(f"unknown pair type {pairtype!r} (expected {', '.join(PAIR_TYPES)})", where)
        if outcome not in ("agree", "tie", "disagree"):
            invalid += 1
            continue
        key = pair_key(qid, a, b)
        key = keys.setdefault(key, key)
        cell.outcomes[key] = outcome
        cell.comparisons[key] = comparison
    cell.items, cell.invalid = len(tokens) // 5, invalid


def read_published(
    path: str | Path,
    *,
    exclude: Collection[str] = EXCLUDED_BY_AUTHORS,
    group_of: Callable[[str], str] | None = None,
    datasets: Collection[str] | None = None,
) -> tuple[list[CellLabels], list[str]]:
    """All cells of the release, and notes on what was left out.

    ``group_of(prompt_id)`` names a prompt's group (default: ``human`` for ids below 16,
    ``llm`` for 16-31, ``umbrela`` for 32 — the collection's numbering, see ``prompts.json``).
    """
    path = Path(path)
    group = group_of or default_group
    cells: list[CellLabels] = []
    skipped: dict[str, int] = {}
    pair_keys: dict[Any, Any] = {}  # one key object per pair, shared by the pairwise cells
    for name, data in _iter_files(path):
        parts = name.split("/")
        match = _NAME.match(parts[-1])
        if match is None or len(parts) < 3:
            continue
        model = parts[-3]
        task = parts[-2].lower()
        ds = match["ds"].lower()
        pid = match["pid"]
        if task != match["task"].lower():
            raise InputError(f"file of task {match['task']!r} in the {task!r} directory", f"{path}/{name}")
        if datasets is not None and ds not in datasets:
            continue
        if pid in exclude:
            skipped[pid] = skipped.get(pid, 0) + 1
            continue
        cell = CellLabels(
            dataset=ds, model=model, task=task, prompt=pid, group=group(pid), source=f"{path.name}:{name}"
        )
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("not valid UTF-8", f"{path}/{name}") from None
        del data  # one member's bytes at a time
        if task == "pairwise":
            _parse_pairwise(text, cell, f"{path}/{name}", pair_keys)
        else:
            _parse_pointwise(text, task, cell, f"{path}/{name}")
        cells.append(cell)
    if not cells:
        raise InputError(
            "no published judgment files (<model>/<task>/<model>_<task>_dl<yy>_<id>.txt) found", path
        )
    seen: dict[tuple[str, str, str, str], str] = {}
    for cell in cells:
        if cell.key in seen:
            raise InputError(f"two files for {'/'.join(cell.key)}: {seen[cell.key]} and {cell.source}", path)
        seen[cell.key] = cell.source
    notes = []
    for by_authors, why in (
        (True, "excluded by the authors (no or broken placeholders, content-filtered prompt)"),
        (False, "excluded by the caller"),
    ):
        ids = sorted((p for p in skipped if (p in EXCLUDED_BY_AUTHORS) == by_authors), key=_id_order)
        if ids:
            files = sum(skipped[p] for p in ids)
            notes.append(f"left out {files} file(s) of prompt id(s) {', '.join(ids)}, {why}")
    cells.sort(key=lambda c: (c.dataset, c.task, c.model, _id_order(c.prompt)))
    return cells, notes


def default_group(prompt_id: str) -> str:
    try:
        n = int(prompt_id)
    except ValueError:
        return "custom"
    if n < 16:
        return "human"
    if n < 32:
        return "llm"
    return "umbrela" if n == 32 else "custom"


def groups_from_collection(path: str | Path) -> dict[str, str]:
    """``{prompt id: group}`` from a prompt collection's ``participant_name`` fields."""
    from reljudge.sweep.prompts import group_of

    try:
        data = loads_json(Path(path).read_bytes(), path)
    except OSError as err:
        raise InputError(f"cannot read the prompt collection: {err}", path) from None
    return {
        str(k): group_of(v.get("participant_name") if isinstance(v, Mapping) else None)
        for k, v in data.items()
    }


def prompt_texts(path: str | Path) -> dict[str, Any]:
    """The prompt collection as ``{prompt id: {task: {"system": …, "user": …}, …}}`` (the raw JSON)."""
    try:
        data = loads_json(Path(path).read_bytes(), path)
    except OSError as err:
        raise InputError(f"cannot read the prompt collection: {err}", path) from None
    if not isinstance(data, Mapping):
        raise InputError("expected a JSON object of prompts", path)
    return {str(k): v for k, v in data.items()}


def _id_order(pid: str) -> tuple[int, str]:
    return (int(pid), "") if pid.isdigit() else (10**9, pid)


def default_qrels(path: str | Path, dataset: str) -> Path | None:
    """``../trec-dl20/qrels.txt`` next to the release's directory (the shared data layout)."""
    root = Path(path).resolve().parent if Path(path).is_file() else Path(path).resolve()
    for base in (root.parent, root):
        candidate = base / f"trec-{dataset}" / "qrels.txt"
        if candidate.is_file():
            return candidate
    return None


__all__ = [
    "EXCLUDED_BY_AUTHORS",
    "read_published",
    "default_group",
    "groups_from_collection",
    "default_qrels",
]
