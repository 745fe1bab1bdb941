"""Binary relevance: does the passage answer the query? Label 1 (relevant) or 0.

Prompts: ``binary/trec-assessor`` (default; the TREC-assessor "Just answer 1 for yes and 0 for
no" prompt of Arabzadeh & Clarke's prompt-sensitivity collection) or ``binary/faggioli-yesno``
(Faggioli et al.'s Yes/No prompt); any binary template with the roles ``query`` and ``document`` works.
"""

from __future__ import annotations

from reljudge.judges.pointwise import PointwiseJudge
from reljudge.judges.registry import register


@register
class BinaryJudge(PointwiseJudge):
    """One call per (topic, passage); the answer is read as yes/1 or no/0."""

    name = "binary"
    default_prompt = "binary/trec-assessor"
    output_types = ("binary",)
    answer_tokens = 2
