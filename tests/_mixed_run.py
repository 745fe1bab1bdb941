"""A mixed run: the records of every built-in method in one list (pointwise, pairwise, EXAM,
nuggets), with failures of each kind; shared by the score-set and export tests."""

from __future__ import annotations

from reljudge.judges.exam.scores import question_id
from reljudge.judges.nuggets.scores import nugget_id
from reljudge.records import Judgment

Q1, Q2 = question_id("q1", "Who?"), question_id("q1", "Why?")
N1, N2, N3, N4 = (nugget_id("q1", t) for t in ("vital one", "okay two", "vital three", "unscored"))
N5 = nugget_id("q2", "okay only")
LABEL_METHODS = {"binary", "umbrela", "trec-assessor-v2", "pairwise", "exam", "nugget-assignment"}


def J(method: str, qid: str = "q1", docid: str | None = None, label=None, status="ok", **kw) -> Judgment:
    return Judgment(qid=qid, docid=docid, method=method, label=label, status=status, **kw)


def nugget(qid: str, nid: str, text: str, rank: int, importance: str | None, selected: bool, status="ok"):
    extra = {"text": text, "rank": rank, "selected": selected}
    if importance:
        extra["importance"] = importance
    return J("nugget", qid, item_id=nid, extra=extra, status=status)


def mixed() -> list[Judgment]:
    return [
        # pointwise: binary, umbrela and a custom judge's method name
        J("binary", docid="a", label=1),
        J("binary", docid="b", label=0),
        J("binary", docid="c", status="unparsed", raw="??"),
        J("umbrela", docid="a", label=3),
        J("umbrela", docid="b", status="refused"),
        J("trec-assessor-v2", docid="a", label=2),
        # pairwise (combined orders): a beats b, a beats c, (b, c) failed
        J("pairwise", docid="a", docid_b="b", label=1),
        J("pairwise", docid="c", docid_b="a", label=2),
        J("pairwise", docid="b", docid_b="c", status="api_error"),
        # EXAM: the questions, then grades on the 0/1 scale (c never graded on Q2)
        J("exam-question", item_id=Q1, extra={"text": "Who?", "index": 0}),
        J("exam-question", item_id=Q2, extra={"text": "Why?", "index": 1}),
        J("exam-question", qid="q2", status="unparsed", raw="no list"),
        J("exam", docid="a", item_id=Q1, label=1, extra={"scale": "binary"}),
        J("exam", docid="a", item_id=Q2, label=0, extra={"scale": "binary"}),
        J("exam", docid="b", item_id=Q1, label=1, extra={"scale": "binary"}),
        J("exam", docid="b", item_id=Q2, status="unparsed"),
        J("exam", docid="c", item_id=Q1, label=1, extra={"scale": "binary"}),
        # nuggets: creation log, the scored bank (N3 not selected, N4 without importance)
        J("nugget-creation", item_id="window/0", extra={"nuggets": []}),
        nugget("q1", N1, "vital one", 0, "vital", True),
        nugget("q1", N2, "okay two", 1, "okay", True),
        nugget("q1", N3, "vital three", 2, "vital", False),
        nugget("q1", N4, "unscored", 3, None, False, status="unparsed"),
        nugget("q2", N5, "okay only", 0, "okay", True),
        J("nugget-assignment", docid="a", item_id=N1, label=1.0),
        J("nugget-assignment", docid="a", item_id=N2, label=0.5),
        J("nugget-assignment", docid="b", item_id=N1, label=0.0),
        J("nugget-assignment", docid="b", item_id=N2, status="api_error"),
        J("nugget-assignment", docid="a", item_id=N4, label=1.0),
        J("nugget-assignment", qid="q2", docid="d", item_id=N5, label=1.0),
    ]
