"""The PyTerrier bridge: `LLMJudge` judges a result frame through `judge run` (against the mock
LLM server), resumes with 0 calls, and `judged_qrels` feeds `pt.Experiment`."""

from __future__ import annotations

import math

import pytest

from reljudge.errors import InputError
from reljudge.testing import MockLLMServer

pt = pytest.importorskip(
    "pyterrier", reason="python-terrier is not installed (pip install 'reljudge[pyterrier]')"
)
pd = pytest.importorskip("pandas")


def frame():
    return pd.DataFrame(
        {
            "qid": ["q1", "q1", "q2", "q2"],
            "query": ["what is a cat", "what is a cat", "best pizza", "best pizza"],
            "docno": ["d1", "d3", "d2", "d3"],
            "text": ["cats are small felines", "unrelated\ttext", "pizza napoletana", "unrelated\ttext"],
            "score": [2.0, 1.0, 2.0, 1.0],
            "rank": [0, 1, 0, 1],
        }
    )


@pytest.mark.slow
def test_llm_judge_transformer_labels_and_resumes(tmp_path, monkeypatch):
    from reljudge.pyterrier import LLMJudge, judged_qrels

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "pt-run"
    with MockLLMServer() as srv:
        judge = LLMJudge("umbrela", "openai/mock", out=out, base_url=srv.openai_url, use_cache=False)
        assert isinstance(judge, pt.Transformer)
        pipeline = pt.Transformer.from_df(frame()) >> judge
        topics = pd.DataFrame({"qid": ["q1", "q2"], "query": ["what is a cat", "best pizza"]})
        result = pipeline(topics)
        assert srv.calls == 4
        assert list(result["judge_status"]) == ["ok"] * 4
        assert all(lbl in (0.0, 1.0, 2.0, 3.0) for lbl in result["label"])
        again = judge(frame())
        assert srv.calls == 4  # resumed from the run directory: no new call
        assert list(again["label"]) == list(result["label"])
    qrels = judged_qrels(out)
    assert sorted(qrels.columns) == ["docno", "label", "qid"] and len(qrels) == 4
    run = frame()
    table = pt.Experiment(
        [pt.Transformer.from_df(run)], topics, qrels, eval_metrics=["ndcg_cut_10"], names=["r"]
    )
    assert 0.0 <= float(table["ndcg_cut_10"][0]) <= 1.0 and not math.isnan(float(table["ndcg_cut_10"][0]))


def test_llm_judge_needs_text(tmp_path):
    from reljudge.pyterrier import LLMJudge

    judge = LLMJudge("umbrela", "openai/mock", out=tmp_path / "x")
    with pytest.raises(InputError, match="pt.text.get_text"):
        judge(frame().drop(columns=["text"]))


def test_llm_judge_adds_the_expected_grade(tmp_path, monkeypatch):
    """With scores="expected" the frame gets the expected grade of the scripted distribution."""
    from reljudge.pyterrier import LLMJudge
    from reljudge.testing import AutoResponder, responders

    dist = {"3": 0.5, "2": 0.25, "1": 0.125, "0": 0.125}
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with MockLLMServer(responders.label_logprobs(AutoResponder(), lambda req, text: dist)) as srv:
        judge = LLMJudge(
            "umbrela",
            "openai/mock",
            out=tmp_path / "r",
            base_url=srv.openai_url,
            use_cache=False,
            scores="expected",
        )
        result = judge(frame())
    assert list(result["judge_status"]) == ["ok"] * 4
    assert list(result["expected"]) == pytest.approx([3 * 0.5 + 2 * 0.25 + 1 * 0.125] * 4, abs=1e-9)
