"""EXAM (Sander & Dietz 2021; FLAN-T5-EXAM): exam questions per topic, each passage graded on
each question; passage scores by the share of questions answered or the best / mean rating.

- `judge`: the `ExamJudge` (question generation, grading, its resources and score sets);
- `scores`: questions, the question bank and the passage scores (pure);
- `sets`: from EXAM records to the published score sets.
"""

from reljudge.judges.exam.judge import ExamJudge, read_question_bank
from reljudge.judges.exam.scores import EXAM_SCORES, Question, QuestionBank, exam_scores, question_id
from reljudge.judges.exam.sets import EXAM_SETS, GRADE_METHOD, QUESTION_METHOD, exam_sets

__all__ = [
    "EXAM_SCORES",
    "EXAM_SETS",
    "GRADE_METHOD",
    "QUESTION_METHOD",
    "ExamJudge",
    "Question",
    "QuestionBank",
    "exam_scores",
    "exam_sets",
    "question_id",
    "read_question_bank",
]
