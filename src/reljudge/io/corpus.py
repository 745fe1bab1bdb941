"""Passage collections: ``docid<TAB>text`` TSV or JSON Lines, read into a read-only mapping.

Formats, chosen by the file name (``.gz`` is decompressed on the fly):

- ``*.jsonl`` / ``*.json`` / ``*.ndjson``: one object per line with an id field (``docid``,
  ``id``, ``_id`` or ``doc_id``) and a text field (``text``, ``contents``, ``passage`` or
  ``body``); a non-empty ``title`` is prepended to the text, separated by a newline.
- anything else: TSV, ``docid<TAB>text`` (the first tab splits; the text may hold more tabs).

The reader streams the file line by line, so a large collection can be filtered to the
passages a job needs with ``load_corpus(path, docids=...)`` without holding all of it (memory
grows with the passages kept, not with the file); a large plain file is read through an index
of its lines (`reljudge.io.corpus_index`, built once), a seek per passage.
A malformed line, a docid repeated with a *different* text, bytes that are not UTF-8 or an
empty file raise `InputError` naming ``file:line``. A docid repeated with the same text (files
written one line per judged pair, like the TREC DL ``passages.tsv``) is kept once.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.io.corpus_index import indexable
from reljudge.io.lines import is_jsonl_name, loads_json, read_lines

ID_FIELDS: tuple[str, ...] = ("docid", "id", "_id", "doc_id")
TEXT_FIELDS: tuple[str, ...] = ("text", "contents", "passage", "body")


class MissingDocumentError(InputError, KeyError):
    """A docid the corpus does not hold. It is both an `InputError` (the CLI reports it as bad
    input, exit code 2) and a `KeyError` (so `Mapping` semantics such as ``.get`` work)."""

    def __init__(self, docid: str, path: str | Path | None):
        self.docid = docid
        where = f"corpus {path}" if path is not None else "the corpus"
        InputError.__init__(self, f"document {docid!r} is not in {where}")

    def __str__(self) -> str:  # KeyError would quote the message
        return InputError.__str__(self)


class Corpus(Mapping[str, str]):
    """A read-only ``{docid: text}`` mapping that remembers where it came from.

    ``corpus[docid]`` raises `MissingDocumentError` (a `KeyError` and an `InputError`) naming
    the docid and the corpus file; ``corpus.missing(docids)`` lists absent ids in order.
    """

    def __init__(self, passages: Mapping[str, str], path: str | Path | None = None):
        self._passages = dict(passages)
        self.path = Path(path) if path is not None else None

    def __getitem__(self, docid: str) -> str:
        try:
            return self._passages[docid]
        except KeyError:
            raise MissingDocumentError(docid, self.path) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._passages)

    def __len__(self) -> int:
        return len(self._passages)

    def __contains__(self, docid: object) -> bool:
        return docid in self._passages

    def get(self, docid: str, default: Any = None) -> Any:
        """The text of ``docid``, else ``default`` (a dict lookup: judges ask it of every item)."""
        return self._passages.get(docid, default)

    def __repr__(self) -> str:
        source = f" from {self.path}" if self.path else ""
        return f"<Corpus {len(self)} passages{source}>"

    def missing(self, docids: Iterable[str]) -> list[str]:
        """The docids (in the order given, each once) that the corpus does not hold."""
        seen: set[str] = set()
        absent = []
        for docid in docids:
            if docid not in self._passages and docid not in seen:
                seen.add(docid)
                absent.append(docid)
        return absent

    def require(self, docids: Iterable[str]) -> None:
        """Raise `InputError` listing (up to 5 of) the docids the corpus lacks."""
        absent = self.missing(docids)
        if absent:
            shown = ", ".join(repr(d) for d in absent[:5])
            more = f" and {len(absent) - 5} more" if len(absent) > 5 else ""
            where = str(self.path) if self.path else "the corpus"
            raise InputError(f"{len(absent)} document(s) have no text in {where}: {shown}{more}")


def _join_title(title: str, text: str) -> str:
    title, text = title.strip(), text.strip()
    if not title:
        return text
    if not text:
        return title
    return f"{title}\n{text}"


def _parse_jsonl(line: str, path: Path, number: int) -> tuple[str, str]:
    obj = loads_json(line, path, number)
    if not isinstance(obj, dict):
        raise InputError("expected a JSON object per line", path, number)
    id_field = next((f for f in ID_FIELDS if f in obj), None)
    if id_field is None:
        raise InputError(f"no document id field (one of {', '.join(ID_FIELDS)})", path, number)
    text_field = next((f for f in TEXT_FIELDS if f in obj), None)
    if text_field is None:
        raise InputError(f"no text field (one of {', '.join(TEXT_FIELDS)})", path, number)
    docid, text, title = obj[id_field], obj[text_field], obj.get("title")
    if isinstance(docid, int) and not isinstance(docid, bool):
        docid = str(docid)
    if not isinstance(docid, str) or not docid.strip():
        raise InputError(f"field {id_field!r} must be a non-empty string", path, number)
    if not isinstance(text, str):
        raise InputError(f"field {text_field!r} must be a string", path, number)
    if title is not None and not isinstance(title, str):
        raise InputError("field 'title' must be a string", path, number)
    return docid.strip(), _join_title(title or "", text)


def _parse_tsv(line: str, path: Path, number: int) -> tuple[str, str]:
    docid, tab, text = line.partition("\t")
    if not tab:
        raise InputError("expected 'docid<TAB>text' (no tab found)", path, number)
    docid = docid.strip()
    if not docid:
        raise InputError("empty document id", path, number)
    return docid, text.strip()


def parse_line(line: str, path: Path, number: int) -> tuple[str, str]:
    """``(docid, text)`` of one line of the collection ``path`` (its format by its name)."""
    return _parse_jsonl(line, path, number) if is_jsonl_name(path) else _parse_tsv(line, path, number)


def iter_passages(path: str | Path) -> Iterator[tuple[str, str]]:
    """Yield ``(docid, text)`` in file order, validating each line (no duplicate check)."""
    path = Path(path)
    parse = _parse_jsonl if is_jsonl_name(path) else _parse_tsv
    for number, line in read_lines(path, stream=True):
        if not line.strip():
            continue
        yield parse(line, path, number)


def load_corpus(path: str | Path, *, docids: Collection[str] | None = None, index: bool = True) -> Corpus:
    """Read a passage collection (TSV ``docid<TAB>text`` or JSONL, optionally gzipped).

    With ``docids``, only those passages are kept: the file is streamed and every line is
    still checked, but memory holds only the wanted passages, however large the collection
    (a docid repeated with another text is then an error only for the wanted docids: the
    others are never read by the caller). A docid that appears again with another text is an
    error; an exact repeat is ignored.

    With ``docids``, a large plain collection is read through its index (`reljudge.io.corpus_index`,
    built on first use, by the same checks): a seek per wanted passage instead of a pass over
    the file. ``index=False`` streams the file instead.
    """
    path = Path(path)
    if docids is not None and index and indexable(path):
        from reljudge.io.corpus_index import CorpusIndex

        found = CorpusIndex.open(path, parse_line)
        if found is not None:
            try:
                return Corpus(found.lookup(docids), path)
            finally:
                found.close()
    wanted = set(docids) if docids is not None else None
    parse = _parse_jsonl if is_jsonl_name(path) else _parse_tsv
    passages: dict[str, str] = {}
    first_line: dict[str, int] = {}
    for number, line in read_lines(path, stream=True):
        if not line.strip():
            continue
        docid, text = parse(line, path, number)
        if wanted is not None and docid not in wanted:
            continue
        if docid in passages:
            if passages[docid] != text:
                raise InputError(
                    f"duplicate document id {docid!r} with a different text (first on line {first_line[docid]})",
                    path,
                    number,
                )
            continue
        first_line[docid] = number
        passages[docid] = text
    return Corpus(passages, path)
