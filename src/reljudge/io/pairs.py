"""Pairs files: the pairs of documents a pairwise judge compares (``judge run --pairs``).

Two layouts, one pair per line: ``qid docidA docidB`` (whitespace), or the prompt-sensitivity
TSV ``qid cat1 cat2 docid1 docid2`` (the categories of the two documents, e.g. ``top mid``).
Blank lines and ``#`` comments are skipped; a document paired with itself, a repeated pair and
a line with another number of columns are ``file:line`` errors.
"""

from __future__ import annotations

from pathlib import Path

from reljudge.errors import InputError

#: pairs per topic, in file order
Pairs = dict[str, list[tuple[str, str]]]
#: (qid, docidA, docidB) -> the categories of the two documents (TSV layout)
PairCategories = dict[tuple[str, str, str], tuple[str, str]]


def read_pairs(path: Path) -> tuple[Pairs, PairCategories]:
    """Read a pairs file: ``qid docidA docidB`` (whitespace) or the prompt-sensitivity TSV
    ``qid cat1 cat2 docid1 docid2``. Returns pairs per topic (file order) and the categories."""
    from reljudge.io.lines import read_lines  # the shared tolerant line reader (gzip, CRLF, UTF-8)

    pairs: Pairs = {}
    categories: PairCategories = {}
    seen: dict[tuple[str, str, str], int] = {}
    for number, line in read_lines(path):
        parts = line.split()
        if not parts or line.lstrip().startswith("#"):
            continue
        if len(parts) == 3:
            qid, a, b = parts
            cats = None
        elif len(parts) == 5:
            qid, c1, c2, a, b = parts
            cats = (c1, c2)
        else:
            raise InputError(
                f"expected 'qid docidA docidB' or 'qid cat1 cat2 docid1 docid2', found {len(parts)} columns",
                path,
                number,
            )
        if a == b:
            raise InputError(f"a pair compares document {a!r} with itself", path, number)
        pair_key = (qid, a, b)
        if pair_key in seen:
            raise InputError(
                f"duplicate pair {a} {b} for topic {qid!r} (first on line {seen[pair_key]})", path, number
            )
        seen[pair_key] = number
        pairs.setdefault(qid, []).append((a, b))
        if cats is not None:
            categories[pair_key] = cats
    if not pairs:
        raise InputError("no pairs in file", path)
    return pairs, categories


__all__ = ["PairCategories", "Pairs", "read_pairs"]
