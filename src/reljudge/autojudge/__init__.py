"""Taking part in TREC AutoJudge: reljudge's judges over AutoJudge responses, written as the
files AutoJudge reads (``judge autojudge``; issue 28).

The Python API the ``auto-judge run`` adapter codes against::

    from reljudge.autojudge import AutoJudgeSpec, AutoJudgeResult, judge_responses

    result = judge_responses(AutoJudgeSpec(responses=[Path("runs/")], topics=Path("topics.jsonl"),
                                           method="umbrela", model="gpt-4o", out_dir=Path("out"),
                                           filebase="name"))
    result.eval_txt, result.measures_yml, result.qrels, result.nuggets, result.config_yml

Modules: `spec` (what to judge, what came out), `tracks` (each track's submission rules, pure),
`outputs` (the leaderboard, measures, qrels, nugget bank and config texts, pure), `files`
(reading the inputs, writing the derived inputs of the jobs and the outputs), `pipeline` (the
jobs through reljudge's run machinery) and `command` (``judge autojudge``).
"""

from __future__ import annotations

from reljudge.autojudge.spec import AutoJudgeResult, AutoJudgeSpec, NotFinished

__all__ = ["AutoJudgeResult", "AutoJudgeSpec", "NotFinished", "judge_responses"]


def judge_responses(spec: AutoJudgeSpec) -> AutoJudgeResult:
    """Judge the responses of ``spec`` and write the files AutoJudge reads (see
    `reljudge.autojudge.pipeline.judge_responses`)."""
    from reljudge.autojudge.pipeline import judge_responses as run

    return run(spec)
