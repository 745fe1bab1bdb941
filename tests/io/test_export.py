"""Export: float policies, ir_measures / ranx round trips, DataFrames, imports and `judge export`."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from _cli import judge
from reljudge import judgments_from_qrels, to_dataframe, to_qrels
from reljudge.datasets import bundled_path
from reljudge.errors import InputError
from reljudge.export import load_judgment_source
from reljudge.io.judgments import JudgmentWriter, load_judgments
from reljudge.io.qrels_formats import to_ir_measures_qrels, to_ranx_qrels
from reljudge.io.trec import apply_float_policy, read_qrels
from reljudge.records import Judgment, Provenance, Usage

GPT4O = bundled_path() / "llm-judgments" / "gpt-4o"


def test_float_policies() -> None:
    assert [apply_float_policy(x, "round") for x in (0.49, 0.5, 1.5, 2.5, 2.0, 3)] == [0, 1, 2, 3, 2, 3]
    assert [apply_float_policy(x, "scale", 100) for x in (0.3, 0.31578947, 1, 0.005)] == [30, 32, 100, 1]
    assert apply_float_policy(0.25, "keep") == 0.25 and apply_float_policy(2.0, "keep") == 2
    assert isinstance(apply_float_policy(2.0, "keep"), int)
    with pytest.raises(InputError, match="unknown float policy"):
        apply_float_policy(1.0, "floor")  # type: ignore[arg-type]


def test_keep_warns_about_truncation(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert to_qrels({"1": {"a": 0.7, "b": 1}}, float_policy="keep") == {"1": {"a": 0.7, "b": 1}}
    assert "truncate" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        to_qrels({"1": {"a": 1.0}}, float_policy="keep")
    assert caplog.text == ""


def test_to_qrels_from_judgments_skips_failures_and_structured_records() -> None:
    records = [
        Judgment(qid="1", docid="a", method="m", label=2),
        Judgment(qid="1", docid="b", method="m", status="unparsed", raw="hmm"),
        Judgment(qid="1", docid="c", method="m", label=0.6),
        Judgment(qid="1", docid="a", docid_b="c", method="m", label=1),  # pairwise: not a qrel
        Judgment(qid="1", docid="c", method="m", label=3),  # a later record wins
    ]
    assert to_qrels(records) == {"1": {"a": 2, "c": 3}}
    with pytest.raises(InputError, match="several methods"):
        to_qrels([*records, Judgment(qid="1", docid="a", method="other", label=1)])
    assert to_qrels([*records, Judgment(qid="1", docid="a", method="other", label=1)], method="other") == {
        "1": {"a": 1}
    }
    with pytest.raises(InputError, match="aggregate"):
        to_qrels([Judgment(qid="1", docid="a", item_id="1_1", method="exam", label=4)])


def test_ir_measures_roundtrip() -> None:
    import ir_measures

    qrels = read_qrels(GPT4O / "exam-binary.dl19.qrels")
    exported = to_ir_measures_qrels(qrels, float_policy="scale")
    assert all(isinstance(q, ir_measures.Qrel) and isinstance(q.relevance, int) for q in exported)
    back: dict[str, dict[str, int]] = {}
    for q in exported:
        back.setdefault(q.query_id, {})[q.doc_id] = q.relevance
    assert back == to_qrels(qrels, float_policy="scale")
    # the scaled labels keep the order of the float scores within a topic
    for qid, docs in qrels.items():
        for d1 in list(docs)[:20]:
            for d2 in list(docs)[:20]:
                if docs[d1] > docs[d2]:
                    assert back[qid][d1] >= back[qid][d2]
    with pytest.raises(InputError, match="integer"):
        to_ir_measures_qrels(qrels, float_policy="keep")


def test_ir_measures_measure_on_exported_qrels() -> None:
    import ir_measures

    human = read_qrels(bundled_path() / "qrels.txt")
    exported = to_ir_measures_qrels(human)
    # a run ranking passages by their true grade gets a perfect nDCG; a reversed one does not
    perfect = [ir_measures.ScoredDoc(q, d, float(g)) for q, docs in human.items() for d, g in docs.items()]
    reverse = [ir_measures.ScoredDoc(q, d, -float(g)) for q, docs in human.items() for d, g in docs.items()]
    assert ir_measures.calc_aggregate([ir_measures.nDCG @ 10], exported, perfect)[
        ir_measures.nDCG @ 10
    ] == pytest.approx(1.0)
    assert ir_measures.calc_aggregate([ir_measures.nDCG @ 10], exported, reverse)[ir_measures.nDCG @ 10] < 0.5


@pytest.mark.slow  # importing ranx compiles numba code (several seconds)
def test_ranx_roundtrip() -> None:
    pytest.importorskip("ranx", reason="ranx is an optional extra (pip install 'reljudge[ranx]')")
    human = read_qrels(bundled_path() / "qrels.txt")
    ranx_qrels = to_ranx_qrels(human, name="human")
    assert {q: dict(d) for q, d in ranx_qrels.to_dict().items()} == human
    rounded = to_ranx_qrels({"1": {"a": 0.6, "b": 0.4}})
    assert dict(rounded.to_dict()["1"]) == {"a": 1, "b": 0}  # ranx alone would give 0 and 0


def test_ranx_export_without_ranx_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "ranx", None)  # as if it were not installed
    with pytest.raises(InputError, match=r"reljudge\[ranx\]"):
        to_ranx_qrels({"1": {"a": 1}})


def test_judgments_from_published_qrels() -> None:
    qrels = read_qrels(GPT4O / "umbrela.dl19.qrels")
    records = judgments_from_qrels(qrels, "umbrela", "gpt-4o", source=GPT4O / "umbrela.dl19.qrels")
    assert len(records) == 684 and all(r.ok and r.provenance.model == "gpt-4o" for r in records)
    assert to_qrels(records) == qrels


def test_to_dataframe_flattens_provenance() -> None:
    records = [
        Judgment(
            qid="1",
            docid="a",
            method="umbrela",
            label=2,
            raw="##final score: 2",
            extra={"votes": [2, 2]},
            provenance=Provenance(
                model="m", params={"temperature": 0.0, "seed": 1}, usage=Usage(prompt_tokens=10, calls=1)
            ),
        ),
        Judgment(qid="1", docid="b", method="umbrela", status="api_error", error="timeout"),
    ]
    frame = to_dataframe(records)
    assert list(frame["status"]) == ["ok", "api_error"]
    assert frame.loc[0, "model"] == "m" and frame.loc[0, "prompt_tokens"] == 10
    assert frame.loc[0, "params.temperature"] == 0.0 and frame.loc[0, "extra.votes"] == "[2, 2]"
    assert frame.loc[1, "error"] == "timeout"
    assert to_dataframe([]).columns[0] == "qid"


# --- the command line ----------------------------------------------------------------------


@pytest.mark.slow
def test_cli_export_run_dir(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with JudgmentWriter(run / "judgments.jsonl") as writer:
        writer.write(Judgment(qid="1", docid="a", method="exam", label=0.75))
        writer.write(Judgment(qid="1", docid="b", method="exam", status="refused", raw="no"))
    result = judge(
        "export",
        "--judgments",
        str(run),
        "--to",
        "qrels",
        "--out",
        str(tmp_path / "q.txt"),
        "--float",
        "scale",
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "q.txt").read_text() == "1 0 a 75\n"
    result = judge("export", "--judgments", str(run), "--to", "csv", "--out", str(tmp_path / "j.csv"))
    assert result.returncode == 0 and len((tmp_path / "j.csv").read_text().splitlines()) == 3
    result = judge(
        "export",
        "--judgments",
        str(run / "judgments.jsonl"),
        "--to",
        "jsonl",
        "--out",
        str(tmp_path / "copy.jsonl"),
    )
    assert result.returncode == 0 and len(load_judgments(tmp_path / "copy.jsonl")) == 2


@pytest.mark.slow
def test_cli_export_float_keep_warns(tmp_path: Path) -> None:
    out = tmp_path / "keep.qrels"
    result = judge(
        "export", "--judgments", str(GPT4O / "exam-binary.dl19.qrels"), "--out", str(out), "--float", "keep"
    )
    assert result.returncode == 0 and "truncate" in result.stderr
    assert read_qrels(out) == read_qrels(GPT4O / "exam-binary.dl19.qrels")


@pytest.mark.parametrize(
    ("content", "extra", "message"),
    [
        (b"1 0 a 1\n1 0 b\n", [], ":2: expected 4 columns"),
        (b"1 0 a 1\n1 0 b x\n", [], ":2: grade 'x' is not a number"),
        (b"1 0 a 1\n1 0 a 2\n", [], ":2: duplicate judgment"),
        (b"1 0 a 1\n1 0 \xffb 2\n", [], ":2: not valid UTF-8"),
        (b"", [], ": file is empty"),
        (b"1 0 a 1\n", ["--to", "xml"], "unknown export format"),
        (b"1 0 a 1\n", ["--float", "floor"], "unknown float policy"),
    ],
)
def test_cli_export_bad_input(tmp_path: Path, content: bytes, extra: list[str], message: str) -> None:
    source = tmp_path / "in.qrels"
    source.write_bytes(content)
    out = tmp_path / "out" / "result.txt"
    result = judge("export", "--judgments", str(source), "--out", str(out), *extra)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: ") and message in result.stderr
    assert not out.exists() and not list(tmp_path.rglob("*.tmp"))


@pytest.mark.slow
def test_cli_export_torn_jsonl_and_bad_record(tmp_path: Path) -> None:
    good = Judgment(qid="1", docid="a", method="m", label=1).to_json()
    torn = tmp_path / "torn.jsonl"
    torn.write_text(good + "\n" + good[:20])
    result = judge("export", "--judgments", str(torn), "--out", str(tmp_path / "t.qrels"))
    assert result.returncode == 0 and "torn" in result.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good + "\n" + '{"qid": "1", "method": "m", "status": "ok", "label": "two"}\n')
    out = tmp_path / "b.qrels"
    result = judge("export", "--judgments", str(bad), "--out", str(out))
    assert result.returncode == 2 and f"{bad}:2:" in result.stderr and not out.exists()


def test_cli_datasets() -> None:
    result = judge("datasets")
    assert result.returncode == 0
    line = next(x for x in result.stdout.splitlines() if x.startswith("dl19-sample"))
    assert line.split()[1:4] == ["5", "684", "682"]


def test_load_judgment_source_method_filter(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    with JudgmentWriter(path) as writer:
        writer.write(Judgment(qid="1", docid="a", method="m", label=1))
    assert len(load_judgment_source(path, method="m")) == 1
    with pytest.raises(InputError, match="no judgments of method 'x'"):
        load_judgment_source(path, method="x")
    records = load_judgment_source(GPT4O / "binary.dl19.qrels")
    assert {r.method for r in records} == {"binary"}
