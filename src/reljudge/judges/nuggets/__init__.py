"""AutoNuggetizer (Pradeep et al., TREC 2024 RAG Track): nuggets from relevant passages, scored
vital/okay, then assigned to each passage; the six TREC RAG 2024 scores.

- `judge`: the `NuggetJudge` (create, score, select, assign);
- `scores`: nuggets, their selection and the passage scores (pure);
- `sets`: from nugget records to the published score sets.
"""

from reljudge.judges.nuggets.judge import NuggetJudge
from reljudge.judges.nuggets.scores import (
    ASSIGNMENT_LABELS,
    NUGGET_SCORES,
    Nugget,
    nugget_id,
    nugget_scores,
    select_nuggets,
)
from reljudge.judges.nuggets.sets import (
    ASSIGN_METHOD,
    CREATION_METHOD,
    NUGGET_METHOD,
    NUGGET_SETS,
    nugget_sets,
)

__all__ = [
    "ASSIGNMENT_LABELS",
    "ASSIGN_METHOD",
    "CREATION_METHOD",
    "NUGGET_METHOD",
    "NUGGET_SCORES",
    "NUGGET_SETS",
    "Nugget",
    "NuggetJudge",
    "nugget_id",
    "nugget_scores",
    "nugget_sets",
    "select_nuggets",
]
