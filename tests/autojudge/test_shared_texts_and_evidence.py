"""Responses that share a text, and whose evidence is whose: a run giving one canned answer to
every topic is judged on every topic (UMBRELA and pairwise), never on one of them alone; a
citation is judged against the text its own run embeds, else the corpus's, and never against the
text another run embeds (without either it is counted and warned about, its records skipped)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from _cli import judge
from reljudge.autojudge import AutoJudgeSpec, judge_responses
from reljudge.errors import EXIT_BAD_INPUT
from reljudge.io.autojudge import read_responses
from reljudge.io.judgments import read_judgments
from reljudge.testing import AutoResponder, MockLLMServer

KIDDIE = Path(__file__).resolve().parent.parent / "io" / "autojudge_kiddie"
TOPICS = KIDDIE / "topics" / "kiddie-topics.jsonl"
RUNS = KIDDIE / "runs"
TOPIC_IDS = ("bee", "cloud", "earthworms", "hibernation", "leaf")
CANNED = "I am not sure, please ask a teacher."


@pytest.fixture(scope="module")
def server():
    with MockLLMServer() as srv:
        yield srv


@pytest.fixture()
def srv(server):
    server.responder = AutoResponder()
    server.reset()
    return server


def rewritten(tmp_path: Path, change: Callable[[dict[str, Any]], None], name: str = "runs") -> Path:
    """A copy of the kiddie runs with ``change`` applied to every report."""
    runs = tmp_path / "given" / name
    runs.mkdir(parents=True)
    for path in sorted(RUNS.glob("*.jsonl")):
        lines = []
        for line in path.read_text(encoding="utf-8").splitlines():
            obj = json.loads(line)
            change(obj)
            lines.append(json.dumps(obj))
        (runs / path.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return runs


def spec(tmp_path: Path, srv, runs: Path | list[Path], method: str, name: str, **kw) -> AutoJudgeSpec:
    return AutoJudgeSpec(
        responses=runs if isinstance(runs, list) else [runs], topics=TOPICS, method=method,
        model="openai/mock-model", base_url=srv.openai_url, out_dir=tmp_path / "out", filebase=name,
        cache_dir=tmp_path / "cache", **kw,
    )  # fmt: skip


def board(result) -> dict[tuple[str, str, str], float]:
    rows = [line.split("\t") for line in result.eval_txt.read_text(encoding="utf-8").splitlines()]
    return {(r[0], r[1], r[2]): float(r[3]) for r in rows}


def canned_run1(obj: dict[str, Any]) -> None:
    if obj["metadata"]["run_id"] == "run1":
        obj["responses"] = [{"text": CANNED, "citations": []}]
        obj.pop("documents", None)


@pytest.mark.slow
def test_a_canned_answer_given_to_every_topic_is_judged_on_every_topic_umbrela(tmp_path, srv):
    runs = rewritten(tmp_path, canned_run1)
    result = judge_responses(spec(tmp_path, srv, runs, "umbrela", "canned"))
    assert result.unjudged == ()
    values = board(result)
    records = [r for r in read_judgments(result.run_dir / "judgments.jsonl") if r.docid.startswith("run1:")]
    assert sorted(r.qid for r in records) == sorted(TOPIC_IDS) and all(r.ok for r in records)
    for record in records:  # each topic's row is that topic's own record
        assert values[("run1", record.qid, "umbrela")] == record.label
    mean = sum(r.label for r in records) / len(TOPIC_IDS)
    assert values[("run1", "all", "umbrela")] == pytest.approx(mean, abs=1e-6)
    # the qrels: the canned text's MD5 once in each topic, with that topic's grade
    import hashlib

    md5 = hashlib.md5(CANNED.encode()).hexdigest()
    rows = [line.split() for line in result.qrels.read_text().splitlines()]
    assert sorted((r[0], int(r[3])) for r in rows if r[2] == md5) == sorted((r.qid, r.label) for r in records)
    # the order the files are given in changes nothing
    again = judge_responses(
        spec(tmp_path, srv, sorted(runs.glob("*.jsonl"), reverse=True), "umbrela", "reversed")
    )
    assert again.calls == 0 and again.eval_txt.read_bytes() == result.eval_txt.read_bytes()
    assert again.qrels.read_bytes() == result.qrels.read_bytes()


@pytest.mark.slow
def test_a_canned_answer_given_to_every_topic_is_judged_on_every_topic_pairwise(tmp_path, srv):
    runs = rewritten(tmp_path, canned_run1)
    result = judge_responses(spec(tmp_path, srv, runs, "pairwise", "canned"))
    assert result.unjudged == ()
    values = board(result)
    for topic in TOPIC_IDS:  # every run met the others on every topic: 3 comparisons each
        for run in ("run1", "run2", "run3", "run4"):
            assert values[(run, topic, "pairwise.comparisons")] == 3.0
    assert values[("run1", "all", "pairwise.comparisons")] == 3.0


@pytest.mark.parametrize("method", ["nuggets", "citation-support", "umbrela"])
def test_a_cited_document_id_holding_a_space_is_a_file_line_error(tmp_path, srv, method):
    def spaced(obj: dict[str, Any]) -> None:
        obj["responses"][0]["citations"] = ["Chloro phyll"]
        obj["documents"]["Chloro phyll"] = {"id": "Chloro phyll", "text": "Chlorophyll is green."}

    runs = rewritten(tmp_path, spaced)
    ran = judge(
        "autojudge", "--responses", runs, "--topics", TOPICS, "--method", method, "--model", "openai/mock-model",
        "--base-url", srv.openai_url, "--out", tmp_path / "out", "--cache-dir", tmp_path / "cache",
    )  # fmt: skip
    assert ran.returncode == EXIT_BAD_INPUT, ran.output
    assert (
        f"error: {runs / 'run1.jsonl'}:1: responses[0].citations holds the document id 'Chloro phyll'"
        in ran.stderr
    )
    assert srv.calls == 0 and not (tmp_path / "out").exists()


def run1_embeds_nothing(obj: dict[str, Any]) -> None:
    if obj["metadata"]["run_id"] == "run1":
        obj.pop("documents", None)


def corpus_file(tmp_path: Path, docids: set[str]) -> Path:
    path = tmp_path / "given" / "corpus.jsonl"
    path.write_text(
        "".join(json.dumps({"docid": d, "text": f"CORPUS TEXT of {d}."}) + "\n" for d in sorted(docids))
    )
    return path


@pytest.mark.slow
def test_a_citation_is_never_judged_against_another_runs_text(tmp_path, srv):
    runs = rewritten(tmp_path, run1_embeds_nothing)
    # run1 embeds nothing: 23 (response, document) citations in its 5 responses, several of them
    # documents the other runs embed -- without a corpus they have no text, never the others'
    ran = judge(
        "autojudge", "--responses", runs, "--topics", TOPICS, "--method", "citation-support",
        "--model", "openai/mock-model", "--base-url", srv.openai_url, "--out", tmp_path / "out",
        "--filebase", "alone", "--cache-dir", tmp_path / "cache",
    )  # fmt: skip
    assert ran.returncode == 0, ran.output
    records = list(read_judgments(tmp_path / "out" / "alone.reljudge" / "judgments.jsonl"))
    mine = [r for r in records if (r.item_id or "").startswith("run1/")]
    assert len(mine) > 20 and all(r.status == "skipped" and "#no-text" in (r.docid or "") for r in mine)
    assert any(r.ok for r in records if (r.item_id or "").startswith("run2/"))
    values = board_file(tmp_path / "out" / "alone.eval.txt")
    assert all(values[("run1", t, "citation-support.recall")] == 0.0 for t in TOPIC_IDS)
    warnings = [line for line in ran.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: 23 citation(s) in 5 response(s) have no text to be judged against (their run does not "
        "embed the document and no --corpus was given): unjudged, left out of precision "
        "(citations_without_text in the config)"
    ]
    assert "citations_without_text: 23\n" in (tmp_path / "out" / "alone.config.yml").read_text()

    # with the corpus: run1's citations are judged against the corpus's text, the others' against
    # the text their own run embeds
    cited = {d for r in read_responses([runs]) for d in r.answer.references}
    corpus = corpus_file(tmp_path, cited)
    result = judge_responses(spec(tmp_path, srv, runs, "citation-support", "corpus", corpus=corpus))
    assert "citations_without_text" not in result.config_yml.read_text() and result.warnings == ()
    inputs = result.run_dir / "inputs"
    passages = {p["docid"]: p["text"] for p in map(json.loads, (inputs / "corpus.jsonl").open())}
    own = {
        (r.answer.system, r.answer.qid, d): doc.text
        for r in read_responses([runs])
        for d, doc in r.documents.items()
    }
    for path in sorted((inputs / "answers").glob("*.jsonl")):
        for answer in map(json.loads, path.open()):
            for ref in answer["references"]:
                docid = ref.partition("#")[0]
                want = own.get((answer["run_id"], answer["topic_id"], docid), f"CORPUS TEXT of {docid}.")
                assert passages[ref] == want


def board_file(path: Path) -> dict[tuple[str, str, str], float]:
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
    return {(r[0], r[1], r[2]): float(r[3]) for r in rows}


def leaf_pools_and_strays(obj: dict[str, Any]) -> None:
    """run1's 'leaf' report embeds nothing and also cites 'Cloud', which only the 'cloud'
    reports embed; 'Deciduous' is then cited in 'leaf' with no text anywhere."""
    if obj["metadata"]["run_id"] == "run1" and obj["metadata"]["topic_id"] == "leaf":
        obj.pop("documents")
        obj["responses"][0]["citations"].append("Cloud")


@pytest.mark.slow
def test_nugget_sources_come_from_the_corpus_else_the_topics_embedded_texts(tmp_path, srv):
    runs = rewritten(tmp_path, leaf_pools_and_strays)
    ran = judge(
        "autojudge", "--responses", runs, "--topics", TOPICS, "--method", "nuggets",
        "--model", "openai/mock-model", "--base-url", srv.openai_url, "--out", tmp_path / "out",
        "--filebase", "embedded", "--cache-dir", tmp_path / "cache",
    )  # fmt: skip
    assert ran.returncode == 0, ran.output
    inputs = tmp_path / "out" / "embedded.reljudge" / "inputs"
    qrels = [line.split() for line in (inputs / "nugget-sources.qrels").read_text().splitlines()]
    leaf = {row[2].partition("#")[0] for row in qrels if row[0] == "leaf"}
    assert "Cloud" not in leaf and "Deciduous" not in leaf  # never another topic's text
    assert {"Chlorophyll", "Anthocyanin"} <= leaf  # run1 cites them; runs 2 and 3 embed them (pooled)
    assert (
        "warning: 2 cited (topic, document) pair(s) have no text to make nuggets from (no response to the "
        "topic embeds the document and no --corpus was given): not nugget sources "
        "(cited_documents_without_text in the config)"
    ) in ran.stderr.splitlines()
    config = (tmp_path / "out" / "embedded.config.yml").read_text()
    assert f"nugget_source_texts:\n  corpus: 0\n  embedded: {len(qrels)}\n" in config
    assert "cited_documents_without_text: 2\n" in config

    cited = {d for r in read_responses([runs]) for d in r.answer.references}
    corpus = corpus_file(tmp_path, cited)
    result = judge_responses(spec(tmp_path, srv, runs, "nuggets", "corpus", corpus=corpus))
    inputs = result.run_dir / "inputs"
    qrels = [line.split() for line in (inputs / "nugget-sources.qrels").read_text().splitlines()]
    passages = {p["docid"]: p["text"] for p in map(json.loads, (inputs / "corpus.jsonl").open())}
    assert all(text == f"CORPUS TEXT of {pid}." for pid, text in passages.items())  # the corpus's only
    config = result.config_yml.read_text()
    assert f"nugget_source_texts:\n  corpus: {len(qrels)}\n  embedded: 0\n" in config
    assert "without_text" not in config and result.warnings == ()
