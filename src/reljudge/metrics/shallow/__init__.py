"""Shallow pools and preference judgments (thesis §3.1): "better than perfect", shallow pools of
top passages, win ratios between runs, preference qrels by tournament and their leaderboard impact.

Pure computation: the pairs are judged elsewhere (``judge run --method pairwise --pairs``, or the
human grades by `human_preferences`) and arrive as `Preferences`.

- `preferences`: outcomes keyed by unordered pair; the human-grade judge;
- `btp`: reference passages, categories A/B, their pairs and tallies, the binomial test;
- `pool`: pools, their statistics, the seeded query sample, the unordered pairs;
- `winratio`: win ratios with Bonferroni-corrected binomial tests;
- `tournament`: preference qrels by tournament, pairings won;
- `leaderboard`: MRR@10 leaderboards, Kendall τ, bootstrap, perfect ranker, consistency,
  leave-one-run-out.
"""

from reljudge.metrics.shallow.btp import (
    QREL_CHOICES,
    BtpPair,
    BtpPairs,
    CategoryTally,
    binomial_two_sided,
    btp_pairs,
    category_b_test,
    gold_accuracy,
    reference_passages,
    tally,
)
from reljudge.metrics.shallow.pool import (
    REFERENCE,
    build_pools,
    missing_queries,
    pool_stats,
    sample_queries,
    top_passages,
    unordered_pairs,
    without_run,
)
from reljudge.metrics.shallow.preferences import TIE, Preferences, agreement, human_preferences, pair_key
from reljudge.metrics.shallow.tournament import (
    TOURNAMENT_TIES,
    TournamentResult,
    pairings_won,
    preference_qrels,
    tournament,
)
from reljudge.metrics.shallow.winratio import WinRatios, win_ratios

__all__ = [
    "QREL_CHOICES",
    "REFERENCE",
    "TIE",
    "TOURNAMENT_TIES",
    "BtpPair",
    "BtpPairs",
    "CategoryTally",
    "Preferences",
    "TournamentResult",
    "WinRatios",
    "agreement",
    "binomial_two_sided",
    "btp_pairs",
    "build_pools",
    "category_b_test",
    "gold_accuracy",
    "human_preferences",
    "missing_queries",
    "pair_key",
    "pairings_won",
    "pool_stats",
    "preference_qrels",
    "reference_passages",
    "sample_queries",
    "tally",
    "top_passages",
    "tournament",
    "unordered_pairs",
    "win_ratios",
    "without_run",
]
