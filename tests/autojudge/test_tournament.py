"""The pairwise method over AutoJudge responses: a tournament (Clarke et al.'s preference sampler)
instead of all pairs, scored by a Bradley-Terry fit (`reljudge.autojudge.tournament`).

- the fit is the maximum of its likelihood (the score equations hold) and never depends on the
  order of the comparisons;
- on a rag26-sized topic (83 responses) the sampler asks fewer than 7·n comparisons instead of
  n(n-1)/2, and the strengths still rank a noiseless oracle's order closely;
- end to end on the kiddie sample against the mock server: every run on every topic scored, a
  second run sends nothing, and a larger pool costs fewer calls than all pairs would."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from scipy.stats import kendalltau

from reljudge.autojudge import AutoJudgeSpec, judge_responses
from reljudge.autojudge.tournament import PRIOR, bradley_terry, comparison_bound, response_scores
from reljudge.judges.pairwise.judge import PairwiseJudge
from reljudge.judges.pairwise.sampler import PreferenceSampler
from reljudge.testing import MockLLMServer

KIDDIE = Path(__file__).resolve().parent.parent / "io" / "autojudge_kiddie"
METHOD = PairwiseJudge.name


def _random_outcomes(
    seed: int, n: int = 7, games: int = 30
) -> tuple[list[str], list[tuple[str, str, float]]]:
    rng = random.Random(seed)
    items = [f"d{i}" for i in range(n)]
    outcomes = []
    for _ in range(games):
        a, b = rng.sample(items, 2)
        outcomes.append((a, b, rng.choice([0.0, 0.5, 1.0, 1.0])))
    return items, outcomes


@pytest.mark.parametrize("seed", range(5))
def test_the_fit_solves_its_score_equations_whatever_the_order(seed):
    items, outcomes = _random_outcomes(seed)
    s = bradley_terry(items, outcomes)
    # the maximum of the likelihood (with the virtual opponent of strength 1 met 2*PRIOR times):
    # each item's wins equal its expected wins
    for i in items:
        wins = PRIOR + sum(x if a == i else 1 - x for a, b, x in outcomes if i in (a, b))
        expected = 2 * PRIOR * s[i] / (s[i] + 1) + sum(
            s[i] / (s[a] + s[b]) for a, b, _ in outcomes if i in (a, b)
        )
        assert wins == pytest.approx(expected, rel=1e-8)
    shuffled = outcomes[:]
    random.Random(99).shuffle(shuffled)
    assert bradley_terry(reversed(items), shuffled) == s


def test_strength_is_a_win_share_against_the_topic():
    scores = response_scores(["a", "b", "c"], [("a", "b", 1.0), ("a", "c", 1.0), ("b", "c", 0.5)])
    assert scores["a"]["strength"] > 0.5 > scores["b"]["strength"] == pytest.approx(scores["c"]["strength"])
    assert sum(v["strength"] for v in scores.values()) == pytest.approx(1.5)  # pairs share their win
    assert (
        scores["a"]["winrate"] == 1.0 and scores["b"]["winrate"] == 0.25 and scores["a"]["comparisons"] == 2
    )
    # no comparison at all: everyone average
    assert {v["strength"] for v in response_scores(["a", "b"], []).values()} == {0.5}


@pytest.mark.slow  # the sampler and the fit over 83 responses: about 1 s
def test_a_tournament_of_a_rag26_topic_asks_far_fewer_pairs_and_keeps_the_order():
    n = 83  # runs of rag26
    quality = {f"r{i:02d}": random.Random(i).random() for i in range(n)}
    sampler = PreferenceSampler(sorted(quality), seed=0)
    outcomes = []
    while not sampler.done:
        for a, b in sampler.next_pairs():
            winner = a if quality[a] > quality[b] else b
            sampler.record(a, b, winner)
            outcomes.append((a, b, 1.0 if winner == a else 0.0))
    all_pairs = n * (n - 1) // 2
    assert len(outcomes) <= comparison_bound(n) < all_pairs / 5  # 581 against 3403
    # rag26 all pairs, both orders: 809,914 calls; the tournament's bound: 7 * 83 * 2 * 119
    assert 2 * all_pairs * 119 == 809_914 and 2 * comparison_bound(n) * 119 == 138_278
    scores = response_scores(quality, outcomes)
    tau = kendalltau([quality[r] for r in sorted(quality)], [scores[r]["strength"] for r in sorted(quality)])
    assert tau.statistic > 0.8
    # random outcomes, ties included (a pool the sampler cannot sort): still within the bound
    for seed in range(5):
        rng, made = random.Random(seed), 0
        sampler = PreferenceSampler(sorted(quality), seed=seed)
        while not sampler.done:
            for a, b in sampler.next_pairs():
                made += 1
                x = rng.random()
                sampler.record(a, b, a if x < 0.45 else (b if x < 0.9 else None))
        assert made <= comparison_bound(n)


def _responses(folder: Path, runs: int, topics: list[str]) -> Path:
    folder.mkdir()
    for r in range(runs):
        with (folder / f"run{r:02d}.jsonl").open("w") as f:
            for t in topics:
                sentences = [{"text": f"Answer {r} to {t}, sentence {k}.", "citations": []} for k in range(2)]
                meta = {"team_id": "t", "run_id": f"run{r:02d}", "topic_id": t}
                f.write(json.dumps({"metadata": meta, "responses": sentences}) + "\n")
    return folder


@pytest.mark.slow  # two judgings against the mock server: a few seconds
def test_the_pairwise_method_end_to_end_costs_a_tournament_and_resumes(tmp_path):
    with MockLLMServer() as server:
        spec = AutoJudgeSpec(
            responses=[KIDDIE / "runs"], topics=KIDDIE / "topics" / "kiddie-topics.jsonl", method=METHOD,
            model="openai/mock-model", base_url=server.openai_url, out_dir=tmp_path, filebase="kiddie",
            cache_dir=tmp_path / "cache",
        )  # fmt: skip
        first = judge_responses(spec)
        assert first.calls == server.calls == 5 * 6 * 2  # 4 runs: all 6 pairs, both orders, 5 topics
        again = judge_responses(spec)
        assert again.calls == 0 and server.calls == 60
        rows = [line.split("\t") for line in first.eval_txt.read_text().splitlines()]
        runs = {f"run{i}" for i in range(1, 5)}
        topics = {"leaf", "cloud", "bee", "earthworms", "hibernation", "all"}
        assert {(r, t) for r, t, _, _ in rows} == {(r, t) for r in runs for t in topics}
        assert {m for _, _, m, _ in rows} == {f"{METHOD}.{x}" for x in ("strength", "winrate", "comparisons")}

        # a larger pool: 20 runs on 2 topics -- fewer comparisons than all 190 pairs per topic
        (tmp_path / "topics.jsonl").write_text(
            "".join(json.dumps({"request_id": t, "title": f"about {t}"}) + "\n" for t in ("x", "y"))
        )
        before = server.calls
        big = judge_responses(
            AutoJudgeSpec(
                responses=[_responses(tmp_path / "runs", 20, ["x", "y"])],
                topics=tmp_path / "topics.jsonl",
                method=METHOD,
                model="openai/mock-model",
                base_url=server.openai_url,
                out_dir=tmp_path,
                filebase="big",
                cache_dir=tmp_path / "cache",
            )  # fmt: skip
        )
        asked = server.calls - before
        assert asked == big.calls and 0 < asked <= 2 * 2 * comparison_bound(20) < 2 * 2 * 190
        rows = [line.split("\t") for line in big.eval_txt.read_text().splitlines()]
        assert len({r for r, _, _, _ in rows}) == 20
