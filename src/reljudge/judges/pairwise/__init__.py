"""Pairwise preferences (Clarke et al.; Arabzadeh & Clarke): which of two passages answers the
query better, judged in both orders; passage scores by wins.

- `judge`: the `PairwiseJudge` (pair selections, both orders, its score sets);
- `sampler`: Clarke et al.'s preference sampler and pair validation;
- `preferences`: combining the two orders and counting wins (pure).
"""

from reljudge.judges.pairwise.judge import PAIRWISE_NAMES, PairwiseJudge
from reljudge.judges.pairwise.preferences import combine_orders, count_wins
from reljudge.judges.pairwise.sampler import PreferenceSampler, sampler_pair_bound, validate_pairs

__all__ = [
    "PAIRWISE_NAMES",
    "PairwiseJudge",
    "PreferenceSampler",
    "combine_orders",
    "count_wins",
    "sampler_pair_bound",
    "validate_pairs",
]
