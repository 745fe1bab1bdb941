"""A mock nugget assigner that follows the human grade of the judged text (a plumbing check).

Given human qrels and the passages' texts (and optionally the topics), the three-grade nugget
assignment prompt (``nuggets/assign``, nuggetizer's ``assigner_template.yaml``) is answered by
the grade of the passage whose text is the judged ``Passage:`` (an answer that *is* a judged
passage, e.g. the synthetic answer systems of ``bench/synthetic_answer_systems.py``):

- grade 3 (or higher): ``support`` for every nugget;
- grade 2: mostly ``support``, about one nugget in four ``partial_support`` (by a hash);
- grade 1: mostly ``partial_support``, about one nugget in four ``support`` (by a hash), so that
  the strict scores, which count only ``support``, separate grade 1 from grade 0 too;
- grade 0, or a text that is no judged passage: ``not_support`` for every nugget.

With topics, the grade is the one judged for the prompt's ``Search Query:`` (a passage judged for
another topic is unknown there); without, a text's highest grade over all topics. A text judged
with two grades for one query (duplicate passages: 169 such pairs in TREC DL 2021) takes the higher. Texts are
compared with their whitespace runs made single spaces. `GradeBook.citation_rule` answers the
citation-support prompt by the cited passage's grade the same way (3 full, 1-2 partial, 0 no). Deterministic: the answer depends only on
the request text. The mock stands alone, so its readers of the TREC qrels (``qid iter docid
grade``), topics (``qid<TAB>query``) and passages (``docid<TAB>text`` TSV, or JSON Lines with
``docid``/``id``/``_id`` and ``text``/``contents``) are its own and simple.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from reljudge.testing.exchange import MockRequest
from reljudge.testing.rules import Rule, _count_hint, _last_list, stable_choice
from reljudge.testing.rules_methods import citation_parts

_PASSAGE = re.compile(r"Passage:[ \t]?(.*?)\nNugget List:", re.DOTALL)
_QUERY = re.compile(r"Search Query:[ \t]?(.*?)\nPassage:", re.DOTALL)


def _norm(text: str) -> str:
    return " ".join(text.split())


class GradeBook:
    """The human grade of each judged text (per query when topics are given)."""

    def __init__(self, qrels: str | Path, corpus: str | Path, topics: str | Path | None = None) -> None:
        judged: dict[str, dict[str, int]] = {}
        for line in Path(qrels).read_text(encoding="utf-8").splitlines():
            parts = line.split()
            if len(parts) >= 4:
                judged.setdefault(parts[2], {})[parts[0]] = int(float(parts[3]))
        queries: dict[str, str] = {}
        if topics is not None:
            for line in Path(topics).read_text(encoding="utf-8").splitlines():
                qid, sep, query = line.partition("\t")
                if sep:
                    queries[qid.strip()] = _norm(query)
        self.by_query: dict[tuple[str, str], int] = {}
        self.by_text: dict[str, int] = {}
        for docid, text in _passages(Path(corpus), set(judged)):
            key = _norm(text)
            for qid, grade in judged[docid].items():
                self.by_text[key] = max(grade, self.by_text.get(key, grade))
                if qid in queries:  # a text judged twice for a query (duplicate passages): the higher
                    pair = (queries[qid], key)
                    self.by_query[pair] = max(grade, self.by_query.get(pair, grade))
        self.keyed_by_query = bool(queries)

    def grade(self, query: str, text: str) -> int | None:
        """The grade of ``text`` (for ``query`` when the book has topics), None when not judged."""
        if self.keyed_by_query:
            return self.by_query.get((_norm(query), _norm(text)))
        return self.by_text.get(_norm(text))

    def labels(self, query: str, text: str, nuggets: list[str]) -> list[str]:
        """One label per nugget by the grade (see the module docstring)."""
        grade = self.grade(query, text)
        out = []
        for nugget in nuggets:
            if grade is None or grade <= 0:
                out.append("not_support")
            elif grade == 1:
                out.append("support" if stable_choice(f"{text}|{nugget}", 4) == 0 else "partial_support")
            elif grade == 2:
                out.append("partial_support" if stable_choice(f"{text}|{nugget}", 4) == 0 else "support")
            else:
                out.append("support")
        return out

    def rule(self) -> Rule:
        """The auto-responder rule answering the three-grade assignment prompt by grade."""
        return Rule("nugget-assign-by-grade", _is_assignment, self._reply)

    def citation_rule(self) -> Rule:
        """The auto-responder rule answering the citation-support prompt by the grade of the cited
        passage (its highest grade over all topics: the prompt has no query): 3 or more
        ``full_support``, 1-2 ``partial_support``, 0 or not judged ``no_support``."""
        return Rule("citation-support-by-grade", lambda r: citation_parts(r) is not None, self._support)

    def support(self, citation: str) -> str:
        """The citation-support label of a cited text by its grade (see `citation_rule`)."""
        grade = self.by_text.get(_norm(citation))
        if grade is None or grade <= 0:
            return "no_support"
        return "full_support" if grade >= 3 else "partial_support"

    def _support(self, req: MockRequest) -> str:
        parts = citation_parts(req)
        return self.support(parts[1] if parts else "")

    def _reply(self, req: MockRequest) -> str:
        user = req.last_user
        passage = _PASSAGE.search(user)
        query = _QUERY.search(user)
        nuggets = [str(n) for n in (_last_list(user) or [])]
        n = _count_hint(req.prompt) or len(nuggets) or 1
        nuggets = (nuggets + [str(i) for i in range(len(nuggets), n)])[:n]
        text = passage.group(1) if passage else ""
        return json.dumps(self.labels(query.group(1) if query else "", text, nuggets))


def _is_assignment(req: MockRequest) -> bool:
    low = req.prompt.lower()
    return "partial_support" in low and "nugget list:" in low and "label each of the" in low


def _passages(path: Path, wanted: set[str]) -> list[tuple[str, str]]:
    found = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            if line.lstrip().startswith("{"):
                data = json.loads(line)
                docid = str(data.get("docid", data.get("id", data.get("_id", ""))))
                text = str(data.get("text", data.get("contents", "")))
            else:
                docid, _, text = line.rstrip("\n").partition("\t")
            if docid in wanted:
                found.append((docid, text))
    return found
