"""Aggregation machinery every judging method shares (pure functions, no LLM, no file I/O).

- `qrels`: `AggregatedScores`, the document scores of one method, and `label_scores` for
  pointwise labels;
- `exclusions`: what was left out (failed, missing, undefined) and why, and how duplicates are
  resolved.

Each method scores its own records in its own package (`reljudge.judges.exam`,
`reljudge.judges.nuggets`, `reljudge.judges.pairwise`); `reljudge.judges.scoring` is the one
generic entry point for any mix of methods.
"""

from reljudge.aggregation.exclusions import Exclusions
from reljudge.aggregation.qrels import AggregatedScores, label_scores

__all__ = ["AggregatedScores", "Exclusions", "label_scores"]
