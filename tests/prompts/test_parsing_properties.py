"""Property tests: random and adversarial text into every parser -> no exception escapes, the
status is one of ok/unparsed/refused, and no label leaves the declared range or vocabulary."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reljudge.prompts.parsing import (
    parse_binary,
    parse_exam_answerability,
    parse_graded,
    parse_label_list,
    parse_pairwise,
    parse_self_rating,
    parse_string_list,
)

FRAGMENTS = [
    "##final score:",
    "final score",
    "score:",
    "Answer:",
    "Passage 1",
    "Passage 2",
    "passage A",
    "B",
    "<think>",
    "</think>",
    "<thinking>",
    "```json\n",
    "```",
    "[",
    "]",
    "{",
    "}",
    '"',
    "'",
    "\u201c",
    "\u201d",
    "\u2019",
    ",",
    ".",
    "\n",
    " ",
    "**",
    "`",
    "-",
    "/",
    "out of",
    "0",
    "1",
    "2",
    "3",
    "4",
    "5",
    "7",
    "-1",
    "2.5",
    "10",
    "\uff12",
    "yes",
    "No",
    "relevant",
    "not",
    "both",
    "I'm sorry, but I can't help",
    "vital",
    "okay",
    "support",
    "partial_support",
    "not_support",
    "1. ",
    "- ",
    '{"score": ',
    '{"grade": ',
    "unanswerable",
    "questions",
    "null",
    "true",
    "\x00",
    "\u200b",
    "\\",
    "(",
    ")",
]
hostile = st.one_of(
    st.text(max_size=300),
    st.lists(st.sampled_from(FRAGMENTS), max_size=25).map("".join),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=20).map("".join),
)
STATUSES = {"ok", "unparsed", "refused"}


def _scalar_ok(result, allowed):
    assert result.status in STATUSES
    if result.status == "ok":
        assert result.label in allowed and isinstance(result.label, int)
    else:
        assert result.label is None
    assert result.items is None
    assert isinstance(result.how, str) and result.how


@settings(max_examples=150, deadline=None)
@given(hostile)
@pytest.mark.slow
def test_graded_never_out_of_range(text):
    _scalar_ok(parse_graded(text, 0, 3), {0, 1, 2, 3})
    _scalar_ok(parse_graded(text, 0, 3, marker=None), {0, 1, 2, 3})
    _scalar_ok(parse_graded(text, 1, 4, marker="Relevance:"), {1, 2, 3, 4})


@settings(max_examples=150, deadline=None)
@given(hostile)
def test_self_rating_never_out_of_range(text):
    _scalar_ok(parse_self_rating(text), {0, 1, 2, 3, 4, 5})


@settings(max_examples=150, deadline=None)
@given(hostile)
def test_binary_is_zero_or_one(text):
    _scalar_ok(parse_binary(text, "digit"), {0, 1})
    _scalar_ok(parse_binary(text, "yesno"), {0, 1})
    _scalar_ok(parse_exam_answerability(text), {0, 1})


@settings(max_examples=150, deadline=None)
@given(hostile)
def test_pairwise_is_one_or_two(text):
    _scalar_ok(parse_pairwise(text), {1, 2})


@settings(max_examples=150, deadline=None)
@given(hostile)
def test_string_list_gives_strings(text):
    r = parse_string_list(text)
    assert r.status in STATUSES and r.label is None
    if r.status == "ok":
        assert isinstance(r.items, tuple) and all(isinstance(i, str) and i for i in r.items)
    else:
        assert r.items is None


@settings(max_examples=150, deadline=None)
@given(hostile, st.one_of(st.none(), st.integers(0, 4)))
def test_label_list_respects_vocabulary_and_length(text, n):
    vocab = ("support", "partial_support", "not_support")
    r = parse_label_list(text, vocab, n)
    assert r.status in STATUSES and r.label is None
    if r.status == "ok":
        assert all(i in vocab for i in r.items)
        assert n is None or len(r.items) == n
    else:
        assert r.items is None


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 3), st.text(max_size=200))
def test_marker_value_survives_reasoning_noise(grade, noise):
    """A well-formed final marker line decides, whatever digits come before it."""
    r = parse_graded(noise + "\n##final score: " + str(grade))
    # noise may itself end in an unfinished marker that swallows ours; then it is unparsed, never wrong
    assert r.label in (grade, None)
