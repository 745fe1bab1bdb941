"""An index of a large passage collection: where each docid's line starts, so that a job reads
its few passages with a seek each instead of streaming the whole file.

The index is a small SQLite file (``docid, line, offset, length`` per line), built once by one
streamed pass that checks every line as `reljudge.io.corpus.load_corpus` does (same errors,
``file:line``), and kept in ``$RELJUDGE_INDEX_DIR`` (default
``$XDG_CACHE_HOME/reljudge/corpus-index/``, i.e. ``~/.cache/reljudge/corpus-index/``) under a
name derived from the collection's absolute path. It records the file's size, modification
time and a fingerprint of its content (a hash of `SAMPLES` blocks of `BLOCK` bytes: the first,
the last and evenly spaced ones between, a few milliseconds to read even for 1 GB): a collection
that changed is indexed again. An edit that keeps the size and time and misses every sampled
block is caught when a passage is read: each must still be one whole line (a line end before its
offset and at its end, none inside) holding the indexed docid; when one is not, the index is
built again (with one warning) and the passages read from the new one, never a neighbour's bytes. Memory stays bounded while building (rows
go to SQLite in batches; repeated docids are found afterwards by an SQL query, and a docid
repeated with a *different* text is recorded and reported, as by `load_corpus`, when a job
asks for it).

Only plain files of at least `MIN_INDEX_BYTES` are indexed: a gzipped collection cannot be
read at an offset, and a small one is read faster than an index is opened. When the index
directory cannot be written, the collection is streamed as before.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import tempfile
from collections.abc import Callable, Collection, Iterator
from pathlib import Path

from reljudge.errors import InputError
from reljudge.io.lines import BOM

#: reads one line of a collection as ``(docid, text)`` (`reljudge.io.corpus.parse_line`)
Parse = Callable[[str, Path, int], tuple[str, str]]

logger = logging.getLogger(__name__)

#: collections smaller than this are streamed (no index)
MIN_INDEX_BYTES = 64 * 1024 * 1024
#: the index's layout; an index of another version is built again
VERSION = "2"
_BATCH = 50_000
#: bytes of each block the fingerprint reads
BLOCK = 4096
#: blocks the fingerprint reads: the first, the last and evenly spaced ones between
SAMPLES = 256


def index_dir() -> Path:
    """``$RELJUDGE_INDEX_DIR``, else ``$XDG_CACHE_HOME/reljudge/corpus-index`` (``~/.cache``)."""
    env = os.environ.get("RELJUDGE_INDEX_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "reljudge" / "corpus-index"


def indexable(path: Path) -> bool:
    """Whether ``path`` is a plain file large enough to be worth an index."""
    try:
        return path.suffix != ".gz" and path.is_file() and path.stat().st_size >= MIN_INDEX_BYTES
    except OSError:
        return False


def index_path(path: Path) -> Path:
    digest = hashlib.sha256(str(path.resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return index_dir() / f"{digest}.sqlite"


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{VERSION}:{st.st_size}:{st.st_mtime_ns}:{fingerprint(path, st.st_size)}"


def fingerprint(path: Path, size: int) -> str:
    """A hash of the content of ``path`` (``size`` bytes): the whole file when it is at most
    `SAMPLES` blocks, else `SAMPLES` blocks of `BLOCK` bytes, the first, the last and evenly spaced
    ones between."""
    digest = hashlib.blake2b(digest_size=16)
    with path.open("rb") as handle:
        if size <= SAMPLES * BLOCK:
            digest.update(handle.read())
        else:
            step = (size - BLOCK) / (SAMPLES - 1)
            for i in range(SAMPLES):
                handle.seek(round(i * step))
                digest.update(handle.read(BLOCK))
    return digest.hexdigest()


class _Moved(Exception):
    """A passage read through the index is not the whole line the index recorded."""


class CorpusIndex:
    """An open index of one collection (see the module docstring): `lookup` reads passages."""

    def __init__(self, path: Path, db: sqlite3.Connection, parse: Parse):
        self.path = path
        self._db = db
        self._parse = parse
        #: the index was built again because a passage had moved (`lookup`)
        self.rebuilt = False

    @classmethod
    def open(cls, path: str | Path, parse: Parse, *, build: bool = True) -> CorpusIndex | None:
        """The index of ``path``, built (again) when missing or stale; None when it cannot be
        written (``build=False``: when it is not there and current). ``parse(line, path,
        number)`` reads one line as ``(docid, text)``, raising `InputError` for a bad one."""
        path = Path(path)
        where = index_path(path)
        stamp = _stamp(path)
        if where.exists():
            try:
                db = sqlite3.connect(f"file:{where}?mode=ro", uri=True)
                row = db.execute("SELECT value FROM meta WHERE key = 'stamp'").fetchone()
                if row is not None and row[0] == stamp:
                    return cls(path, db, parse)
                db.close()
            except sqlite3.DatabaseError:
                pass
        if not build:
            return None
        try:
            where.parent.mkdir(parents=True, exist_ok=True)
            _build(path, where, stamp, parse)
        except OSError as err:
            logger.warning("cannot write a corpus index in %s (%s): streaming %s", where.parent, err, path)
            return None
        return cls(path, sqlite3.connect(f"file:{where}?mode=ro", uri=True), parse)

    def close(self) -> None:
        self._db.close()

    def lookup(self, docids: Collection[str]) -> dict[str, str]:
        """``{docid: text}`` of the ``docids`` the collection holds, each read at its offset (in
        file order). A docid the collection repeats with another text is an `InputError`, as in
        `load_corpus`. A passage that is no longer the whole line indexed (the file was edited
        without a change of size and time): the index is built again, once, and read."""
        try:
            return self._lookup(docids)
        except _Moved as err:
            if self.rebuilt:
                raise InputError(f"{err} even in a new index: is it being written?", self.path) from None
            moved = str(err)
        logger.warning(
            "%s changed since it was indexed (%s; same size and time): indexing it again", self.path, moved
        )
        self._db.close()
        where = index_path(self.path)
        _build(self.path, where, _stamp(self.path), self._parse)
        self._db = sqlite3.connect(f"file:{where}?mode=ro", uri=True)
        self.rebuilt = True
        return self.lookup(docids)

    def _lookup(self, docids: Collection[str]) -> dict[str, str]:
        found: list[tuple[int, int, int, str]] = []
        wanted = list(dict.fromkeys(docids))
        for start in range(0, len(wanted), 900):  # SQLite's bound on parameters
            chunk = wanted[start : start + 900]
            marks = ",".join("?" * len(chunk))
            found += self._db.execute(
                f"SELECT offset, length, line, docid FROM doc WHERE docid IN ({marks}) "  # noqa: S608
                "AND line = (SELECT MIN(line) FROM doc AS d WHERE d.docid = doc.docid)",
                chunk,
            ).fetchall()
            for docid, first, line in self._db.execute(
                f"SELECT docid, first_line, line FROM conflict WHERE docid IN ({marks})",  # noqa: S608
                chunk,
            ):
                raise InputError(
                    f"duplicate document id {docid!r} with a different text (first on line {first})",
                    self.path,
                    line,
                )
        passages: dict[str, str] = {}
        with self.path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            for offset, length, line, indexed in sorted(found):
                handle.seek(max(offset - 1, 0))
                before = handle.read(1) if offset else b"\n"
                raw = handle.read(length)
                ends = raw.endswith(b"\n") or offset + len(raw) == size
                if before != b"\n" or len(raw) != length or not ends or b"\n" in raw[:-1]:
                    raise _Moved(f"line {line} is no longer at byte {offset:,}")
                docid, text = self._parse(_decode(raw, offset, self.path, line), self.path, line)
                if docid != indexed:
                    raise _Moved(f"line {line} no longer holds document {indexed!r}")
                passages[docid] = text
        return passages


def _decode(raw: bytes, offset: int, path: Path, line: int) -> str:
    if offset == 0 and raw.startswith(BOM):
        raw = raw[len(BOM) :]
    try:
        return raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as err:
        raise InputError(f"not valid UTF-8 (byte {raw[err.start : err.start + 1]!r})", path, line) from None


def _rows(path: Path, parse_line: Parse) -> Iterator[tuple[str, int, int, int]]:
    """(docid, line, offset, length) of each non-blank line, every line checked."""
    offset = 0
    content = False
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            text = _decode(raw, offset, path, number)
            if text.strip():
                content = True
                docid, _ = parse_line(text, path, number)
                yield docid, number, offset, len(raw)
            offset += len(raw)
    if not content:
        raise InputError("file is empty", path)


def _build(path: Path, where: Path, stamp: str, parse_line: Parse) -> None:
    """Write the index of ``path`` to ``where`` (atomically: a temporary file renamed)."""
    handle, tmp = tempfile.mkstemp(dir=where.parent, prefix=where.stem, suffix=".tmp")
    os.close(handle)
    try:
        db = sqlite3.connect(tmp)
        db.executescript(
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-16000; PRAGMA temp_store=FILE;"
            "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
            "CREATE TABLE doc(docid TEXT, line INTEGER, offset INTEGER, length INTEGER);"
            "CREATE TABLE conflict(docid TEXT PRIMARY KEY, first_line INTEGER, line INTEGER);"
        )
        batch: list[tuple[str, int, int, int]] = []
        for row in _rows(path, parse_line):
            batch.append(row)
            if len(batch) >= _BATCH:
                db.executemany("INSERT INTO doc VALUES (?, ?, ?, ?)", batch)
                batch.clear()
        db.executemany("INSERT INTO doc VALUES (?, ?, ?, ?)", batch)
        db.execute("CREATE INDEX doc_id ON doc(docid, line)")
        # a docid on several lines: the same text is kept once, another text is recorded
        repeated = db.execute("SELECT docid FROM doc GROUP BY docid HAVING COUNT(*) > 1").fetchall()
        with path.open("rb") as source:
            for (docid,) in repeated:
                rows = db.execute(
                    "SELECT line, offset, length FROM doc WHERE docid = ? ORDER BY line", (docid,)
                ).fetchall()
                texts = []
                for line, offset, length in rows:
                    source.seek(offset)
                    texts.append(
                        (line, parse_line(_decode(source.read(length), offset, path, line), path, line)[1])
                    )
                first_line, first = texts[0]
                other = next((line for line, text in texts[1:] if text != first), None)
                if other is not None:
                    db.execute("INSERT INTO conflict VALUES (?, ?, ?)", (docid, first_line, other))
        db.execute("INSERT INTO meta VALUES ('stamp', ?)", (stamp,))
        db.execute("INSERT INTO meta VALUES ('path', ?)", (str(path.resolve()),))
        db.commit()
        db.close()
        os.replace(tmp, where)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
