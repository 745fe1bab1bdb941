"""Property tests of the parsers behind custom prompts (`OutputSpec.parse`): for any declared
output contract -- graded ranges of any span and sign, any answer marker, every binary style,
pairwise, label vocabularies -- random and adversarial answers never raise, and a label never
leaves the declared range or vocabulary. (The built-in parsers are covered by
tests/prompts/test_parsing_properties.py.)"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reljudge.prompts import OutputSpec

NUMBERS = st.integers(-1000, 1000).map(str) | st.floats(allow_nan=True, allow_infinity=True).map(str)
PIECES = st.sampled_from(
    ["##final score:", "Score:", "Relevance:", "Answer:", "final", ":", " ", "\n", "-", "+", "/", "out of",
     "**", "`", "{", "}", '"score": ', '"grade": ', "[", "]", "yes", "No", "Passage 1", "Passage 2",
     "<think>", "</think>", "unanswerable", "\u200b", "\uff13", "I cannot help with that", "vital", "okay"]
)  # fmt: skip
hostile = st.one_of(
    st.none(),
    st.text(max_size=200),
    st.lists(st.one_of(PIECES, NUMBERS, st.text(max_size=6)), max_size=25).map("".join),
)
markers = st.one_of(
    st.none(),
    st.sampled_from(["##final score:", "Relevance:", "Score:", "Grade"]),
    st.text(min_size=1, max_size=12),
)


@st.composite
def graded_specs(draw) -> OutputSpec:
    lo = draw(st.integers(-10, 10))
    hi = lo + draw(st.integers(1, 100))
    return OutputSpec(type="graded", range=(lo, hi), marker=draw(markers))


def _check(spec: OutputSpec, text: str | None, expected_len: int | None = None) -> None:
    result = spec.parse(text, expected_len)
    assert result.status in ("ok", "unparsed", "refused")
    if result.status != "ok":
        assert result.label is None and result.items is None
        return
    if spec.type == "graded":
        assert spec.range is not None
        assert isinstance(result.label, int) and not isinstance(result.label, bool)
        assert spec.range[0] <= result.label <= spec.range[1]
    elif spec.type == "binary":
        assert result.label in (0, 1)
    elif spec.type == "pairwise":
        assert result.label in (1, 2)
    elif spec.type == "labels":
        assert result.items is not None and all(i in (spec.vocabulary or ()) for i in result.items)
        assert expected_len is None or len(result.items) == expected_len
    else:
        assert result.items is not None and all(isinstance(i, str) and i for i in result.items)


@settings(max_examples=300, deadline=None)
@given(graded_specs(), hostile)
@pytest.mark.slow
def test_graded_custom_outputs_stay_in_their_range(spec, text):
    _check(spec, text)


@settings(max_examples=150, deadline=None)
@given(graded_specs(), st.integers(-2000, 2000))
def test_a_bare_number_is_taken_only_inside_the_range(spec, n):
    result = spec.parse(str(n))
    assert spec.range is not None
    if result.status == "ok":
        assert result.label == n and spec.range[0] <= n <= spec.range[1]


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["binary", "binary:yesno", "binary:answerability", "pairwise", "questions", "nuggets"]),
    hostile,
)
def test_other_custom_outputs_never_raise_or_leave_their_values(short, text):
    _check(OutputSpec.coerce(short), text)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=10),
        min_size=1,
        max_size=4,
        unique=True,
    ),
    hostile,
    st.one_of(st.none(), st.integers(0, 5)),
)
def test_label_lists_respect_any_vocabulary(vocab, text, n):
    _check(OutputSpec(type="labels", vocabulary=tuple(vocab)), text, n)
