"""Aggregation: judgment records -> document scores (pure functions, no LLM, no file I/O).

- `exam`: EXAM passage scores (binary, graded-max, graded-mean) and the question bank;
- `nuggets`: the six TREC RAG 2024 nugget scores and top-k nugget selection;
- `preferences`: combining the two presentation orders of a pair, and win counting;
- `qrels`: `judgments_to_scores`, one entry point for every method;
- `sets`: `score_sets`, every score set the records of a run support (any mix of methods);
- `exclusions`: what was left out (failed, missing, undefined) and why.
"""

from reljudge.aggregation.exam import QuestionBank, exam_scores, question_id
from reljudge.aggregation.exclusions import Exclusions
from reljudge.aggregation.nuggets import Nugget, nugget_id, nugget_scores, select_nuggets
from reljudge.aggregation.preferences import combine_orders, count_wins
from reljudge.aggregation.qrels import AggregatedScores, judgments_to_scores
from reljudge.aggregation.sets import score_sets

__all__ = [
    "AggregatedScores",
    "Exclusions",
    "Nugget",
    "QuestionBank",
    "combine_orders",
    "count_wins",
    "exam_scores",
    "judgments_to_scores",
    "nugget_id",
    "nugget_scores",
    "question_id",
    "score_sets",
    "select_nuggets",
]
