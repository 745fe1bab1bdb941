"""What the answer score tables share (`reljudge.judges.answer_tables`) and the grouping of
answers per judge inputs (no module state)."""

from __future__ import annotations

from types import SimpleNamespace

from reljudge.judges.answer_tables import current_records, incomplete_line, qid_order


def _record(sha: str, t: float):
    return SimpleNamespace(extra={"answer_sha256": sha}, provenance=SimpleNamespace(timestamp=t))


def test_current_records_keep_one_version_the_given_one_else_the_newest():
    old, new, older_again = _record("A", 1.0), _record("B", 2.0), _record("A", 0.5)
    groups = {("s", "1"): [old, new, older_again]}
    sha = lambda r: r.extra["answer_sha256"]  # noqa: E731
    assert current_records(groups, sha) == {("s", "1"): [new]}
    assert current_records(groups, sha, {("s", "1"): "A"}) == {("s", "1"): [old, older_again]}
    assert current_records(groups, sha, {("s", "1"): "C"}) == {("s", "1"): []}
    assert sorted(["10", "b", "2", "a"], key=qid_order) == ["2", "10", "a", "b"]
    line = incomplete_line([("s", str(q)) for q in range(12)], "judged", shown=2)
    assert line == "12 answer(s) not yet judged left out (incomplete): s/0, s/1 and 10 more"


def test_answers_are_grouped_once_per_inputs_without_module_state():
    import reljudge.judges.nuggets.answers as nugget_answers
    from reljudge.io.answer_sets import SourcedAnswer
    from reljudge.io.answers import Answer, Sentence
    from reljudge.judges.base import JudgeInputs

    def inputs(*systems: str) -> JudgeInputs:
        answers = [SourcedAnswer(Answer(s, "q1", (Sentence(f"{s} says"),)), "f.tsv") for s in systems]
        return JudgeInputs(topics={"q1": "t"}, corpus={}, pool={}, resources={"answers": answers})

    one, two = inputs("a"), inputs("b", "c")
    grouped = nugget_answers.answers_of(one)
    assert nugget_answers.answers_of(one) is grouped  # once per inputs
    assert [a.system for a in nugget_answers.answers_of(two)["q1"]] == ["b", "c"]
    assert [a.system for a in nugget_answers.answers_of(one)["q1"]] == ["a"]
    assert not hasattr(nugget_answers, "_GROUPED")  # nothing kept by the module between jobs
