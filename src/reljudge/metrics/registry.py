"""The measure registry: every measure the reports compute, registered here and nowhere else.

``judge evaluate`` runs every `JudgmentMeasure` on every judgment set (its ``fields`` go into
the set's entry of ``evaluation.json``, its rows into ``<name>.csv``, a table onto the console)
and every `RankingMeasure` tagged ``evaluate`` on the human-measure vs compatibility rankings
(``ranking.csv``); ``judge fd`` runs the ranking measures tagged ``fd`` on the human-measure
vs FD rankings; the sweep analysis takes its ranking measure by name (`ranking_measure`).

To add a measure: write it (a module, or a function beside its relatives) as a
`JudgmentMeasure` or `RankingMeasure` (`reljudge.metrics.base`), and add one `register`
line below. Registration order is report order.
"""

from __future__ import annotations

from reljudge.metrics.alignment import ALIGNMENT
from reljudge.metrics.base import JudgmentMeasure, RankingMeasure
from reljudge.metrics.kappa import KAPPA
from reljudge.metrics.ranking import KENDALL_TAU_B, RBO_P09, SPEARMAN, TAU_AP, TAU_AP_B

Measure = JudgmentMeasure | RankingMeasure

#: every registered measure by name, in registration (= report) order
MEASURES: dict[str, Measure] = {}
#: ranking measure name -> the commands whose reports carry it ("evaluate", "fd")
_REPORTED_BY: dict[str, frozenset[str]] = {}
_COMMANDS = frozenset({"evaluate", "fd"})


def register(measure: Measure, *, reported_by: frozenset[str] | set[str] = _COMMANDS) -> Measure:
    """Add ``measure`` under its name (which must be new). ``reported_by``: for a ranking
    measure, the commands whose reports carry it."""
    if measure.name in MEASURES:
        raise ValueError(f"a measure named {measure.name!r} is registered already")
    unknown = set(reported_by) - _COMMANDS
    if unknown:
        raise ValueError(f"unknown command(s) {sorted(unknown)}; choose from {sorted(_COMMANDS)}")
    MEASURES[measure.name] = measure
    if isinstance(measure, RankingMeasure):
        _REPORTED_BY[measure.name] = frozenset(reported_by)
    return measure


# --- judge quality: a judgment set against the human qrels --------------------------------
register(ALIGNMENT)
register(KAPPA)

# --- agreement of two system rankings -----------------------------------------------------
register(KENDALL_TAU_B)
register(SPEARMAN)
register(TAU_AP)
# the symmetric tie-aware AP correlation TREC AutoJudge reports (fd.json keeps its columns)
register(TAU_AP_B, reported_by={"evaluate"})
register(RBO_P09, reported_by={"evaluate"})  # fd.json has no RBO column


def judgment_measures() -> list[JudgmentMeasure]:
    """The judge-quality measures, in report order."""
    return [m for m in MEASURES.values() if isinstance(m, JudgmentMeasure)]


def ranking_measures(command: str | None = None) -> list[RankingMeasure]:
    """The ranking-agreement measures (those reported by ``command`` when given), in report order."""
    return [
        m
        for m in MEASURES.values()
        if isinstance(m, RankingMeasure) and (command is None or command in _REPORTED_BY[m.name])
    ]


def ranking_measure(name: str) -> RankingMeasure:
    """The ranking measure called ``name`` (its column, e.g. ``kendall_tau_b``, or its method, ``kendall``)."""
    for m in ranking_measures():
        if name in (m.name, m.method):
            return m
    known = ", ".join(m.name for m in ranking_measures())
    raise ValueError(f"unknown ranking measure {name!r}; choose from {known}")
