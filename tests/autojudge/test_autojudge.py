"""``judge autojudge`` and `reljudge.autojudge.judge_responses` end to end against the mock LLM
server on the TREC AutoJudge starter kit's kiddie sample (tests/io/autojudge_kiddie): each method
writes the files AutoJudge reads; the same spec again makes no request; a replay from the cache
alone with the endpoint gone writes byte-identical files; the leaderboard reads back through
``judge leaderboard``'s reader; bad input is FILE:LINE with nothing written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from _cli import judge
from reljudge.autojudge import AutoJudgeSpec, NotFinished, judge_responses
from reljudge.autojudge.pipeline import METHODS, PAIRWISE
from reljudge.errors import EXIT_BAD_INPUT, InputError
from reljudge.testing import AutoResponder, MockLLMServer

KIDDIE = Path(__file__).resolve().parent.parent / "io" / "autojudge_kiddie"
TOPICS = KIDDIE / "topics" / "kiddie-topics.jsonl"
RUNS = KIDDIE / "runs"
MODEL = "openai/mock-model"
TOPIC_IDS = ("bee", "cloud", "earthworms", "hibernation", "leaf")


@pytest.fixture(scope="module")
def server():
    with MockLLMServer() as srv:
        yield srv


@pytest.fixture()
def srv(server):
    server.responder = AutoResponder()
    server.reset()
    return server


def spec_for(tmp_path: Path, srv, method: str, **kw) -> AutoJudgeSpec:
    given = dict(
        responses=[RUNS],
        topics=TOPICS,
        method=method,
        model=MODEL,
        base_url=srv.openai_url if srv is not None else "http://127.0.0.1:9/v1",
        out_dir=tmp_path / "out",
        filebase=method,
        cache_dir=tmp_path / "cache",
        track="kiddie",
    )
    given.update(kw)
    return AutoJudgeSpec(**given)


def outputs(result) -> dict[str, bytes]:
    paths = [result.eval_txt, result.measures_yml, result.qrels, result.nuggets, result.config_yml]
    return {p.name: p.read_bytes() for p in paths if p is not None}


def check_leaderboard(result, measures: list[str]) -> None:
    lines = result.eval_txt.read_text(encoding="utf-8").splitlines()
    rows = [line.split("\t") for line in lines]
    assert all(len(r) == 4 for r in rows)
    runs = {r[0] for r in rows}
    assert runs == {"run1", "run2", "run3", "run4"}
    assert {r[2] for r in rows} <= set(measures)
    for run in runs:  # every run has its 'all' row for every measure
        assert {r[2] for r in rows if r[0] == run and r[1] == "all"} == set(measures)
    assert {r[1] for r in rows} <= {*TOPIC_IDS, "all"}
    assert all(len(r[3].split(".")[1]) == 6 for r in rows)  # one fixed format
    text = result.measures_yml.read_text(encoding="utf-8")
    assert all(f"name: {m}" in text for m in measures)


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_each_method_end_to_end_resumes_and_replays_offline(tmp_path, srv, method):
    from reljudge.autojudge.pipeline import measures_of

    spec = spec_for(tmp_path, srv, method)
    first = judge_responses(spec)
    assert first.calls == srv.calls > 0 and first.cached == 0
    assert first.responses == 20 and first.run_dir == tmp_path / "out" / f"{method}.reljudge"
    measures = [m.name for m in measures_of(method)]
    check_leaderboard(first, measures)
    assert (first.qrels is not None) == (method == "umbrela")
    assert (first.nuggets is not None) == (method == "nuggets")
    written = outputs(first)
    config = first.config_yml.read_text(encoding="utf-8")
    assert f"method: {method}" in config and "llm_model: openai/mock-model" in config
    assert "sha256:" in config and "reljudge_version:" in config
    assert "127.0.0.1" not in config and "timestamp" not in config

    calls = srv.calls
    again = judge_responses(spec)  # resumes the run directory: nothing asked again
    assert again.calls == 0 and srv.calls == calls
    assert outputs(again) == written

    # the platform's replay: the endpoint is gone, every answer comes from the cache
    offline = spec_for(tmp_path, None, method, cache_only=True)
    shutil.rmtree(first.run_dir)
    for path in (first.eval_txt, first.config_yml):
        path.unlink()
    replayed = judge_responses(offline)
    # a repeated prompt is a hit more; a pairwise record holds both orders' answers, one hit
    assert replayed.calls == 0 and replayed.cached >= calls // (2 if method == PAIRWISE else 1)
    assert outputs(replayed) == written
    assert srv.calls == calls


@pytest.mark.slow
def test_the_command_writes_the_files_and_the_leaderboard_reads_back(tmp_path, srv):
    from reljudge.analyses.leaderboard.files import read_leaderboard

    ran = judge(
        "autojudge", "--responses", RUNS, "--topics", TOPICS, "--method", "umbrela", "--model", MODEL,
        "--base-url", srv.openai_url, "--out", tmp_path / "out", "--filebase", "ours",
        "--cache-dir", tmp_path / "cache", "--track", "kiddie", "-o", "concurrency=2",
    )  # fmt: skip
    assert ran.returncode == 0, ran.output
    assert "20 responses, 0 without a score; 20 requests sent" in ran.stdout
    eval_txt = tmp_path / "out" / "ours.eval.txt"
    board = read_leaderboard(eval_txt)
    assert sorted(board.runs) == ["run1", "run2", "run3", "run4"]
    qrels = (tmp_path / "out" / "ours.qrels.txt").read_text().splitlines()
    assert len(qrels) == 20 and all(len(line.split()) == 4 and len(line.split()[2]) == 32 for line in qrels)


def test_the_filebase_autojudge_injects_is_taken_as_it_is(tmp_path):
    spec = AutoJudgeSpec(
        responses=[RUNS], topics=TOPICS, method="umbrela", model=MODEL, out_dir=tmp_path / "elsewhere",
        filebase=str(tmp_path / "out" / "name"),
    )  # fmt: skip
    assert spec.filebase_path == tmp_path / "out" / "name"
    assert spec.run_dir == tmp_path / "out" / "name.reljudge"
    bare = AutoJudgeSpec(responses=[RUNS], topics=TOPICS, method="umbrela", model=MODEL, out_dir=tmp_path)
    assert bare.filebase_path == tmp_path / "reljudge"


@pytest.mark.slow
def test_a_replay_that_misses_the_cache_stops_naming_the_item(tmp_path):
    with pytest.raises((InputError, NotFinished)) as caught:
        judge_responses(spec_for(tmp_path, None, "umbrela", cache_only=True))
    assert not (tmp_path / "out" / "umbrela.eval.txt").exists()
    assert "cache" in str(caught.value)


def test_an_unknown_method_or_track_is_bad_input(tmp_path):
    ran = judge(
        "autojudge", "--responses", RUNS, "--topics", TOPICS, "--method", "bogus", "--model", MODEL,
        "--out", tmp_path,
    )  # fmt: skip
    assert ran.returncode == EXIT_BAD_INPUT and "unknown method" in ran.stderr
    ran = judge(
        "autojudge", "--responses", RUNS, "--topics", TOPICS, "--method", "umbrela", "--model", MODEL,
        "--out", tmp_path, "--track", "rag99",
    )  # fmt: skip
    assert ran.returncode == EXIT_BAD_INPUT and "unknown track 'rag99'" in ran.stderr
    assert list(tmp_path.iterdir()) == []
