"""AutoNuggetizer: the six TREC RAG 2024 nugget scores of a passage (or answer).

Nugget assignment records are `Judgment`s with ``qid``, ``docid``, ``item_id`` (the nugget id
``qid/md5(text)``) and a numeric ``label``: support = 1.0, partial_support = 0.5,
not_support = 0.0 (`ASSIGNMENT_LABELS`, `assignment_label`). The label is authoritative; a
judge may keep the model's word in ``extra["assignment"]`` for the record. Importance
(vital/okay) comes from the nugget bank (`Nugget`), never from the record.

Scores, with per-nugget values s = 1 / 0.5 / 0 (strict: 1 for support, 0 otherwise) over the
nuggets the passage was assessed against (normally the top 20 of the bank, `select_nuggets`):

- All = mean of s over all nuggets; Vital = mean of s over the vital nuggets;
- Weighted = (sum_vital s + 0.5 * sum_okay s) / (|vital| + 0.5 * |okay|)
  (vital weight 1, okay weight 0.5; Pradeep et al. 2025, TREC RAG 2024);
- each with its strict twin.

Explicit edge cases instead of ``max(n, 1)`` hacks:

- a topic without vital nuggets has no Vital score (None, listed in `Exclusions.unscored`);
  ``empty_class="zero"`` gives 0.0 instead, as castorini's ``metrics.py`` and the published
  gpt-4o files do (there All > 0 with Vital = 0 everywhere on such topics);
- Weighted is defined as long as the passage has any valid nugget: with no okay nugget it
  equals Vital, with no vital nugget it equals All (no phantom 0.5 in the denominator);
- failed or missing assignments are left out of every denominator (``on_failure="exclude"``)
  or count as not_support (``on_failure="zero"``, nuggetizer's behaviour for ``failed``).

The published gpt-4o ``nuggets-weighted*`` files (Arabzadeh & Clarke, SIGIR 2025) use another
normalisation, (sum_vital s + 0.5 * sum_okay s) / (0.5 * |all|), which can exceed 1; pass
``weighted="thesis"`` to reproduce it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Literal

from reljudge.aggregation.exclusions import Exclusions, FailurePolicy, check_policy, collect
from reljudge.records import Judgment

Importance = Literal["vital", "okay"]
IMPORTANCES: tuple[str, ...] = ("vital", "okay")
ASSIGNMENT_LABELS: dict[str, float] = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}
NUGGET_SCORES: tuple[str, ...] = (
    "all",
    "all-strict",
    "vital",
    "vital-strict",
    "weighted",
    "weighted-strict",
)
NuggetScoreName = Literal["all", "all-strict", "vital", "vital-strict", "weighted", "weighted-strict"]
EmptyClass = Literal["undefined", "zero"]
Weighting = Literal["trec", "thesis"]
VITAL_WEIGHT = 1.0
OKAY_WEIGHT = 0.5
DEFAULT_TOP_K = 20


def nugget_id(qid: str, text: str) -> str:
    """Content-addressed nugget id ``qid/md5(text)`` (same scheme as EXAM questions)."""
    return f"{qid}/{hashlib.md5(text.encode('utf-8')).hexdigest()}"


def assignment_label(name: str) -> float:
    """``support`` -> 1.0, ``partial_support`` -> 0.5, ``not_support`` -> 0.0 (case, spaces,
    hyphens tolerated); anything else raises ValueError."""
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    if key not in ASSIGNMENT_LABELS:
        raise ValueError(
            f"unknown nugget assignment {name!r}; expected one of {', '.join(ASSIGNMENT_LABELS)}"
        )
    return ASSIGNMENT_LABELS[key]


@dataclass(frozen=True)
class Nugget:
    id: str
    qid: str
    text: str
    importance: Importance | None = None

    def __post_init__(self) -> None:
        if self.importance is not None and self.importance not in IMPORTANCES:
            raise ValueError(f"nugget importance must be vital or okay, got {self.importance!r}")

    @classmethod
    def create(cls, qid: str, text: str, importance: Importance | None = None) -> Nugget:
        """A nugget with its content-addressed id (text stripped)."""
        text = text.strip()
        return cls(id=nugget_id(qid, text), qid=qid, text=text, importance=importance)


def select_nuggets(nuggets: Iterable[Nugget], k: int | None = DEFAULT_TOP_K) -> list[Nugget]:
    """The first `k` nuggets of each topic after a stable vital-first sort (TREC RAG 2024).

    Within a class the bank's order (the creator's decreasing importance) is kept; nuggets
    without an importance come last. Topics keep their order of first appearance.
    ``k=None`` keeps every nugget (only sorts).
    """
    if k is not None and k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    rank = {"vital": 0, "okay": 1, None: 2}
    by_qid: dict[str, list[Nugget]] = {}
    for n in nuggets:
        by_qid.setdefault(n.qid, []).append(n)
    selected: list[Nugget] = []
    for group in by_qid.values():
        ordered = sorted(group, key=lambda n: rank[n.importance])
        selected.extend(ordered if k is None else ordered[:k])
    return selected


@dataclass(frozen=True)
class NuggetScores:
    """The six scores of one passage; None where undefined (see module doc)."""

    all: float
    all_strict: float
    vital: float | None
    vital_strict: float | None
    weighted: float
    weighted_strict: float

    def get(self, name: str) -> float | None:
        if name not in NUGGET_SCORES:
            raise ValueError(f"unknown nugget score {name!r}; choose one of {', '.join(NUGGET_SCORES)}")
        return getattr(self, name.replace("-", "_"))

    def as_dict(self) -> dict[str, float | None]:
        return {f.name.replace("_", "-"): getattr(self, f.name) for f in fields(self)}


@dataclass
class NuggetResult:
    """Scores ``{qid: {docid: NuggetScores}}`` plus what was left out."""

    scores: dict[str, dict[str, NuggetScores]]
    exclusions: Exclusions

    def qrels(self, name: str) -> dict[str, dict[str, float]]:
        """One score as ``{qid: {docid: value}}``; undefined values are left out (they are
        listed in ``exclusions.unscored``)."""
        out: dict[str, dict[str, float]] = {}
        for qid, docs in self.scores.items():
            for docid, s in docs.items():
                value = s.get(name)
                if value is not None:
                    out.setdefault(qid, {})[docid] = value
        return out


def _key(j: Judgment) -> tuple[str, str, str]:
    if j.docid is None or j.item_id is None:
        raise ValueError(
            f"nugget assignment record for topic {j.qid} needs docid and item_id "
            f"(got docid={j.docid!r}, item_id={j.item_id!r})"
        )
    return (j.qid, j.docid, j.item_id)


def _value(j: Judgment) -> float:
    if j.label not in (0, 0.5, 1):
        raise ValueError(
            f"a nugget assignment label is 1 (support), 0.5 (partial) or 0 (not support); "
            f"got {j.label!r} for {_key(j)}"
        )
    return float(j.label)


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def score_passage(
    values: Sequence[tuple[Importance, float]],
    *,
    empty_class: EmptyClass = "undefined",
    weighted: Weighting = "trec",
) -> NuggetScores:
    """The six scores from ``(importance, s)`` pairs of the valid nuggets of one passage."""
    if not values:
        raise ValueError("no nugget values to score")
    n = len(values)
    vital = [s for imp, s in values if imp == "vital"]
    okay = [s for imp, s in values if imp == "okay"]
    if len(vital) + len(okay) != n:
        raise ValueError("every nugget needs importance vital or okay")

    def strict(xs: Iterable[float]) -> float:
        return float(sum(1 for s in xs if s == 1.0))

    all_s = [s for _, s in values]
    v, vs = _ratio(sum(vital), len(vital)), _ratio(strict(vital), len(vital))
    if not vital and empty_class == "zero":
        v = vs = 0.0
    if weighted == "trec":
        den = VITAL_WEIGHT * len(vital) + OKAY_WEIGHT * len(okay)
    else:
        den = OKAY_WEIGHT * n
    w = (VITAL_WEIGHT * sum(vital) + OKAY_WEIGHT * sum(okay)) / den
    ws = (VITAL_WEIGHT * strict(vital) + OKAY_WEIGHT * strict(okay)) / den
    return NuggetScores(
        all=sum(all_s) / n,
        all_strict=strict(all_s) / n,
        vital=v,
        vital_strict=vs,
        weighted=w,
        weighted_strict=ws,
    )


def nugget_scores(
    judgments: Iterable[Judgment],
    nuggets: Iterable[Nugget],
    *,
    on_failure: FailurePolicy = "exclude",
    empty_class: EmptyClass = "undefined",
    weighted: Weighting = "trec",
) -> NuggetResult:
    """The six scores of every judged (qid, docid).

    `nuggets` are the nuggets each passage was assessed against (normally
    ``select_nuggets(bank)``); each needs an importance. An assignment to a nugget outside
    this list raises ValueError; a listed nugget with no assignment for a judged passage is
    reported as missing.
    """
    check_policy(on_failure)
    if empty_class not in ("undefined", "zero"):
        raise ValueError(f"empty_class must be 'undefined' or 'zero', not {empty_class!r}")
    if weighted not in ("trec", "thesis"):
        raise ValueError(f"weighted must be 'trec' or 'thesis', not {weighted!r}")
    bank: dict[str, Nugget] = {}
    by_qid: dict[str, list[Nugget]] = {}
    for nug in nuggets:
        if nug.importance is None:
            raise ValueError(f"nugget {nug.id} has no importance (vital/okay); score the nuggets first")
        if nug.id in bank:
            raise ValueError(f"nugget {nug.id} listed twice")
        bank[nug.id] = nug
        by_qid.setdefault(nug.qid, []).append(nug)

    exclusions = Exclusions(policy=on_failure)
    ok, failed = collect(judgments, _key, exclusions)
    assigned: dict[tuple[str, str], dict[str, float | None]] = {}
    for key, j in ok.items():
        assigned.setdefault(key[:2], {})[key[2]] = _value(j)
    for key in failed:
        assigned.setdefault(key[:2], {})[key[2]] = None
    for qid, _docid, item in [(q, d, i) for (q, d), items in assigned.items() for i in items]:
        given = bank.get(item)
        if given is None or given.qid != qid:
            raise ValueError(f"nugget {item} (topic {qid}) is not among the given nuggets")

    scores: dict[str, dict[str, NuggetScores]] = {}
    for (qid, docid), items in assigned.items():
        values: list[tuple[Importance, float]] = []
        for nug in by_qid.get(qid, []):
            if nug.id not in items:
                exclusions.missing.append((qid, docid, nug.id))
                value: float | None = None
            else:
                value = items[nug.id]
                if value is None and on_failure == "zero":
                    exclusions.zeroed += 1
            if value is None:
                if on_failure == "exclude":
                    continue
                value = 0.0
            assert nug.importance is not None
            values.append((nug.importance, value))
        if not values:
            exclusions.unscored.append((qid, docid, "no valid assignment"))
            continue
        s = score_passage(values, empty_class=empty_class, weighted=weighted)
        if s.vital is None:
            exclusions.unscored.append((qid, docid, "vital: no vital nugget"))
        scores.setdefault(qid, {})[docid] = s
    return NuggetResult(scores=scores, exclusions=exclusions)
