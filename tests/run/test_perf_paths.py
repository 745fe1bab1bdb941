"""The fast paths of a judged item give exactly what the plain code gives: cache keys, answer
parsing, prompt rendering, run bookkeeping; and a resumed run reads judgments.jsonl once at
start-up."""

from __future__ import annotations

import random
import re

import pytest

import reljudge.io.judgment_index as judgment_index_io
import reljudge.io.judgments as judgments_io
from reljudge.io.judgments import JudgmentWriter, read_judgments
from reljudge.io.rundir import RunDir, stream_stats
from reljudge.llm.cache import CacheKeys, cache_key, legacy_cache_key
from reljudge.prompts import list_prompts, parsing
from reljudge.prompts.template import ROLE_ALIASES
from reljudge.records import Judgment, Provenance, Usage, canonical_json
from reljudge.run import RunConfig, run_job
from reljudge.testing import MockLLMServer, responders

TEXT = 'ab"\\\né{}\u2028 <think>x</think>1**yes*`'


def test_cache_keys_from_the_messages_json_equal_cache_key():
    rng = random.Random(0)
    for _ in range(500):
        backend, model = rng.choice(["openai", "ollama"]), rng.choice(["gpt-4o", 'é"x\\', "a/b:1b"])
        base = rng.choice(["", "http://127.0.0.1:11434", "https://x/v1"])
        msgs = [
            {
                "role": rng.choice(["system", "user"]),
                "content": "".join(rng.choices(TEXT, k=rng.randint(0, 20))),
            }
            for _ in range(rng.randint(1, 3))
        ]
        params = {
            k: v
            for k, v in [("temperature", 0.0), ("seed", 42), ("options", {"n": [1, 2.5]})]
            if rng.random() < 0.7
        }
        keys = CacheKeys(backend, model, base)
        assert keys.key(canonical_json(msgs), params) == cache_key(backend, model, msgs, params)
        assert keys.legacy(canonical_json(msgs), params) == legacy_cache_key(
            backend, model, base, msgs, params
        )


@pytest.mark.parametrize(
    ("parser", "kwargs"),
    [
        (parsing.parse_binary, {}),
        (parsing.parse_binary, {"style": "yesno"}),
        (parsing.parse_graded, {}),
        (parsing.parse_graded, {"lo": 0, "hi": 2, "marker": None}),
        (parsing.parse_pairwise, {}),
        (parsing.parse_exam_answerability, {}),
    ],
)
def test_remembered_short_answers_parse_as_without_the_memo(parser, kwargs):
    rng = random.Random(1)
    answers = ["1", "0", " 1\n", "Yes", "no.", "2", "##final score: 2", "Answer: B", "A", "unanswerable", ""]
    answers += ["".join(rng.choices("01 23AaBbyesno:#*.\n", k=rng.randint(0, 12))) for _ in range(300)]
    for text in answers * 2:  # the second round comes from the memo
        assert parser(text, **kwargs) == parser.__wrapped__(text, **kwargs), text


def _render_by_regex(prompt, **values):
    """The one-pass substitution as written before the split-once rendering."""
    given = {ROLE_ALIASES.get(k, k): v for k, v in values.items()}
    given.update({k: v for k, v in values.items() if k in prompt.variables})
    filled = {n: str(values[n]) if n in values else str(given[r]) for n, r in prompt.variables.items()}
    pattern = re.compile(r"\{(" + "|".join(re.escape(n) for n in filled) + r")\}")
    return [
        {"role": m["role"], "content": pattern.sub(lambda mm: filled[mm.group(1)], m["content"])}
        for m in prompt.messages
    ]


def test_rendering_equals_one_pass_regex_substitution():
    rng = random.Random(2)
    pieces = ["{query}", "{document}", "{passage}", "{", "}", "x", "\\1", "\\g<1>", "é", "{nuggets}"]
    for prompt in list_prompts():
        for _ in range(50):
            values = {
                role: "".join(rng.choices(pieces, k=rng.randint(0, 6))) for role in prompt.variables.values()
            }
            assert prompt.render(**values) == _render_by_regex(prompt, **values), prompt.id


def _record(qid: str, docid: str, status: str = "ok", cost: float = 0.25, cached: bool = False) -> Judgment:
    return Judgment(
        qid=qid,
        docid=docid,
        method="binary",
        label=1 if status == "ok" else None,
        status=status,
        provenance=Provenance(
            usage=Usage(prompt_tokens=10, completion_tokens=1, calls=1, cost_usd=cost), cached=cached
        ),
    )


def test_index_with_stats_counts_as_stream_stats(tmp_path):
    run = RunDir(tmp_path / "run")
    with JudgmentWriter(run.judgments_path) as writer:
        for i in range(6):
            writer.write(_record("q1", f"d{i}", status="api_error" if i % 2 else "ok", cached=i == 4))
        writer.write(_record("q1", "d1", cost=0.5))  # replaces an api_error
        writer.write(_record("q1", "d3", status="unparsed"))  # replaces another
        writer.write(_record("q1", "d5"))  # and the last one
        writer.write(_record("q2", "d1", cached=True))
    index = run.index(lazy_methods=("binary",), stats=True)
    latest, every = stream_stats(run.judgments_path)
    assert index.stats[0].as_dict() == latest.as_dict()
    assert index.stats[1].as_dict() == every.as_dict()
    assert index.records == 10 and len(index.superseded) == 3
    assert "api_error" not in index.stats[0].statuses  # a count that drops to 0 disappears


def test_bare_records_read_light_equal_bare_records_of_full_ones(tmp_path):
    from reljudge.io.judgments import BareRecord, iter_judgments, read_bare_record_at, scan_bare_records

    path = tmp_path / "judgments.jsonl"
    with JudgmentWriter(path) as writer:
        writer.write(_record("q1", "d1"))
        writer.write(Judgment(qid="q1", item_id="n1", method="nugget", extra={"text": "x"}))
        writer.write(_record("q1", "d2", status="unparsed"))
        writer.write(Judgment(qid="q2", docid="d1", docid_b="d2", method="binary", label=2.5))
    scanned = list(scan_bare_records(path, ["binary"]))
    light = [record for _, record in scanned]
    full = [r if r.method == "nugget" else BareRecord.of(r) for r in iter_judgments(path)]
    assert light == full and isinstance(light[1], Judgment) and isinstance(light[0], BareRecord)
    assert [read_bare_record_at(path, offset, ["binary"]) for offset, _ in scanned] == full
    assert light[0].ok and not light[2].ok and light[3].key == ("binary", "q2", "d1", "d2", "")


@pytest.fixture(scope="module")
def server():
    with MockLLMServer(responders.fixed("1")) as srv:
        yield srv


def _config(server, tmp_path, **kw):
    return RunConfig(
        method="binary",
        model="ollama/mock",
        base_url=server.ollama_url,
        dataset="dl19-sample",
        output=tmp_path / "run",
        use_cache=False,
        progress=False,
        **kw,
    )


def test_a_fresh_run_counts_what_reading_the_file_back_gives(server, tmp_path):
    summary = run_job(_config(server, tmp_path, limit=12))
    run = RunDir(tmp_path / "run")
    latest, every = stream_stats(run.judgments_path)
    manifest = run.read_manifest()
    assert manifest["summary"] == latest.as_dict() and manifest["records"] == every.judgments == 12
    assert summary.records == 12 and summary.statuses == {"ok": 12} and summary.qrels_pairs == 12
    qrels = (tmp_path / "run" / "qrels.txt").read_text().splitlines()
    assert len(qrels) == 12 and {r.docid for r in read_judgments(run.judgments_path)} == {
        line.split()[2] for line in qrels
    }


def test_a_resumed_run_reads_the_judgments_once_at_start_up(server, tmp_path, monkeypatch):
    run_job(_config(server, tmp_path, limit=6))
    passes: list[str] = []
    real_scan = judgments_io.scan_judgments

    def counting_scan(path):
        passes.append(str(path))
        return real_scan(path)

    monkeypatch.setattr(judgments_io, "scan_judgments", counting_scan)
    monkeypatch.setattr(judgment_index_io, "scan_judgments", counting_scan)
    summary = run_job(_config(server, tmp_path, limit=10))
    # one pass at start-up (index + manifest counts) and one at the end (qrels + manifest)
    assert len(passes) == 2, passes
    assert summary.records == 10 and summary.new_records == 4
    manifest = RunDir(tmp_path / "run").read_manifest()
    latest, _ = stream_stats(RunDir(tmp_path / "run").judgments_path)
    assert manifest["summary"] == latest.as_dict()
