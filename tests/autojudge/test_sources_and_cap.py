"""Where ``judge autojudge`` takes its texts and what it writes besides the leaderboard: cited
documents a response does not embed come from ``--corpus`` (without it they are counted, not
judged); nuggets made from the responses; the nugget bank in autojudge-base's v3 format (read back
by autojudge-base itself when it is installed); ``--max-cost`` stops the judging with nothing
written for AutoJudge, and a higher cap resumes it without asking anything twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import judge
from reljudge.autojudge import AutoJudgeSpec, NotFinished, judge_responses
from reljudge.testing import AutoResponder, MockLLMServer

KIDDIE = Path(__file__).resolve().parent.parent / "io" / "autojudge_kiddie"
TOPICS = KIDDIE / "topics" / "kiddie-topics.jsonl"
RUNS = KIDDIE / "runs"
TOPIC_IDS = ["leaf", "cloud", "bee", "earthworms", "hibernation"]


@pytest.fixture(scope="module")
def server():
    with MockLLMServer() as srv:
        yield srv


@pytest.fixture()
def srv(server):
    server.responder = AutoResponder()
    server.reset()
    return server


def stripped(tmp_path: Path) -> tuple[Path, Path]:
    """The kiddie runs without their embedded documents, and those documents as a corpus."""
    runs = tmp_path / "given" / "runs"
    runs.mkdir(parents=True)
    corpus: dict[str, dict[str, str]] = {}
    for path in sorted(RUNS.glob("*.jsonl")):
        lines = []
        for line in path.read_text(encoding="utf-8").splitlines():
            obj = json.loads(line)
            for docid, doc in obj.pop("documents").items():
                corpus[docid] = {"docid": docid, "title": doc["title"], "text": doc["text"]}
            lines.append(json.dumps(obj))
        (runs / path.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    corpus_file = tmp_path / "given" / "corpus.jsonl"
    corpus_file.write_text("".join(json.dumps(corpus[d]) + "\n" for d in sorted(corpus)))
    return runs, corpus_file


def spec(tmp_path: Path, srv, runs: Path, method: str, name: str, **kw) -> AutoJudgeSpec:
    return AutoJudgeSpec(
        responses=[runs], topics=TOPICS, method=method, model=kw.pop("model", "openai/mock-model"),
        base_url=srv.openai_url, out_dir=tmp_path / "out", filebase=name, cache_dir=tmp_path / "cache", **kw,
    )  # fmt: skip


@pytest.mark.slow
def test_cited_documents_come_from_the_corpus_when_not_embedded(tmp_path, srv):
    runs, corpus = stripped(tmp_path)
    alone = judge_responses(spec(tmp_path, srv, runs, "citation-support", "alone"))
    cited = sum(len(json.loads(line)["responses"]) > 0 for f in runs.glob("*.jsonl") for line in f.open())
    config = alone.config_yml.read_text()
    assert cited == 20 and "citations_without_text: " in config  # no text for any citation
    assert int(config.split("citations_without_text: ")[1].split()[0]) >= cited
    looked_up = judge_responses(spec(tmp_path, srv, runs, "citation-support", "corpus", corpus=corpus))
    assert "citations_without_text" not in looked_up.config_yml.read_text()
    given = {json.loads(line)["docid"]: json.loads(line) for line in corpus.read_text().splitlines()}
    judged = tmp_path / "out" / "corpus.reljudge" / "inputs" / "corpus.jsonl"
    passages = [json.loads(line) for line in judged.read_text().splitlines()]
    assert passages and all(
        p["text"] == given[p["docid"]]["title"] + "\n" + given[p["docid"]]["text"] for p in passages
    )
    assert alone.eval_txt.read_bytes() != looked_up.eval_txt.read_bytes()


def test_a_document_embedded_with_two_texts_is_two_passages(tmp_path):
    from reljudge.autojudge.files import cited_documents, read_inputs

    inputs = read_inputs(AutoJudgeSpec(responses=[RUNS], topics=TOPICS, method="umbrela", model="m"))
    cited = cited_documents(inputs, None)
    assert cited.missing == 0
    variants = [p for p in cited.passages if p.startswith("Hibernation#")]
    assert len(variants) >= 2  # the kiddie runs embed different texts under this id
    for response, answer in zip(inputs.responses, cited.answers, strict=True):
        for docid, pid in zip(response.answer.references, answer.references, strict=True):
            body, title = cited.passages[pid]
            own = response.documents[docid]
            assert pid.partition("#")[0] == docid and (body, title) == (own.text, own.title)


@pytest.mark.slow
def test_nuggets_made_from_the_responses_in_the_v3_format(tmp_path, srv):
    result = judge_responses(
        spec(tmp_path, srv, RUNS, "nuggets", "fromresponses", nugget_source="responses", nugget_format="v3")
    )
    banks = [json.loads(line) for line in result.nuggets.read_text(encoding="utf-8").splitlines()]
    assert [b["query_id"] for b in banks] == TOPIC_IDS
    assert all(b["format_version"] == "v3" for b in banks)
    claims = [c for b in banks for c in b["claim_bank"].values()]
    assert claims and all(c["importance"] in ("vital", "okay") for c in claims if "importance" in c)
    config = result.config_yml.read_text()
    assert "nugget_source: responses" in config and "nugget_format: v3" in config
    try:  # autojudge-base reads it back and writes the same bytes (when it is installed)
        from autojudge_base.nugget_data.io import load_nugget_banks_generic, write_nugget_banks_generic
        from autojudge_base.nugget_data.nugget_banks import NuggetBanks
    except Exception as err:  # not installed, or its NLTK data cannot be fetched offline
        pytest.skip(f"autojudge-base cannot be imported here: {err}")
    again = tmp_path / "again.jsonl"
    write_nugget_banks_generic(load_nugget_banks_generic(result.nuggets, NuggetBanks), again)
    assert again.read_bytes() == result.nuggets.read_bytes()


@pytest.mark.slow
def test_max_cost_stops_with_nothing_written_and_a_higher_cap_resumes(tmp_path, srv):
    paid = "openai/gpt-4o-mini"  # in litellm's price map: its calls cost something
    capped = spec(tmp_path, srv, RUNS, "umbrela", "capped", model=paid, max_cost=0.001)
    with pytest.raises(NotFinished) as stopped:
        judge_responses(capped)
    assert stopped.value.state == "capped" and stopped.value.exit_code == 3
    assert 0 < srv.calls < 20 and not (tmp_path / "out" / "capped.eval.txt").exists()
    first = srv.calls
    ran = judge(
        "autojudge", "--responses", RUNS, "--topics", TOPICS, "--method", "umbrela", "--model", paid,
        "--base-url", srv.openai_url, "--out", tmp_path / "out", "--filebase", "capped",
        "--cache-dir", tmp_path / "cache", "--max-cost", "1",
    )  # fmt: skip
    assert ran.returncode == 0, ran.output
    assert srv.calls == 20 and f"{20 - first} requests sent" in ran.stdout  # nothing asked twice
    assert (tmp_path / "out" / "capped.eval.txt").exists()


@pytest.mark.slow
def test_the_order_files_are_given_in_never_changes_the_outputs(tmp_path, srv):
    forward = judge_responses(spec(tmp_path, srv, RUNS, "citation-support", "forward"))
    files = sorted(RUNS.glob("*.jsonl"), reverse=True)
    backward = judge_responses(
        AutoJudgeSpec(
            responses=files, topics=TOPICS, method="citation-support", model="openai/mock-model",
            base_url=srv.openai_url, out_dir=tmp_path / "out", filebase="backward", cache_dir=tmp_path / "cache",
        )
    )  # fmt: skip
    assert backward.calls == 0  # the same prompts
    assert backward.eval_txt.read_bytes() == forward.eval_txt.read_bytes()
