"""The route of one UMBRELA record from ``judge run`` to ``qrels.txt``, as the architecture page
(``docs/contributing/architecture.md``) lists it: every module it names exists, the stops and the returns to a
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
ARCHITECTURE = ROOT / "docs" / "contributing" / "architecture.md"
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


def route() -> list[tuple[str, str]]:
    """(module, its mark: "↑" a return, "⤷" a branch, "" neither) of each numbered step of the
    architecture page's route."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text[text.index("**The route of one UMBRELA record") :]
    section = section[: section.index("\n\n", section.index("\n1. "))]
    steps = re.findall(r"^\d+\. (?:([↑⤷]) )?`([^`]+)`", section, re.M)
    return [(module.rstrip("/"), mark) for mark, module in steps]


def test_the_readme_route_names_existing_modules_and_counts_right():
    steps = route()
    assert [m for m, _ in steps][0] == "cli/run.py" and steps[-1][0] == "io/trec.py"
    for module, _ in steps:
        assert (SRC / module).exists(), (
            f"the architecture page's route names {module}, which is not in src/reljudge"
        )
    # a branch (⤷) leaves the route: the next step follows on from the step before the branch
    path = [i for i, (_, mark) in enumerate(steps) if mark != "⤷"]
    for i, (module, mark) in enumerate(steps):
        if mark == "⤷":
            assert i + 1 < len(steps) and floor(module) < floor(steps[i - 1][0]), "a branch goes down"
    climbs = [b for a, b in zip(path, path[1:], strict=False) if floor(steps[b][0]) > floor(steps[a][0])]
    assert [i for i, (_, mark) in enumerate(steps) if mark == "↑"] == climbs, (
        "↑ marks must be the steps up a floor"
    )
    stops = len({m for m, _ in steps})
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert f"That is {stops} modules" in text and f"and {len(climbs)} returns to a higher floor" in text
    assert stops <= 12 and len(climbs) <= 2


def source(module: str) -> str:
    return (SRC / module).read_text(encoding="utf-8")


def test_the_code_takes_the_route():
    """Each hand-over of the list, found in the module that makes it (a static check)."""
    job = source("run/job.py")
    assert "job.judge.run(job.inputs, ctx)" in job
    assert "writer.write(record)" in job and "session.scorer.add(record)" in job
    assert job.index("writer.write(record)") < job.index("session.scorer.add(record)"), "written, then scored"
    assert "session.scorer = job_scorer(job)" in job
    assert 'return job.judge.scorer({**job.inputs.resources, "order": job.pool.docs})' in source(
        "run/finish.py"
    )
    assert "await ctx.ask(" in source("judges/pointwise.py") and "record_from_answer(" in source(
        "judges/pointwise.py"
    )
    assert "Answer.of(result, prompt, parse)" in source("judges/context.py")
    finish = source("run/finish.py")
    assert "return session.tally, iter(()), session.scorer" in finish  # a fresh run reads nothing back
    assert "scan_bare_records(" in finish  # a resumed one streams the file into a new scorer
    assert "sets = scorer.finish()" in finish and "qrels_topics(result.scores" in finish
    assert "write_qrels(topics, job.rundir.qrels_path)" in finish
    assert "return ShapeScorer(methods=mine, **options)" in source("judges/base.py")
    # no second path: nothing else derives a run's qrels, and no copy of the record's fields is kept
    assert not (SRC / "aggregation" / "streamed.py").exists() and not (SRC / "io" / "label_views.py").exists()
    assert "BARE_FIELDS: tuple[str, ...] = tuple(name for name in Judgment.model_fields" in source(
        "io/judgments.py"
    )
