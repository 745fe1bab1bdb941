"""The top of a report: the few numbers a reader came for, before the details.

- a run: its records by status, the failure share, calls, tokens and cost, its state, and how
  often its labels disagree with the human grades;
- an evaluation: per judgment set, Kendall τ-b of the system ranking against the human one with
  its interval (and what the interval is), Cohen's κ with the human relevance levels (and the
  grade that counts as relevant), over which topics, runs and labels;
- a sweep: its cells, calls, cost and invalid answers; per task the best and worst prompt; and
  which factor (prompt, model, dataset) moves the agreement with the humans most and least.

Every number here is read from the files the command wrote (a run's manifest and records,
``evaluation.json``, ``cells.csv``); nothing is computed that the files do not hold, except the
sweep's spread of a metric over a factor's levels (`factor_spread`), which says how it is made.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Card:
    """One key number: what it is, its value, a short note under it; ``bad`` marks a problem."""

    what: str
    value: str
    note: str = ""
    bad: bool = False


@dataclass
class Headline:
    """The top section of a page: cards, an optional small table and lines of explanation."""

    title: str
    cards: list[Card] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


def _num(value: Any, digits: int = 3) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return "–"
    return f"{value:.{digits}f}"


def _int(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "–"


def _map(value: Any) -> Mapping[str, Any]:
    """A section of a JSON file, or an empty one when it is missing or not an object."""
    return value if isinstance(value, Mapping) else {}


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "–"


# --- a run -------------------------------------------------------------------------------------


def run_headline(
    *,
    what: str,
    status_counts: Mapping[str, int],
    usage: Mapping[str, Any],
    state: str,
    human_known: int,
    disagreements: int,
    relevant_threshold: float,
) -> Headline:
    """The key numbers of a run directory (its manifest's usage, its latest record per item)."""
    total = sum(status_counts.values())
    ok = status_counts.get("ok", 0)
    failed = total - ok
    by_status = ", ".join(
        f"{s} {n:,}" for s, n in sorted(status_counts.items(), key=lambda i: (i[0] != "ok", i[0]))
    )
    cards = [
        Card("records", f"{total:,}", by_status or "none", bad=failed > 0),
        Card("failure share", _share(failed, total), f"{failed:,} not labelled", bad=failed > 0),
    ]
    calls = usage.get("calls")
    cards.append(Card("calls", _int(calls), "to the model, all records"))
    cost = usage.get("cost_usd")
    tokens = [usage.get(k) for k in ("prompt_tokens", "completion_tokens")]
    cards.append(
        Card(
            "cost",
            f"${float(cost):.4f}" if isinstance(cost, int | float) else "–",
            f"{_int(tokens[0])} prompt + {_int(tokens[1])} completion tokens",
        )
    )
    cards.append(Card("state", state, "", bad=state not in ("finished", "-")))
    if human_known:
        cards.append(
            Card(
                "disagreements with the humans",
                f"{disagreements:,} of {human_known:,}",
                f"{_share(disagreements, human_known)}; relevant: grade >= {relevant_threshold:g}",
            )
        )
    return Headline("Run at a glance", cards, lines=[what])


# --- an evaluation ---------------------------------------------------------------------------


def _interval(row: Mapping[str, Any]) -> str:
    low, high = row.get("kendall_ci_low"), row.get("kendall_ci_high")
    if not isinstance(low, int | float) or not isinstance(high, int | float):
        return ""
    return f" [{_num(low)}, {_num(high)}]"


def _tau(row: Any) -> str:
    if not isinstance(row, Mapping) or "kendall_tau_b" not in row:
        return "–"
    return _num(row.get("kendall_tau_b")) + _interval(row)


def evaluation_headline(data: Mapping[str, Any]) -> Headline:
    """The key numbers of an ``evaluation.json`` content: a row per judgment set."""
    settings = _map(data.get("settings"))
    sets = [s for s in data.get("sets") or [] if isinstance(s, Mapping)]
    measure = str(data.get("measure") or "-")
    measure_name = str(_map(settings.get("measure_definitions")).get(measure, measure))
    runs = len(_map(data.get("human_measure")))
    ranked = any(s.get("ranking_agreement") for s in sets)
    topics = data.get("topics")
    label = settings.get("label")
    cards = [
        Card("topics", _int(topics), "judged in the human qrels" + (f" ({label})" if label else "")),
        Card("judgment sets", f"{len(sets):,}", f"{sum(int(s.get('labels') or 0) for s in sets):,} labels"),
        Card(
            "runs ranked",
            f"{runs:,}" if runs else "none",
            f"by {measure_name}" if runs else "give --runs DIR for Kendall τ of the system ranking",
            bad=not runs,
        ),
    ]
    human_cut = settings.get("human_threshold")
    columns = [
        "set",
        "topics",
        "labels",
        "τ-b, set as qrels [95% CI]",
        "τ-b, compatibility [95% CI]",
        "κ binary",
        "judge relevant",
        "κ graded (quadratic)",
    ]
    rows = []
    for s in sets:
        kappa = _map(s.get("kappa"))
        qrels_row = _map(s.get("qrels_ranking_agreement")).get(measure)
        rows.append(
            [
                str(s.get("name", "")),
                _int(s.get("topics")),
                _int(s.get("labels")),
                _tau(qrels_row),
                _tau(s.get("ranking_agreement")),
                _num(kappa.get("binary")),
                str(kappa.get("judge_threshold", "–")),
                _num(kappa.get("graded_quadratic")),
            ]
        )
    if len(sets) == 1:  # the set's own numbers as cards too
        only = rows[0]
        kappa_card = Card(
            "Cohen's κ (binary)", only[5], f"judge relevant {only[6]}; human relevant grade >= {human_cut}"
        )
        tau_card = Card(f"Kendall τ-b ({measure_name}, set as qrels)", only[3], "95% CI in brackets")
        cards[1:1] = [tau_card, kappa_card] if ranked else [kappa_card]
    lines = []
    if ranked:
        n_boot = settings.get("n_boot")
        interval = settings.get("ranking_interval")
        if n_boot == 0:
            lines.append("No interval for τ: the evaluation was made with --bootstrap 0.")
        elif isinstance(interval, str):
            lines.append(f"The interval in brackets: {interval}")
        lines.append(
            f"Kendall τ-b between two system rankings of the {runs} runs: by {measure_name} under the human "
            f"qrels, and by {measure_name} with the set's labels as qrels (set as qrels) or by each run's "
            "compatibility with the set's labels (compatibility)."
        )
        skipped = [
            (str(s.get("name", "")), str(s.get("qrels_ranking_note")))
            for s in sets
            if s.get("qrels_ranking_note")
        ]
        if skipped:
            names = ", ".join(name for name, _ in skipped)
            lines.append(f"Set as qrels, –: not computed for {names} (for example {skipped[0][1]}).")
    else:
        lines.append("No system ranking: the evaluation was made without --runs, so there is no Kendall τ.")
    source = settings.get("relevance_level_source")
    lines.append(
        f"κ counts a human grade >= {human_cut} as relevant"
        + (f" ({source})" if source else "")
        + "; the judge's cut is in each row (judge relevant)."
    )
    return Headline("Evaluation at a glance", cards, columns, rows, lines)


# --- a sweep ---------------------------------------------------------------------------------

FACTORS = ("prompt", "model", "dataset")


def _value(row: Mapping[str, str]) -> float:
    try:
        value = float(row.get("value") or "nan")
    except ValueError:
        return math.nan
    return value


def factor_spread(rows: Sequence[Mapping[str, str]], factor: str) -> float:
    """How far the cell metric moves when only ``factor`` changes: the range (max − min) over the
    factor's levels among cells alike in everything else (task, and the other factors), averaged
    over those groups; NaN when no group has two levels."""
    groups: dict[tuple[str, ...], list[float]] = {}
    others = [f for f in FACTORS if f != factor]
    for row in rows:
        value = _value(row)
        if math.isfinite(value):
            groups.setdefault((row.get("task", ""), *(row.get(f, "") for f in others)), []).append(value)
    spreads = [max(v) - min(v) for v in groups.values() if len(v) > 1]
    return sum(spreads) / len(spreads) if spreads else math.nan


def _total(rows: Sequence[Mapping[str, str]], column: str) -> float:
    """The sum of a numeric column over the rows (blank or non-numeric cells count 0)."""
    total = 0.0
    for row in rows:
        try:
            value = float(row.get(column) or "nan")
        except ValueError:
            continue
        total += value if math.isfinite(value) else 0.0
    return total


def sweep_headline(rows: Sequence[Mapping[str, str]]) -> Headline:
    """The key numbers of a sweep's ``cells.csv`` rows (one per dataset × model × task × prompt)."""
    levels = {f: sorted({r.get(f, "") for r in rows}) for f in (*FACTORS, "task")}
    calls, cost = int(_total(rows, "calls")), _total(rows, "cost_usd")
    items, invalid = int(_total(rows, "items")), int(_total(rows, "invalid"))
    shape = " × ".join(
        f"{len(levels[f])} {f}{'' if len(levels[f]) == 1 else 's'}"
        for f in ("dataset", "model", "task", "prompt")
    )
    cards = [
        Card("cells", f"{len(rows):,}", shape),
        Card("calls", f"{calls:,}", "all cells"),
        Card("cost", f"${cost:.4f}", "all cells (unpriced models count 0)"),
        Card("invalid answers", _share(invalid, items), f"{invalid:,} of {items:,} items", bad=invalid > 0),
    ]
    spreads = {f: factor_spread(rows, f) for f in FACTORS}
    varied = sorted((f for f in FACTORS if math.isfinite(spreads[f])), key=lambda f: -spreads[f])
    fixed = [f"1 {f}" for f in FACTORS if len(levels[f]) == 1]
    if varied:
        most = varied[0]
        only = f"only the {most} varies ({', '.join(fixed)})" if len(varied) == 1 else ""
        cards.append(Card("most sensitive to", f"the {most}", only or f"average spread {spreads[most]:.3f}"))
        if len(varied) > 1:
            least = varied[-1]
            cards.append(Card("least sensitive to", f"the {least}", f"average spread {spreads[least]:.3f}"))
    columns = [
        "task",
        "metric",
        "cells",
        "best prompt",
        "worst prompt",
        *(f"spread over {f}s" for f in FACTORS),
    ]
    table = []
    for task in levels["task"]:
        mine = [r for r in rows if r.get("task") == task and math.isfinite(_value(r))]
        if not mine:
            continue
        by_prompt: dict[str, list[float]] = {}
        for r in mine:
            by_prompt.setdefault(r.get("prompt", ""), []).append(_value(r))
        means = sorted(((sum(v) / len(v), p) for p, v in by_prompt.items()), reverse=True)
        table.append(
            [
                task,
                mine[0].get("metric", ""),
                f"{len(mine):,}",
                f"{means[0][1]} ({means[0][0]:.3f})",
                f"{means[-1][1]} ({means[-1][0]:.3f})",
                *(_num(factor_spread(mine, f)) for f in FACTORS),
            ]
        )
    lines = [
        "metric: Cohen's κ with the human labels (binary, graded) or the share of pairs agreeing with the human "
        "order (pairwise); a prompt's value is its mean over models and datasets.",
        "spread over a factor: the range (max − min) of the metric over the factor's levels among cells alike in "
        "everything else, averaged; – where the factor has one level. The most sensitive factor has the "
        "largest spread.",
    ]
    return Headline("Sweep at a glance", cards, columns, table, lines)
