"""Nugget evaluation of generated answers (TREC RAG 2024, as castorini/nuggetizer does it).

The nuggets of a topic are made once, by the judge's own stages (create from the judged relevant
passages, score, select), then each selected nugget is assigned to each system's answer with the
same assignment prompt (nuggetizer's ``assign --input-kind answers`` sends the answer as the
``{context}`` of ``assigner_template.yaml``: its sentences joined by spaces). An assignment to an
answer is an ordinary ``nugget-assignment`` record whose ``docid`` is the system's name, with
``extra["system"]``, ``extra["answer_file"]`` and ``extra["answer_sha256"]`` (the answer's
provenance). A resumed run skips what is assigned; an answer whose text changed since (another
SHA-256) is assigned again and its new records supersede the old ones.

The pool of such a run (`answered_pool`) is the judged passages (the nugget sources) of the
answered topics only.

`answer_table` turns the records into the six scores per (system, topic) and their means per
system: All, Vital, Weighted and the strict twins (strict: only ``support`` counts; else
``partial_support`` counts 0.5, as nuggetizer's ``calculate_nugget_scores``). A topic without
vital nuggets has no Vital score (None, counted) unless ``empty_class="zero"`` (nuggetizer's 0.0).
After the run they are written as `SCORE_FILES` (`scores_of_answers`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reljudge.io.answer_sets import SourcedAnswer, read_answer_files
from reljudge.io.score_files import ScoreFiles
from reljudge.judges import answer_tables
from reljudge.judges.answer_tables import Versions, current_records
from reljudge.judges.answered_pools import answers_described, first_topics, refuse_item_limit
from reljudge.judges.base import AnswerScores, JudgeInputs, JudgePool, PoolRequest, Resource
from reljudge.judges.items import passage_problem
from reljudge.judges.nuggets.scores import NUGGET_SCORES, EmptyClass
from reljudge.judges.nuggets.sets import ASSIGN_METHOD, nugget_sets

#: the resource of ``--answers FILE...``: `reljudge.io.answer_sets.SourcedAnswer`s
ANSWERS = Resource(
    "answers",
    read=read_answer_files,
    help="assign the topic's nuggets to them",
)

#: the files of the nugget scores of answers, written into the run directory after the run:
#:
#: - ``answer-nuggets-topics.csv``: ``system,qid,all,all-strict,vital,vital-strict,weighted,weighted-strict``
#:   (an undefined score, e.g. Vital on a topic without vital nuggets, is an empty cell);
#: - ``answer-nuggets-systems.csv``: ``system,topics,topics_without_vital`` and the six means;
#: - ``answer-nuggets.json``: ``{"empty_class", "topics": [...], "systems": [...], "incomplete": [...]}``
#:   (undefined scores are ``null``).
SCORE_FILES = ScoreFiles(
    "answer-nuggets-topics.csv",
    "answer-nuggets-systems.csv",
    "answer-nuggets.json",
    ("system", "qid", *NUGGET_SCORES),
    ("system", "topics", "topics_without_vital", *NUGGET_SCORES),
)


@dataclass(frozen=True)
class Target:
    """What nuggets are assigned to: a passage (``id`` = docid) or an answer (``id`` = system)."""

    id: str
    text: str
    problem: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: an answer's SHA-256: an earlier assignment to another text is done again
    sha256: str | None = None

    def done(self, record: Any) -> bool:
        """Whether ``record`` (an earlier assignment to this target, or None) is still valid."""
        if record is None:
            return False
        return self.sha256 is None or record.extra.get("answer_sha256") == self.sha256


def answers_of(inputs: JudgeInputs) -> dict[str, list[SourcedAnswer]] | None:
    """``{qid: answers}`` when the run gives answers (``--answers``), else None (grouped once
    per inputs, kept with them)."""
    answers = inputs.resources.get("answers")
    if answers is None:
        return None
    return inputs.derived("answers_by_topic", lambda: _by_topic(answers))


def _by_topic(answers: Iterable[SourcedAnswer]) -> dict[str, list[SourcedAnswer]]:
    by_topic: dict[str, list[SourcedAnswer]] = {}
    for answer in answers:
        by_topic.setdefault(answer.qid, []).append(answer)
    return by_topic


def answer_target(answer: SourcedAnswer) -> Target:
    extra = {"system": answer.system, "answer_file": answer.file, "answer_sha256": answer.sha256}
    problem = None if answer.text.strip() else f"the answer of {answer.system!r} is empty"
    return Target(answer.system, answer.text, problem, extra, answer.sha256)


def targets(inputs: JudgeInputs, qid: str) -> list[Target]:
    """The targets of a topic: its answers when the run gives answers, else its pooled passages."""
    by_topic = answers_of(inputs)
    if by_topic is not None:
        return [answer_target(a) for a in by_topic.get(qid, [])]
    return [
        Target(d, inputs.corpus.get(d, ""), passage_problem(inputs.corpus, d))
        for d in dict.fromkeys(inputs.pool.get(qid, ()))
    ]


def topics_to_judge(inputs: JudgeInputs) -> list[str]:
    """The topics a run works on: the pooled ones (with answers, those answered), then answered
    topics outside the pool (they get a skipped record: no judged passages)."""
    by_topic = answers_of(inputs)
    if by_topic is None:
        return list(inputs.pool)
    pooled = [q for q in inputs.pool if q in by_topic]
    return pooled + [q for q in by_topic if q not in inputs.pool]


def answered_pool(request: PoolRequest) -> JudgePool | None:
    """The pool of a run over answers (``--answers``): the judged passages (the nugget sources)
    of the answered topics only, in the run's pool order; ``--topics-limit N`` keeps the first N
    answered topics with judgments (and their answers). None without answers (the run's pool)."""
    answers = request.resources.get("answers")
    if answers is None:
        return None
    refuse_item_limit(request)
    docs, description = request.run_pool()
    answered = {a.qid for a in answers}
    keep, answers = first_topics([q for q in docs if q in answered], answers, request.topics_limit)
    return JudgePool(
        docs={q: docs[q] for q in keep},
        description=f"{answers_described(answers)}; items: the answered topics' {description} (nugget sources)",
        resources={**request.resources, "answers": answers},
    )


# ---------------------------------------------------------------- scores of answers


@dataclass
class AnswerTable:
    """The nugget scores of answers: ``topics`` rows (system, qid, six scores) and ``systems``
    rows (system, topics, topics_without_vital, six means)."""

    topics: list[dict[str, Any]]
    systems: list[dict[str, Any]]
    #: answers left out: not yet assessed on every selected nugget (an interrupted run)
    incomplete: list[tuple[str, str]] = field(default_factory=list)
    empty_class: str = "undefined"


def answer_table(
    records: Iterable[Any],
    *,
    empty_class: EmptyClass = "undefined",
    on_failure: str = "exclude",
    systems: Sequence[str] | None = None,
    current: Versions | None = None,
) -> AnswerTable:
    """Per (system, topic) and per system scores from a run's records (latest per key).

    Only the assignments of one version of each answer count: the ``answer_sha256`` of
    ``current`` (the answers the run was given), else the newest recorded; an answer with an
    assignment missing for that version (a partly re-assigned answer) is left out and listed in
    ``incomplete``. A system's mean of a score is over the topics where that score is defined
    (Vital: topics with a vital nugget, counted in ``topics_without_vital`` otherwise)."""
    records = list(records)
    groups: dict[tuple[str, str], list[Any]] = {}
    for r in records:
        if r.method == ASSIGN_METHOD and r.extra.get("system") is not None:
            groups.setdefault((r.extra["system"], r.qid), []).append(r)
    kept = {id(r) for found in current_records(groups, _answer_sha, current).values() for r in found}
    records = [r for r in records if r.method != ASSIGN_METHOD or id(r) in kept]
    sets = nugget_sets(records, empty_class=empty_class, on_failure=on_failure)  # type: ignore[arg-type]
    if not sets:
        return AnswerTable([], [], empty_class=empty_class)
    # an answer whose current version has no assignment at all is not yet assessed either
    unassigned = {(q, s) for (s, q), found in groups.items() if not any(id(r) in kept for r in found)}
    incomplete = sorted(set(sets["nuggets-all"].incomplete) | unassigned)
    left_out = set(incomplete)
    per: dict[tuple[str, str], dict[str, float | None]] = {}
    for score in NUGGET_SCORES:
        for qid, docs in sets[f"nuggets-{score}"].scores.items():
            for system, value in docs.items():
                if (qid, system) not in left_out:
                    per.setdefault((system, qid), dict.fromkeys(NUGGET_SCORES))[score] = value
    order = list(systems) if systems is not None else []
    order += sorted({s for s, _ in per} - set(order))
    topic_rows: list[dict[str, Any]] = [
        {"system": s, "qid": q, **per[(s, q)]}
        for s in order
        for q in sorted((q for t, q in per if t == s), key=answer_tables.qid_order)
    ]
    system_rows = []
    for s in order:
        rows = [r for r in topic_rows if r["system"] == s]
        if not rows:
            continue
        row: dict[str, Any] = {
            "system": s,
            "topics": len(rows),
            "topics_without_vital": sum(1 for r in rows if r["vital"] is None),
        }
        for score in NUGGET_SCORES:
            values = [r[score] for r in rows if r[score] is not None]
            row[score] = sum(values) / len(values) if values else None
        system_rows.append(row)
    return AnswerTable(topic_rows, system_rows, incomplete, empty_class)


def scores_of_answers(
    records: Iterable[Any], resources: Mapping[str, Any], *, empty_class: EmptyClass = "undefined"
) -> AnswerScores | None:
    """The nugget scores of the answers a run judged (`answer_table`), counting the assignments
    to the answers as the run read them (``resources["answers"]``); None without answers."""
    answers = resources.get("answers")
    if answers is None:
        return None
    current = {(a.system, a.qid): a.sha256 for a in answers}
    table = answer_table(records, empty_class=empty_class, current=current)
    return AnswerScores(
        table.topics, table.systems, table.incomplete, render_table(table), {"empty_class": table.empty_class}
    )


def render_table(table: AnswerTable) -> str:
    """The per-system means as text (one line per system)."""
    if not table.systems:
        return "answers: no answer scored yet"
    names = ["system", "topics", *NUGGET_SCORES]
    rows = [
        [str(r["system"]), str(r["topics"]), *(answer_tables.fmt(r[s]) for s in NUGGET_SCORES)]
        for r in table.systems
    ]
    lines = answer_tables.render_rows(names, rows)
    no_vital = sum(r["topics_without_vital"] for r in table.systems)
    if no_vital:
        lines.append(f"vital: {no_vital} (system, topic) answer(s) on topics without a vital nugget left out")
    if table.incomplete:
        lines.append(
            answer_tables.incomplete_line([(s, q) for q, s in table.incomplete], "assessed on every nugget")
        )
    return "\n".join(lines)


def _answer_sha(record: Any) -> Any:
    return record.extra.get("answer_sha256")
