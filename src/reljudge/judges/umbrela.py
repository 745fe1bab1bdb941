"""UMBRELA (Upadhyay et al. 2024): the Bing assessor prompt, a 0–3 grade per (topic, passage).

Prompts: ``umbrela/bing-zeroshot`` (default, the prompt of the UMBRELA paper and the TREC 2024
RAG Track) or ``umbrela/bing-fewshot`` (four fixed examples). The answer is read by looking for
the requested ``##final score: N`` marker first (the last one, near the end); only when it is
absent do fallbacks apply, and the record's ``parse`` field names the one used, so that a run
summary can count them. Unlike umbrela's own parser, an unreadable answer is ``unparsed``, not 0.
"""

from __future__ import annotations

from reljudge.judges.pointwise import PointwiseJudge
from reljudge.judges.registry import register


@register
class UmbrelaJudge(PointwiseJudge):
    """One call per (topic, passage); label 0..3."""

    name = "umbrela"
    default_prompt = "umbrela/bing-zeroshot"
    output_types = ("graded",)
    answer_tokens = 8
