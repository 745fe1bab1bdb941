"""What ``judge evaluate`` prints: a table per judge-quality measure of the registry (a measure
without a table of its own here gets a plain one of its columns), the two ranking-agreement
tables and, with answers, the ranking of generators and runs on one scale; what each set's values
mean (its judge's declaration: gains or not, the cut that makes a document relevant, off-scale
labels); `warnings` lists the sets that share no judged document with the human qrels,
`coverage_warnings` the sets and runs that do not cover the human qrels' topics,
`off_scale_warnings` the sets with labels off their scale.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from reljudge.analyses.evaluate.comparison import QRELS_LEVEL_RULE, Report, SetReport
from reljudge.analyses.evaluate.scales import off_scale_warning
from reljudge.analyses.text_table import format_table, format_value
from reljudge.metrics.alignment import COMPARISONS
from reljudge.metrics.base import JudgmentMeasure
from reljudge.metrics.ranking import interval_note
from reljudge.metrics.registry import judgment_measures, ranking_measures

__all__ = ["coverage_warnings", "off_scale_warnings", "summary", "warnings"]

#: runs named one by one in a warning; the others are counted (all are in evaluation.json)
_LISTED_RUNS = 10


def _shares(fractions: tuple[float, float, float]) -> str:
    a, t, d = fractions
    return f"{format_value(100 * a, 1)}/{format_value(100 * t, 1)}/{format_value(100 * d, 1)}"


def _alignment_table(report: Report) -> str | None:
    rows = []
    for s in report.sets:
        outcome = s.measures.get("alignment")
        missing = (outcome.row or {}).get("missing", "-") if outcome is not None else "-"
        rows.append(
            [
                s.name,
                s.topics,
                *(_shares(s.alignment.fractions(comp)) for comp in COMPARISONS),
                _shares(s.alignment.macro),
                missing,
            ]
        )
    return (
        f"Human alignment, % agree/tie/disagree (topics: the set's topics with labels, of {report.topics} "
        "in the human qrels; missing: judged documents the set has no label for)\n"
        + format_table(["set", "topics", "BvU", "AvU", "BvA", "macro", "missing"], rows)
    )


def _kappa_table(report: Report) -> str | None:
    rows = [
        [
            s.name,
            s.kappa.get("judge_threshold", "-"),
            s.kappa.get("binary", math.nan),
            s.kappa.get("graded_unweighted", math.nan),
            s.kappa.get("graded_linear", math.nan),
            s.kappa.get("graded_quadratic", math.nan),
            s.kappa.get("graded_alpha_ordinal", math.nan),
        ]
        for s in report.sets
        if s.kappa.get("pairs")
    ]
    if not rows:
        return None
    thr = report.settings.get("human_threshold")
    return f"Cohen's kappa (human relevant: grade >= {thr:g})\n" + format_table(
        ["set", "judge rel.", "binary", "graded", "linear", "quadratic", "alpha ord."], rows
    )


def _scale_table(report: Report) -> str | None:
    """What each set's values mean and the cut that makes a document relevant."""
    rows = [
        [
            s.name,
            s.scale.what + ("" if s.scale.declared else " (read off the labels)"),
            "yes" if s.scale.gains else "no",
            s.scale.relevant + (" (--judge-threshold)" if s.scale.cut_from == "--judge-threshold" else ""),
            s.scale.n_off_scale,
        ]
        for s in report.sets
        if s.scale is not None
    ]
    if not rows:
        return None
    return "What the values mean (declared by each set's judge, or read off the labels)\n" + format_table(
        ["set", "values", "gains", "judge relevant", "off-scale"], rows
    )


#: console tables of their own, by measure name; any other measure gets `_plain_table`
_TABLES: dict[str, Callable[[Report], str | None]] = {"alignment": _alignment_table, "kappa": _kappa_table}


def _plain_table(report: Report, measure: JudgmentMeasure) -> str | None:
    found: list[tuple[SetReport, dict]] = []
    for s in report.sets:
        outcome = s.measures.get(measure.name)
        if outcome is not None and outcome.row is not None:
            found.append((s, dict(outcome.row)))
    if not found:
        return None
    columns = [c for c in measure.columns if any(c in row for _, row in found)]
    rows = [[s.name, *(row.get(c, math.nan) for c in columns)] for s, row in found]
    return f"{measure.description}\n" + format_table(["set", *columns], rows)


def _ranking_table(report: Report) -> str | None:
    measures = ranking_measures("evaluate")
    headers = ["set", "runs"]
    for m in measures:
        headers += [m.header, "95% CI"] if m.interval else [m.header]
    rows = []
    for s in report.sets:
        if not s.ranking:
            continue
        row: list[object] = [s.name, s.ranking["runs"]]
        for m in measures:
            row.append(s.ranking[m.name])
            if m.interval:
                low, high = (s.ranking[c] for c in m.interval_columns)
                row.append(f"[{format_value(low)}, {format_value(high)}]")
        rows.append(row)
    if not rows:
        return None
    return (
        f"System ranking: {report.measure} (human qrels) vs compatibility (p={report.p:g})\n"
        + format_table(headers, rows)
    )


def _qrels_ranking_table(report: Report) -> str | None:
    measures = ranking_measures("evaluate")
    headers = ["set", "measure", "set rel.", "runs"]
    for m in measures:
        headers += [m.header, "95% CI"] if m.interval else [m.header]
    rows: list[list[object]] = []
    for s in report.sets:
        for name, found in s.qrels_ranking.items():
            level = found.get("relevance_level")
            row: list[object] = [s.name, name, "-" if level is None else f">= {level}", found["runs"]]
            for m in measures:
                row.append(found[m.name])
                if m.interval:
                    low, high = (found[c] for c in m.interval_columns)
                    row.append(f"[{format_value(low)}, {format_value(high)}]")
            rows.append(row)
    skipped = [f"{s.name}: {s.qrels_ranking_note}" for s in report.sets if s.qrels_ranking_note]
    if not rows and not skipped:
        return None
    note = "".join(f"\nnot computed: {line}" for line in skipped)
    return (
        "System ranking: each measure under the set as qrels vs under the human qrels\n"
        f"(set rel.: a binary measure's relevance level under the set; {QRELS_LEVEL_RULE})\n"
        + (format_table(headers, rows) if rows else "(no set usable as qrels)")
        + note
    )


def _measures_note(report: Report) -> str:
    """The human measures as computed: their definitions, the relevance level of binary
    measures and where it comes from, and the topics a run's mean is over."""
    settings = report.settings
    names = ", ".join(
        name if name == definition else f"{name} = {definition}"
        for name, definition in settings.get("measure_definitions", {}).items()
    )
    level = (f"binary measures count grade >= {settings.get('relevance_level')} as relevant "
             f"({settings.get('relevance_level_source')})")  # fmt: skip
    if settings.get("averaging") == "complete":
        topics = f"run means over all {report.topics} topics of the qrels, a missing topic scoring 0 (trec_eval -c)"
    else:
        topics = "run means over each run's own topics with qrels (trec_eval without -c)"
    return f"Human measures: {names}; {level}; {topics}"


def _system_ranking_table(section: Mapping[str, Any]) -> str:
    """Generators and runs in one ranking (``judge evaluate --answers``)."""
    measure = section["measure"]
    head = (f"generators and runs on one scale: similarity = mean cosine to the top-grade passages "
            f"({section['average']}; encoder {section['encoder']}); generators have no {measure}")  # fmt: skip
    table = [[i, r["system"], r["kind"], r["similarity"], r[measure], r["pairs"]]
             for i, r in enumerate(section["systems"], 1)]  # fmt: skip
    lines = [head, format_table(["rank", "system", "kind", "similarity", measure, "pairs"], table)]
    ag = section.get("agreement")
    if ag:
        lines.append(
            f"runs: Kendall tau-b(similarity, {measure}) = {ag['tau_b']:.3f} (p = {ag['p']:.2g}, {ag['systems']} runs)"
        )
    return "\n".join(lines)


def warnings(report: Report) -> list[str]:
    """One line per judgment set that shares no judged document with the human qrels (labels of
    another collection, or another topic set): its agreement numbers are empty, not zero."""
    lines = []
    for s in report.sets:
        if s.overlap == 0:
            why = (
                f"{s.dropped_topics} of its topics are not in the human qrels"
                if s.dropped_topics
                else "no document in common"
            )
            lines.append(
                f"warning: {s.name}: no judged document in common with the human qrels ({why}); are they for another collection?"
            )
    return lines


def coverage_warnings(report: Report) -> list[str]:
    """A line naming the judgment sets and their topic counts when one labels fewer topics than
    the human qrels judge, and one naming the runs that lack topics of the human qrels (and how
    they were averaged). Sets that share no judged document get their own warning (`warnings`)."""
    lines = []
    sets = [s for s in report.sets if s.overlap]
    if any(s.topics < report.topics for s in sets):
        counts = sorted({s.topics for s in sets}, reverse=True)
        listed = "; ".join(
            f"{n} topic{'' if n == 1 else 's'}: " + ", ".join(s.name for s in sets if s.topics == n)
            for n in counts
        )
        lines.append(
            f"warning: judgment sets label different topics of the {report.topics} the human qrels judge "
            f"({listed}); each set's numbers are over its own topics"
        )
    if report.missing_topics:
        missing = sorted(report.missing_topics.items(), key=lambda item: (-len(item[1]), item[0]))
        listed = ", ".join(f"{run} {report.topics - len(qids)}" for run, qids in missing[:_LISTED_RUNS])
        if len(missing) > _LISTED_RUNS:
            listed += f" and {len(missing) - _LISTED_RUNS} more (runs_missing_topics in evaluation.json)"
        how = (
            "they score 0 on the missing topics (--complete, trec_eval -c)"
            if report.settings.get("averaging") == "complete"
            else "their means are over their own topics (trec_eval's default; --complete scores a missing topic 0)"
        )
        lines.append(
            f"warning: {len(missing)} of {len(report.runs)} runs lack topics of the {report.topics} the human "
            f"qrels judge (topics ranked: {listed}); {how}"
        )
    return lines


def off_scale_warnings(report: Report) -> list[str]:
    """One line per set with labels off its scale: the set, the values and how many labels have
    each, and how they are read (`reljudge.analyses.evaluate.scales.off_scale_warning`)."""
    found = (off_scale_warning(s.name, s.scale) for s in report.sets if s.scale is not None)
    return [line for line in found if line is not None]


def summary(report: Report) -> str:
    """Human-readable tables of the report."""
    parts = []
    for m in judgment_measures():
        table = _TABLES[m.name](report) if m.name in _TABLES else _plain_table(report, m)
        if table is not None:
            parts.append(table)
    if report.runs:
        parts.append(_measures_note(report))
    rankings = [t for t in (_ranking_table(report), _qrels_ranking_table(report)) if t is not None]
    scale = _scale_table(report)
    if scale is not None:
        parts.append(scale)
    parts += rankings
    if rankings and report.settings.get("n_boot"):  # what the intervals in those tables are
        parts.append(interval_note(int(report.settings["n_boot"]), width=100))
    if report.system_ranking:
        parts.append(_system_ranking_table(report.system_ranking))
    return "\n\n".join(parts)
