"""Citation support of generated answers: does each passage an answer sentence cites support it?

- `judge`: the `CitationSupportJudge` (``judge run --method citation-support --answers FILE.jsonl``);
- `scores`: per answer and per system precision, recall, F1 and the share of cited sentences (pure).
"""

from reljudge.judges.citations.judge import CITATION_METHOD, SUPPORT_SCORES, CitationSupportJudge
from reljudge.judges.citations.scores import CitationTable, answer_scores, citation_table

__all__ = [
    "CITATION_METHOD",
    "SUPPORT_SCORES",
    "CitationSupportJudge",
    "CitationTable",
    "answer_scores",
    "citation_table",
]
