"""What a judgment set's values mean in ``judge evaluate``, and what that implies (`read_scale`).

A set's meaning is what its judge declares (`reljudge.aggregation.ScoreMeaning`, found by the
set's name through the judge registry): whether its values are gains, whether they are grades on
the human scale, the range they lie in, and the binary cut that makes a document relevant. A set
no judge declares (a custom judge's labels, a file named otherwise) is read off its values, as
labels: whole numbers 0/1 are binary labels (relevant at 1), other whole numbers grades on the
human scale (relevant at the human level), float scores on a scale the records declare
(expected grades) are cut on that scale (`reljudge.metrics.kappa.scale_threshold`), and other
float scores are of unknown meaning (not gains; relevant when > 0).

The binary cut is the declared one whatever the values are; ``--judge-threshold`` overrides it for
every set, and says so. Values outside the declared range (or, for grades, the human scale)
are *off the scale*: they are counted, named in a warning (`off_scale_warning`) and in the
output, and read by one rule: for graded κ/α and as qrels gains, an off-scale value is read as
the nearest end of the range (a 5 among 0-3 grades counts as 3); the binary cut is unchanged (a
5 is relevant as a 3 is); alignment and compatibility use the values as given (only their order
matters there).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from reljudge.metrics.kappa import scale_threshold

__all__ = ["SetScale", "clip_scores", "off_scale_warning", "read_scale"]


class Declared(Protocol):
    """A judge's declaration of what a set's values mean (`reljudge.aggregation.ScoreMeaning`)."""

    @property
    def what(self) -> str: ...
    @property
    def gains(self) -> bool: ...
    @property
    def grades(self) -> bool: ...
    @property
    def scale(self) -> tuple[float, float] | None: ...
    @property
    def cut(self) -> float | None: ...
    @property
    def strict(self) -> bool: ...


@dataclass(frozen=True)
class SetScale:
    """How ``judge evaluate`` reads one set's values (see the module docstring)."""

    #: what the values are, in words
    what: str
    #: True: declared by the set's judge; False: read off the values
    declared: bool
    gains: bool
    grades: bool
    #: the range the values should lie in (the human scale for grades); None: unbounded
    range: tuple[float, float] | None
    #: a document is relevant when its value is >= this (binary κ/α; binary measures as qrels)
    threshold: float
    #: the cut as printed (``>= 2``, ``> 0``, ``>= 1.5 (judge scale 0-3)``)
    relevant: str
    #: where the cut comes from: ``declared``, ``labels`` or ``--judge-threshold``
    cut_from: str
    #: off-scale values and how many labels have each
    off_scale: dict[float, int] = field(default_factory=dict)
    #: how many labels the set has (on the topics of the human qrels)
    labels: int = 0

    @property
    def n_off_scale(self) -> int:
        return sum(self.off_scale.values())

    @property
    def rule(self) -> str:
        """How off-scale values are read (see the module docstring)."""
        if self.range is None:
            return ""
        lo, hi = self.range
        unchanged = f"the binary cut ({self.relevant}) is unchanged"
        if not self.gains:
            return f"counted only (the values are not gains); {unchanged}"
        uses = "for graded kappa/alpha and as qrels gains" if self.grades else "as qrels gains"
        return f"read as the nearest end of {lo:g}-{hi:g} {uses}; {unchanged}"

    def as_dict(self) -> dict[str, Any]:
        """The set's ``scale`` entry in ``evaluation.json``."""
        return {
            "meaning": self.what,
            "declared": self.declared,
            "gains": self.gains,
            "grades": self.grades,
            "range": list(self.range) if self.range is not None else None,
            "judge_relevant": self.relevant,
            "cut_from": self.cut_from,
            "off_scale": {
                "labels": self.n_off_scale,
                "values": {f"{v:g}": n for v, n in sorted(self.off_scale.items())},
                "rule": self.rule if self.off_scale else "",
            },
        }


def _values(scores: Mapping[str, Mapping[str, float]]) -> np.ndarray:
    return np.fromiter((float(v) for docs in scores.values() for v in docs.values()), dtype=float)


def read_scale(
    declared: Declared | None,
    scores: Mapping[str, Mapping[str, float]],
    *,
    human_scale: tuple[float, float],
    human_threshold: float,
    judge_scale: tuple[float, float] | None = None,
    judge_threshold: float | None = None,
) -> SetScale:
    """How to read a set with these ``scores``: by its judge's ``declared`` meaning, else off its
    values (see the module docstring). ``human_scale``: the lowest and highest human grade;
    ``judge_scale``: the scale the set's records declare for float scores (expected grades);
    ``judge_threshold``: ``--judge-threshold``, which overrides the cut of every set."""
    values = _values(scores)
    whole = bool(np.all(values == np.floor(values)))
    if declared is not None:
        what, gains, grades, cut, strict = (
            declared.what,
            declared.gains,
            declared.grades,
            declared.cut,
            declared.strict,
        )
        bounds = declared.scale if declared.scale is not None else human_scale if grades else None
    elif whole and set(values.tolist()) <= {0.0, 1.0}:
        what, gains, grades, cut, strict, bounds = (
            "labels 0/1, 1 relevant",
            True,
            False,
            1.0,
            False,
            (0.0, 1.0),
        )
    elif whole:
        what, gains, grades, cut, strict, bounds = (
            "grades on the human scale",
            True,
            True,
            None,
            False,
            human_scale,
        )
    elif judge_scale is not None:
        what, gains, grades, cut, strict, bounds = (
            "expected grades on the judge's scale",
            True,
            False,
            None,
            False,
            None,
        )
    else:
        what, gains, grades, cut, strict, bounds = (
            "scores of undeclared meaning",
            False,
            False,
            0.0,
            True,
            None,
        )
    if judge_threshold is not None:
        threshold, relevant, cut_from = judge_threshold, f">= {judge_threshold:g}", "--judge-threshold"
    else:
        cut_from = "declared" if declared is not None else "labels"
        if cut is not None:
            threshold = float(np.nextafter(cut, np.inf)) if strict else float(cut)
            relevant = f"{'>' if strict else '>='} {cut:g}"
        elif judge_scale is not None and not whole:
            threshold, relevant = scale_threshold(
                judge_scale, np.asarray(human_scale, float), human_threshold
            )
        else:
            threshold, relevant = float(human_threshold), f">= {human_threshold:g}"
    off: dict[float, int] = {}
    if bounds is not None:
        lo, hi = float(bounds[0]), float(bounds[1])
        outside = values[(values < lo) | (values > hi)]
        found, counts = np.unique(outside, return_counts=True)
        off = {float(v): int(n) for v, n in zip(found, counts, strict=True)}
        bounds = (lo, hi)
    return SetScale(
        what, declared is not None, gains, grades, bounds, threshold, relevant, cut_from, off, values.size
    )


def clip_scores(scores: Mapping[str, Mapping[str, float]], scale: SetScale) -> dict[str, dict[str, float]]:
    """The scores with every off-scale value read as the nearest end of the set's range."""
    if not scale.off_scale or scale.range is None:
        return {q: dict(d) for q, d in scores.items()}
    lo, hi = scale.range
    return {q: {d: min(max(float(v), lo), hi) for d, v in docs.items()} for q, docs in scores.items()}


def off_scale_warning(name: str, scale: SetScale) -> str | None:
    """The warning for a set with off-scale values: the set, the values, their count and the rule."""
    if not scale.off_scale or scale.range is None:
        return None
    lo, hi = scale.range
    found = ", ".join(f"{v:g} ({n}x)" for v, n in sorted(scale.off_scale.items()))
    return (
        f"warning: {name}: {scale.n_off_scale} of {scale.labels} labels off the scale {lo:g}-{hi:g} "
        f"({scale.what}): {found}; {scale.rule}"
    )
