"""The labels of one sweep cell, in the form the analysis reads.

Both sources of a sweep analysis end here: the run directories a sweep writes (judgment
records) and published judgment files (`reljudge.sweep.published`). A cell is one
(dataset, model, task, prompt). Pointwise tasks keep parallel ``qids``/``docids``/``values`` (valid labels only);
the pairwise task keeps one outcome per pair against the human grades: ``agree`` (the judge
preferred the document of the better human category), ``disagree`` (the worse one) or ``tie``
(no preference, or inconsistent preferences across the two presentation orders).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from reljudge.records import Usage

OUTCOMES: tuple[str, ...] = ("agree", "tie", "disagree")
#: pair types of the prompt-sensitivity sample -> the comparison names of `metrics.alignment`
PAIR_TYPES: dict[str, str] = {"mid_top": "BvA", "low_top": "BvU", "low_mid": "AvU"}

PairKey = tuple[str, str, str]  # (qid, docid, docid) with the two docids sorted


def pair_key(qid: str, a: str, b: str) -> PairKey:
    return (qid, a, b) if a <= b else (qid, b, a)


@dataclass
class CellLabels:
    dataset: str
    model: str
    task: str  # binary | graded | pairwise
    prompt: str
    group: str
    qids: list[str] = field(default_factory=list)  # pointwise: parallel to docids and values
    docids: list[str] = field(default_factory=list)
    values: np.ndarray = field(default_factory=lambda: np.zeros(0))
    outcomes: dict[PairKey, str] = field(default_factory=dict)
    comparisons: dict[PairKey, str] = field(default_factory=dict)  # BvA | BvU | AvU
    items: int = 0  # items judged (records, or lines of a published file)
    invalid: int = 0  # items without a usable label (unparsed, out of range, failed calls)
    #: pointwise items whose label was invalid, when the source names them (parallel lists);
    #: the analysis leaves them out or counts them as a category of their own (`Conventions.invalid`)
    invalid_qids: list[str] = field(default_factory=list)
    invalid_docids: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    price_known: bool = True
    source: str = ""

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.dataset, self.model, self.task, self.prompt)

    @property
    def labelled(self) -> int:
        return len(self.outcomes) if self.task == "pairwise" else len(self.docids)

    @property
    def scores(self) -> dict[str, dict[str, float]]:
        """Pointwise labels as ``{qid: {docid: label}}``."""
        out: dict[str, dict[str, float]] = {}
        for qid, docid, value in zip(self.qids, self.docids, self.values.tolist(), strict=True):
            out.setdefault(qid, {})[docid] = value
        return out

    @property
    def invalid_rate(self) -> float:
        return self.invalid / self.items if self.items else float("nan")
