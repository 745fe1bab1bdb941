"""``judge evaluate``: judgment sets compared with the human qrels through the measure registry.

For every judgment set, every judge-quality measure of `reljudge.metrics.registry` (alignment,
κ/α, ...) that applies to it. With runs, also every run's compatibility with the set, the
human measure of every run, and the agreement of the two system rankings by every ranking
measure the registry reports for ``evaluate`` (with a bootstrap interval over topics for
those that have one). `reljudge.analyses.evaluate.pipeline` reads the inputs first
(`reljudge.analyses.inputs`); `reljudge.analyses.evaluate.files` writes the result and
`reljudge.analyses.evaluate.summary` prints it.

Judgment topics that are not in the human qrels are dropped (and counted): the published
nugget files, for instance, accumulate topics across years. Every set reports the topics it
labels, and the report the runs that lack topics of the human qrels: by default a run's means
are over its own topics (trec_eval's default); with ``complete`` (trec_eval's ``-c``) a topic
missing from a run scores 0 and the mean is over all the qrels' topics (for compatibility: all
the set's topics with a positive judgment).

Binary measures (AP, P@k, RR, ...) count ``grade >= relevance_level`` as relevant
(`reljudge.metrics.measures.at_relevance_level`); under a judgment set as qrels, the level is
the set's own (`qrels_level`).
nugget files, for instance, accumulate topics across years.

Every set is read by what its values mean (`reljudge.analyses.evaluate.scales`): its judge's
declaration, or its values when no judge declares it. That gives its binary cut (never changed by
the values: a few off-scale labels are counted, warned about and read as the nearest end of the
scale for graded κ/α and gains), whether it has graded κ/α, and how it becomes qrels: a set of
gains as it is, a set that is not gains (win counts, shares) binarised at its cut for the
measures with a relevance level, and not at all for the graded ones (nDCG), which need gains.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from reljudge.analyses.evaluate.scales import SetScale, clip_scores, read_scale
from reljudge.metrics.alignment import AlignmentResult
from reljudge.metrics.base import JudgeLabels, Outcome
from reljudge.metrics.compatibility import DEFAULT_DEPTH, DEFAULT_P, Compatibility
from reljudge.metrics.ranking import bootstrap_ranking_agreement, interval_note
from reljudge.metrics.registry import judgment_measures, ranking_measures

if TYPE_CHECKING:
    from reljudge.analyses.inputs import JudgmentSet, Scores

RANKING_NOTE = "system means: compatibility over topics with a positive judgment; measure over the run's topics with qrels"
COMPLETE_NOTE = (
    "system means over every topic (trec_eval -c): compatibility over the set's topics with a positive "
    "judgment, measure over the qrels' topics; a topic missing from a run scores 0"
)


@dataclass
class SetReport:
    name: str
    source: str
    n_labels: int
    dropped_topics: int
    measures: dict[str, Outcome | None] = field(default_factory=dict)  # registry name -> outcome
    compatibility: dict[str, dict[str, float]] = field(default_factory=dict)  # run -> qid -> value
    ranking: dict[str, float | int] = field(default_factory=dict)
    #: judged (topic, document) pairs the set shares with the human qrels
    overlap: int = 0
    #: measure -> agreement of the system rankings by the measure under the human qrels and
    #: under this set as qrels (the comparison the UMBRELA paper reports)
    qrels_ranking: dict[str, dict[str, float | int]] = field(default_factory=dict)
    #: why ``qrels_ranking`` is empty or lacks a measure although runs were given (float
    #: scores, no overlap, a graded measure of a set that is not gains)
    qrels_ranking_note: str = ""
    #: topics the set labels (after the topics outside the human qrels were dropped)
    topics: int = 0
    #: how the set's values are read: their meaning, the binary cut, off-scale values
    scale: SetScale | None = None

    @property
    def alignment(self) -> AlignmentResult:
        return self.measures["alignment"].value  # type: ignore[union-attr]

    @property
    def kappa(self) -> dict[str, Any]:
        outcome = self.measures.get("kappa")
        return dict(outcome.fields["kappa"]) if outcome is not None else {}

    @property
    def confusion(self) -> dict[str, Any]:
        outcome = self.measures.get("kappa")
        return dict(outcome.fields["confusion"]) if outcome is not None else {}


@dataclass
class Report:
    measure: str
    p: float
    sets: list[SetReport]
    human_measure: dict[str, dict[str, float]] = field(default_factory=dict)  # run -> qid -> value
    settings: dict = field(default_factory=dict)
    runs: list[str] = field(default_factory=list)  # the runs evaluated (none: no system-level part)
    #: every human measure asked for (the first is ``measure``) -> run -> qid -> value
    measures: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    #: with answers: generators and runs ranked together by the common-scale similarity
    #: (`reljudge.analyses.answers.pipeline.answer_ranking`)
    system_ranking: dict[str, Any] = field(default_factory=dict)
    #: topics of the human qrels
    topics: int = 0
    #: run -> the topics of the human qrels it does not rank (runs that lack none are left out)
    missing_topics: dict[str, list[str]] = field(default_factory=dict)

    def mean_of(self, measure: str) -> dict[str, float]:
        values = self.measures.get(measure, {})
        return {r: float(np.mean(list(v.values()))) if v else math.nan for r, v in values.items()}

    def mean_measure(self) -> dict[str, float]:
        return {r: float(np.mean(list(v.values()))) if v else math.nan for r, v in self.human_measure.items()}

    def as_dict(self) -> dict:
        """The content of ``evaluation.json``, before its JSON conversion (NaN stays NaN here;
        `reljudge.analyses.evaluate.files.evaluation_data` gives it as written)."""
        human = self.mean_measure()
        out: dict[str, Any] = {
            "settings": self.settings,
            "measure": self.measure,
            "measures": list(self.measures) or [self.measure],
            "p": self.p,
            "human_measure": human,
            "human_measures": {m: self.mean_of(m) for m in self.measures},
            "topics": self.topics,
            "runs_missing_topics": self.missing_topics,
            "sets": [],
        }
        for s in self.sets:
            entry: dict[str, Any] = {
                "name": s.name,
                "source": s.source,
                "labels": s.n_labels,
                "topics": s.topics,
                "dropped_topics": s.dropped_topics,
            }
            for m in judgment_measures():
                outcome = s.measures.get(m.name)
                entry.update(outcome.fields if outcome is not None else m.empty)
            entry["compatibility"] = {
                run: {"mean": float(np.mean(list(v.values()))) if v else None, "topics": len(v)}
                for run, v in s.compatibility.items()
            }
            entry["ranking_agreement"] = s.ranking
            entry["overlap"] = s.overlap
            entry["qrels_ranking_agreement"] = s.qrels_ranking
            if s.qrels_ranking_note:
                entry["qrels_ranking_note"] = s.qrels_ranking_note
            entry["scale"] = s.scale.as_dict() if s.scale is not None else None
            out["sets"].append(entry)
        if self.system_ranking:
            out["system_ranking"] = self.system_ranking
        return out


def restrict(scores: Mapping[str, Mapping[str, float]], topics: set[str]) -> tuple[Scores, int]:
    """The scores of ``topics`` only, and how many topics were dropped."""
    kept = {q: dict(d) for q, d in scores.items() if q in topics}
    return kept, len(scores) - len(kept)


def _ranking_row(
    human: Mapping[str, Mapping[str, float]],
    compat: Mapping[str, Mapping[str, float]],
    human_mean: Mapping[str, float],
    *,
    n_boot: int,
    seed: int,
) -> dict[str, float | int]:
    """The agreement of the system rankings by the human measure and by compatibility: every
    ranking measure reported for ``evaluate``, each followed by its bootstrap interval if it has one."""
    compat_mean = {r: float(np.mean(list(v.values()))) for r, v in compat.items() if v}
    human_mean = {r: v for r, v in human_mean.items() if not math.isnan(v)}
    common = set(compat_mean) & set(human_mean)
    if len(common) < 2:
        return {}
    row: dict[str, float | int] = {"runs": len(common)}
    for m in ranking_measures("evaluate"):
        row[m.name] = m(human_mean, compat_mean)
        if m.interval:
            interval = bootstrap_ranking_agreement(human, compat, m, n_boot=n_boot, seed=seed)
            row.update(zip(m.interval_columns, (interval.low, interval.high), strict=True))
    return row


#: how `qrels_level` chooses, as printed
QRELS_LEVEL_RULE = "0/1 labels: 1; labels on the human scale: the human level; other scores: any positive (1)"


def qrels_level(scores: Scores, qrels: Mapping[str, Mapping[str, float]], level: int) -> int:
    """The relevance level of binary measures under a judgment set (whole-number scores) as
    qrels: 1 for 0/1 labels; ``level`` (the human one) for labels on the human grade scale;
    else 1, any positive score (win counts)."""
    values = {float(v) for docs in scores.values() for v in docs.values()}
    grades = [float(g) for docs in qrels.values() for g in docs.values()]
    if values <= {0.0, 1.0}:
        return 1
    if grades and all(min(grades) <= v <= max(grades) for v in values):
        return int(level)
    return 1


def _qrels_rankings(
    rep: SetReport,
    scores: Scores,
    runs: Mapping[str, Mapping[str, Mapping[str, float]]],
    report: Report,
    qrels: Mapping[str, Mapping[str, float]],
    *,
    level: int,
    complete: bool,
    n_boot: int,
    seed: int,
    scale: SetScale,
    top: int = 1,
) -> None:
    """Every human measure of the runs computed with the set as qrels, and the agreement of that
    system ranking with the one under the human qrels; a binary measure at the set's level
    (`qrels_level`, in its row as ``relevance_level``). A set of gains is the qrels as it is (an
    off-scale value read as the nearest end of its scale); its scores must be whole numbers (trec
    qrels), else it is skipped, and says so. A set whose judge declares its values not gains (win
    counts, shares) is binarised at its declared cut for the measures with a relevance level
    (relevant documents get the grade ``top``, the highest human grade, so that they are relevant
    at any level of the human scale); a graded measure (nDCG) is not computed for it, and the
    note says why."""
    from reljudge.metrics.measures import at_relevance_level, relevance_level, system_measures, uses_gains

    if not rep.overlap:
        rep.qrels_ranking_note = "no judged document in common with the human qrels"
        return
    measures = list(report.measures)
    if scale.gains or not scale.declared:
        if any(float(v) != int(v) for docs in scores.values() for v in docs.values()):
            rep.qrels_ranking_note = "scores are not whole numbers: not usable as trec qrels"
            return
        as_qrels: Scores = clip_scores(scores, scale)
    else:
        graded = [m for m in measures if uses_gains(m)]
        measures = [m for m in measures if m not in graded]
        if graded:
            rep.qrels_ranking_note = (
                f"{', '.join(graded)}: the values are not gains ({scale.what}); measures with a "
                f"relevance level read the set as relevant when {scale.relevant}"
            )
        as_qrels = {
            q: {d: top if float(v) >= scale.threshold else 0 for d, v in docs.items()}
            for q, docs in scores.items()
        }
    level = qrels_level(as_qrels, qrels, level)
    for name in measures:
        human = report.measures[name]
        definition = at_relevance_level(name, level)
        under_set = system_measures(as_qrels, runs, definition, complete=complete)
        row = _ranking_row(human, under_set, report.mean_of(name), n_boot=n_boot, seed=seed)
        binary = relevance_level(definition)
        if row and binary is not None:
            row["relevance_level"] = binary
        if row:
            rep.qrels_ranking[name] = row


def evaluate(
    qrels: Mapping[str, Mapping[str, float]],
    sets: Sequence[JudgmentSet],
    runs: Mapping[str, Mapping[str, Mapping[str, float]]] | None = None,
    *,
    measure: str = "ndcg_cut_10",
    extra_measures: Sequence[str] = (),
    p: float = DEFAULT_P,
    depth: int = DEFAULT_DEPTH,
    unacceptable: float = 0,
    human_threshold: float = 2,
    judge_threshold: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    alignment_average: str = "pairs",
    pairs: Sequence[tuple[str, str, str]] | None = None,
    relevance_level: int = 1,
    relevance_level_source: str = "trec_eval's default",
    complete: bool = False,
) -> Report:
    """Compute everything ``judge evaluate`` reports (see the module docstring).
    ``relevance_level``: binary measures count ``grade >= relevance_level`` as relevant
    (``relevance_level_source`` says where it comes from); ``complete``: trec_eval's ``-c``."""
    from reljudge.metrics.measures import at_relevance_level, system_measures

    qrels = {q: dict(d) for q, d in qrels.items()}
    topics = set(qrels)
    asked = list(dict.fromkeys([measure, *extra_measures]))
    report = Report(
        measure,
        p,
        [],
        settings={
            "unacceptable": unacceptable,
            "human_threshold": human_threshold,
            "judge_threshold": judge_threshold if judge_threshold is not None else "declared per set",
            "depth": depth,
            "n_boot": n_boot,
            "seed": seed,
            "alignment_average": alignment_average,
            "alignment_pairs": "all cross-category pairs" if pairs is None else f"{len(pairs)} given pairs",
            "relevance_level": relevance_level,
            "relevance_level_source": relevance_level_source,
            "measure_definitions": {name: at_relevance_level(name, relevance_level) for name in asked},
            "averaging": "complete" if complete else "run topics",
            "ranking": COMPLETE_NOTE if complete else RANKING_NOTE,
            **({"ranking_interval": interval_note(n_boot)} if n_boot > 0 else {}),
        },
        runs=list(runs or {}),
        topics=sum(1 for d in qrels.values() if d),
    )
    if runs:
        for name in asked:
            definition = report.settings["measure_definitions"][name]
            report.measures[name] = system_measures(qrels, runs, definition, complete=complete)
        report.human_measure = report.measures[measure]
        for name, run in runs.items():
            lacking = sorted(q for q, docs in qrels.items() if docs and not run.get(q))
            if lacking:
                report.missing_topics[name] = lacking
    grades = [float(g) for docs in qrels.values() for g in docs.values()]
    human_scale = (min(grades), max(grades)) if grades else (0.0, 0.0)
    positions = None  # run -> qid -> docid -> rank, shared by all sets
    for js in sets:
        scores, dropped = restrict(js.scores, topics)
        prefs = [r for r in js.preferences if r[0] in topics] if js.preferences is not None else None
        scale = read_scale(
            js.meaning,
            scores,
            human_scale=human_scale,
            human_threshold=human_threshold,
            judge_scale=js.scale,
            judge_threshold=judge_threshold,
        )
        labels = JudgeLabels(
            qrels,
            scores,
            prefs,
            js.missing,
            unacceptable,
            human_threshold,
            scale.threshold,
            alignment_average=alignment_average,
            judge_scale=js.scale,
            judge_threshold_text=scale.relevant,
            grade_scale=scale.range if scale.grades else None,
            graded=scale.grades,
        )
        rep = SetReport(js.name, js.source, sum(len(d) for d in scores.values()), dropped)
        rep.topics = len({q for q, d in scores.items() if d} | {r[0] for r in prefs or ()})
        rep.scale = scale
        rep.overlap = sum(1 for q, docs in scores.items() for d in docs if d in qrels.get(q, {}))
        rep.measures = {m.name: m(labels) for m in judgment_measures()}
        if pairs is not None and prefs is None:  # alignment of a pointwise set on the given pairs only
            from dataclasses import replace

            from reljudge.metrics.alignment import ALIGNMENT, preferences_from_scores

            on_pairs = preferences_from_scores(scores, pairs, missing=js.missing)
            rep.measures["alignment"] = ALIGNMENT(replace(labels, preferences=on_pairs))
        if runs:
            scorer = Compatibility(scores, p=p, depth=depth)
            if positions is None:
                positions = {name: scorer.positions(run) for name, run in runs.items()}
            rep.compatibility = {name: scorer.score_positions(positions[name]).per_topic for name in runs}
            if complete:  # trec_eval -c: a topic the set judges positively and the run lacks scores 0
                for values in rep.compatibility.values():
                    values.update({q: 0.0 for q in scorer.topics if q not in values})
            rep.ranking = _ranking_row(
                report.human_measure, rep.compatibility, report.mean_measure(), n_boot=n_boot, seed=seed
            )
            top = max(1, int(human_scale[1]))
            _qrels_rankings(
                rep,
                scores,
                runs,
                report,
                qrels,
                level=relevance_level,
                complete=complete,
                n_boot=n_boot,
                seed=seed,
                scale=scale,
                top=top,
            )
        report.sets.append(rep)
    return report
