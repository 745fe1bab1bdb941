"""What ``judge calibrate`` prints: the cross-validated κ of the calibrated mapping against the
default threshold, each as the mean and the 2.5-97.5 % range over the topic splits."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["summary"]


def _fmt(block: dict[str, float] | None) -> str:
    if not block or math.isnan(block["mean"]):
        return "-"
    return f"{block['mean']:.3f} [{block['low']:.3f}, {block['high']:.3f}]"


def summary(result: Any) -> str:
    s = result.summary
    return "\n".join(
        [
            f"{s['set']}: {result.pairs} labelled pairs on {result.topics} topics; fitted on {s['fit_topics']} "
            f"topics, judged on the other {s['held_out_topics']}, {s['repeats']} random splits "
            f"(mean [2.5 %, 97.5 %] over the splits; human relevant: grade >= {s['human_threshold']:g})",
            f"binary kappa, calibrated threshold {_fmt(s['threshold'])}: {_fmt(s['binary_calibrated'])}",
            f"binary kappa, default threshold ({s['default_threshold']}): {_fmt(s['binary_default'])}",
            f"gain (paired): {_fmt(s['binary_gain'])}",
            f"graded kappa, calibrated cut-points: {_fmt(s['graded_calibrated'])}; "
            f"as labelled: {_fmt(s['graded_default'])}",
        ]
    )
