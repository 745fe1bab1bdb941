"""The route of one UMBRELA record from ``judge run`` to ``qrels.txt``, as README.md's
Architecture section lists it: every module it names exists, the stops and the returns to a
higher floor are what the text says (and no more than 12 stops), and the code takes that route
(the calls that make each step are where the list says).

The floors are `tests/test_layering.py`'s, lowest first: records/errors/version < io <
datasets/llm/prompts < aggregation < judges < metrics < the applications < cli.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "reljudge"
FLOORS = {
    "io": 1,
    "datasets": 2,
    "llm": 2,
    "prompts": 2,
    "aggregation": 3,
    "judges": 4,
    "metrics": 5,
    "cli": 7,
}
APPLICATIONS = 6  # run, export, evaluation, sweep, ...


def floor(module: str) -> int:
    top = module.split("/")[0].removesuffix(".py")
    if top in ("records", "errors", "version"):
        return 0
    return FLOORS.get(top, APPLICATIONS)


def route() -> list[tuple[str, bool]]:
    """(module, marked as a return) of each numbered step of the README's route."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("**The route of one UMBRELA record") :]
    section = section[: section.index("\n\n", section.index("\n1. "))]
    steps = re.findall(r"^\d+\. (↑ )?`([^`]+)`", section, re.M)
    return [(module.rstrip("/"), bool(up)) for up, module in steps]


def test_the_readme_route_names_existing_modules_and_counts_right():
    steps = route()
    assert [m for m, _ in steps][0] == "cli/run.py" and steps[-1][0] == "io/trec.py"
    for module, _ in steps:
        assert (SRC / module).exists(), f"README route names {module}, which is not in src/reljudge"
    climbs = [i for i in range(1, len(steps)) if floor(steps[i][0]) > floor(steps[i - 1][0])]
    assert [i for i, (_, up) in enumerate(steps) if up] == climbs, "↑ marks must be the steps up a floor"
    stops = len({m for m, _ in steps})
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"That is {stops} modules" in text and f"and {len(climbs)} returns to a higher floor" in text
    assert stops <= 12 and len(climbs) <= 3


def source(module: str) -> str:
    return (SRC / module).read_text(encoding="utf-8")


def test_the_code_takes_the_route():
    """Each hand-over of the list, found in the module that makes it (a static check)."""
    assert "job.judge.run(job.inputs, ctx)" in source("run/job.py")
    assert "writer.write(record)" in source("run/job.py")
    assert "await ctx.ask(" in source("judges/pointwise.py") and "record_from_answer(" in source(
        "judges/pointwise.py"
    )
    assert "Answer.of(result, prompt, parse)" in source("judges/context.py")
    finish = source("run/finish.py")
    assert "scan_bare_records(" in finish and "job.judge.score_sets(records" in finish
    assert "write_qrels(topics, job.rundir.qrels_path)" in finish and "qrels_topics(result.scores" in finish
    base = source("judges/base.py")
    assert "return shape_sets(records, methods=mine, **options)" in base
    # no second path: nothing else derives a run's qrels, and no copy of the record's fields is kept
    assert not (SRC / "aggregation" / "streamed.py").exists() and not (SRC / "io" / "label_views.py").exists()
    assert "BARE_FIELDS: tuple[str, ...] = tuple(name for name in Judgment.model_fields" in source(
        "io/judgments.py"
    )
