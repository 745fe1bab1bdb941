"""Aggregation machinery every judging method shares (pure functions, no LLM, no file I/O).

- `score_sets`: `AggregatedScores`, the document scores of one method (a score set), and
  `ScoreMeaning`, what its values mean (gains or not, the binary cut), as its judge declares it;
- `exclusions`: what was left out (failed, missing, undefined) and why, and how duplicates are
  resolved;
- `consensus`: one score per item from several judgment sets.

Each method scores its own records in its own package (`reljudge.judges.exam`,
`reljudge.judges.nuggets`); records no judge scores itself are scored by their shape, pointwise
labels or pairwise win counts (`reljudge.judges.shape_scoring`); `reljudge.judges.scoring` is the
one generic entry point for any mix of methods.
"""

from reljudge.aggregation.exclusions import Exclusions
from reljudge.aggregation.score_sets import AggregatedScores, ScoreMeaning

__all__ = ["AggregatedScores", "Exclusions", "ScoreMeaning"]
