"""A pointwise judge from a plugin: this module and one template (``demo-grade.yaml``), nothing
else. It grades each pooled passage 0-3 with its own prompt; the records, qrels, evaluation,
export, sweeps and the batch path are the toolkit's, as for a built-in pointwise judge."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from reljudge.judges.pointwise import PointwiseJudge


class DemoGradeJudge(PointwiseJudge):
    """One call per (topic, passage), label 0..3, with the template next to this module."""

    name = "demo-grade"
    default_prompt = str(Path(__file__).with_name("demo-grade.yaml"))
    output_types: ClassVar[tuple[str, ...]] = ("graded",)
