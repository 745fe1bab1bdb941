"""Judging methods, and the interface a third-party judge implements.

A plugin subclasses `Judge` (see `reljudge.judges.base` for what a method declares: its record
methods, prompts, resources, score sets) and registers through the ``reljudge.judges``
entry-point group (``name = "package.module:JudgeClass"``); `get_judge` and `available_judges`
find built-in and plugin judges alike, and `reljudge.judges.scoring` scores any mix of their
records.
"""

from reljudge.judges.base import CallEstimate, Judge, JudgeInputs, Resource, run_all, run_bounded
from reljudge.judges.context import JudgeContext
from reljudge.judges.registry import available_judges, get_judge, register

__all__ = [
    "CallEstimate",
    "Judge",
    "JudgeContext",
    "JudgeInputs",
    "Resource",
    "available_judges",
    "get_judge",
    "register",
    "run_all",
    "run_bounded",
]
