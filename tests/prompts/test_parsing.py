"""Hostile model outputs: each case states its expected outcome (a label, U = unparsed,
R = refused). A wrong label is the failure we guard against; unparsed is always allowed to be
the honest answer for garbage."""

from __future__ import annotations

import pytest

from reljudge.prompts.parsing import (
    Parsed,
    parse_binary,
    parse_exam_answerability,
    parse_graded,
    parse_label_list,
    parse_pairwise,
    parse_self_rating,
    parse_string_list,
)

U, R = "U", "R"


def check(result: Parsed, expected) -> None:
    assert isinstance(result, Parsed)
    if expected == U:
        assert result.status == "unparsed" and result.label is None, result
    elif expected == R:
        assert result.status == "refused" and result.label is None, result
    elif isinstance(expected, tuple):
        assert result.status == "ok" and result.items == expected, result
    else:
        assert result.status == "ok" and result.label == expected, result


# --- graded 0-3 with the UMBRELA marker ---------------------------------------------------------

GRADED = [
    ("##final score: 2", 2),
    ("##final score: 0", 0),
    ("##final score: 3", 3),
    ("##final score:1", 1),
    ("##Final Score:2.", 2),
    ("## Final Score: 2", 2),
    ("##FINAL SCORE: 3", 3),
    ("final score = 2", 2),
    ("final score - 1", 1),
    ("Final score is 3.", 3),
    ("final score of 2", 2),
    ("##final score: **2**", 2),
    ("**##final score: 1**", 1),
    ("**Final Score:** 3", 3),
    ("##final score: `2`", 2),
    ('"final_score": 2', 2),
    ('{"final score": 1}', 1),
    ("##final score: \u201c2\u201d", 2),
    ("##final score: '3'", 3),
    ("##final score: (2)", 2),
    ("##final score: 2/3", 2),
    ("##final score: 2.0", 2),
    ("##final score: \uff12", 2),  # full-width digit
    ("The passage is related to 3 aspects of the query.\n##final score: 1", 1),
    ("##final score: 2\nthe passage relates to 3 of the query aspects", 2),
    ("Step 1: intent. Step 2: M=3, T=1.\n##final score: 1", 1),
    ("M: 2\nT: 3\nO: 2\n##final score: 2", 2),
    ("I first thought ##final score: 3 but on reflection\n##final score: 1", 1),
    ("<think>The score should be 3. ##final score: 3</think>\n##final score: 0", 0),
    ("<think>lots of 1 2 3 reasoning</think>##final score: 2", 2),
    ("<thinking>3</thinking>\n\n##final score: 1", 1),
    ("reasoning about 3 things</think>\n##final score: 2", 2),
    ("  \n\n##final score: 3  \n\n", 3),
    ("1. Consider intent.\n2. Measure M.\n3. Measure T.\n4. Decide.\n##final score: 2", 2),
    ("##final score: 4", U),
    ("##final score: -1", U),
    ("##final score: 2.5", U),
    ("##final score: score", U),
    ("##final score: 10", U),
    ("##final score:\n", U),
    ("Considering 3 aspects, I'd say ##final score: 7", U),
    ("", U),
    ("   \n\t ", U),
    ("<think>##final score: 2</think>", U),
    ("<think>I think it is 2", U),
    ("I'm sorry, but I can't help with that.", R),
    ("I cannot assist with this request.", R),
    ("I'm sorry, I cannot evaluate this passage.", R),
    ("As an AI language model, I cannot rate content like this.", R),
    ("2", 2),
    ("**3**", 3),
    ("Score: 1", 1),
    ("Relevance: 2.", 2),
    ('{"score": 3}', 3),
    ('```json\n{"O": 2, "M": 1, "T": 1}\n```', 2),
    ("I would rate this 2 out of 3.", 2),
    ("Overall this is a 1/3.", 1),
    ("The relevance category is 2 because the answer is hidden.", 2),
    ("The passage mentions 3 things and 2 dates.", U),
    ("The passage is related to 3 aspects", U),
    ("Highly relevant.", U),
    ("M: 2, T: 1, O: 2", U),
    ("It gets a 2 and maybe a 3.", U),
    ("Score: 5", U),
    ("The answer is 3 out of 5.", U),
    ("Thinking step by step...\n\n2", 2),
]


@pytest.mark.parametrize("text, expected", GRADED)
def test_graded_umbrela(text, expected):
    check(parse_graded(text, 0, 3), expected)


def test_graded_marker_wins_over_stray_digits():
    r = parse_graded("The passage is related to 3 aspects...\n##final score: 1")
    assert r.label == 1 and r.how == "marker"
    assert parse_graded("##final score: 4").how == "marker:out-of-range"
    assert parse_graded("I would rate this 2 out of 3.").how == "fallback:out-of"
    assert parse_graded("2").how == "exact"


# --- EXAM self-rating 0-5 (no marker) -----------------------------------------------------------

SELF_RATING = [
    ("5", 5),
    ("0", 0),
    ("4.", 4),
    (" 3 ", 3),
    ("**4**", 4),
    ("`2`", 2),
    ('"5"', 5),
    ("(1)", 1),
    ("[3]", 3),
    ("4: The answer is mostly relevant and complete but may have minor gaps or inaccuracies.", 4),
    ("- 3: The answer is partially relevant and complete, with noticeable gaps or inaccuracies.", 3),
    ("5 - highly relevant, complete, and accurate", 5),
    ("2) limited relevance", 2),
    ("Rating: 4", 4),
    ("Grade: 5", 5),
    ("Self-rating: 3", 3),
    ("Answer: 2", 2),
    ("My rating is 4.", 4),
    ("I'd give it a rating of 3 because the context mentions it.", 3),
    ("Score: 4/5", 4),
    ("4/5", 4),
    ("4 out of 5", 4),
    ('{"grade": 4}', 4),
    ('```json\n{ "grade": 5 }\n```', 5),
    ("{'grade': 1}", 1),
    ('Sure! {"grade": 3, "short_justification": "partial"}', 3),
    ("The context answers the question well.\n\n5", 5),
    ("The context answers it partially.\nRating: 3", 3),
    ("<think>It could be 5 or 4.</think>3", 3),
    ("<think>0</think>\n4", 4),
    ("Based on the context, 4.", 4),
    ("\uff14", 4),
    ("The question can be answered: 5", 5),
    ("Grade 2 - the answer has limited relevance.", 2),
    ("The grade is 1.", 1),
    ("rating = 0", 0),
    ("6", U),
    ("-1", U),
    ("Rating: 7", U),
    ("3.5", U),
    ("Score: 4.5", U),
    ("", U),
    ("   ", U),
    ("<think>5</think>", U),
    ("The answer is highly relevant, complete, and accurate.", U),
    ("choose one", U),
    ("The context mentions 1990 and 2001.", U),
    ("1. The context mentions X.\n2. It is missing Y.", U),
    ("I'm sorry, but I can't help with that.", R),
    ("I cannot comply with this request.", R),
    ("Sorry, I can't do that.", R),
    ("I apologize, but I am unable to rate this.", R),
    ("Between 3 and 4.", U),
    ("10", U),
    ("5 stars", U),
    ("0 - not relevant at all", 0),
    ("It is a 2.", 2),
    ("I'd say 3", 3),
    ("Rating: **4** (mostly relevant)", 4),
    ("**Rating:** 2", 2),
    ("\u201c4\u201d", 4),
    ("4\n\nThe context states the answer directly but omits the date 2020.", 4),
]


@pytest.mark.parametrize("text, expected", SELF_RATING)
def test_self_rating(text, expected):
    check(parse_self_rating(text), expected)


# --- binary 0/1 (digit and yes/no styles) -------------------------------------------------------

BINARY_DIGIT = [
    ("1", 1),
    ("0", 0),
    ("1.", 1),
    (" 0\n", 0),
    ("**1**", 1),
    ("`0`", 0),
    ("'1'", 1),
    ("\u201c1\u201d", 1),
    ("[1]", 1),
    ("Answer: 1", 1),
    ("Label: 0", 0),
    ("Relevance: 1", 1),
    ("Final answer: 0.", 0),
    ('{"relevant": 1}', 1),
    ('{"relevant": true}', 1),
    ('```json\n{"label": 0}\n```', 0),
    ("The passage discusses boiling points at 100 degrees.\nAnswer: 1", 1),
    ("It mentions 3 facts but none answer the query.\n0", 0),
    ("1 - the passage provides the answer.", 1),
    ("0: the passage is off-topic.", 0),
    ("<think>maybe 0</think>1", 1),
    ("<think>1</think>\n0", 0),
    ("Yes", 1),
    ("No.", 0),
    ("Relevant", 1),
    ("Not relevant.", 0),
    ("Irrelevant", 0),
    ("non-relevant", 0),
    ("The passage is useful, so 1", 1),
    ("2", U),
    ("3", U),
    ("-1", U),
    ("0.5", U),
    ("", U),
    ("<think>1</think>", U),
    ("Maybe.", U),
    ("1 or 0", U),
    ("The passage mentions 2 facts, so 1.", U),
    ("I'm sorry, but I can't assist with that.", R),
    ("I cannot help with this request.", R),
    ("I'm unable to provide a judgment.", U),
    ("As an AI, I cannot judge this content.", R),
    ("Answer: 2", U),
    ("Relevant? Hard to say.", U),
    ("Label = 1", 1),
    ("answer is 0", 0),
    ("The final answer is: **1**", 1),
    ("Output: 1", 1),
    ("\uff11", 1),
    ("1\n\nThe passage answers the query.", 1),
    ("0\nReason: it is about something else.", 0),
    ("Judgment: 0 (not useful)", 0),
    ("Verdict - 1", 1),
    ("1, because it mentions the boiling point.", 1),
    ("10", U),
    ("01", U),
    ("yes and no", U),
    ("The query and passage share 0 words; answer 1", U),
    ("Relevance score: 1", 1),
    ('{"answer": "yes"}', 1),
]


@pytest.mark.parametrize("text, expected", BINARY_DIGIT)
def test_binary_digit(text, expected):
    check(parse_binary(text, style="digit"), expected)


BINARY_YESNO = [
    ("Yes", 1),
    ("No", 0),
    ("yes", 1),
    ("NO", 0),
    ("Yes.", 1),
    ("No!", 0),
    ("**Yes**", 1),
    ("'No'", 0),
    ("\u2018Yes\u2019", 1),
    ("Answer: Yes", 1),
    ("Answer: No", 0),
    ("Yes, the passage is relevant for the question.", 1),
    ("No, it talks about something else.", 0),
    ("No - unrelated.", 0),
    ("The passage describes boiling.\nAnswer: Yes", 1),
    ("The passage describes boiling.\n\nYes", 1),
    ("<think>No wait</think>Yes", 1),
    ("<think>Yes</think>\nNo", 0),
    ("1", 1),
    ("0", 0),
    ("Relevant", 1),
    ("Not relevant", 0),
    ("No doubt the passage answers the question.", U),
    ("There is no mention of the query.", U),
    ("Maybe", U),
    ("", U),
    ("<think>Yes</think>", U),
    ("Yes and no.", U),
    ("I'm sorry, I can't answer that.", R),
    ("I cannot assist with that.", R),
    ("Yes\n", 1),
    ("Answer:Yes", 1),
    ("Final answer: No.", 0),
    ("Answer - Yes", 1),
    ("verdict: no", 0),
    ("YES!", 1),
    ("(yes)", 1),
    ("Y", U),
    ("Yeah", U),
    ("Nope", U),
    ("2", U),
    ("The answer is relevant.", U),
    ("It depends.", U),
    ("Yes: the passage says water boils at 100 C.", 1),
    ("No; the passage is about ice.", 0),
    ("\uff39\uff45\uff53", 1),  # full-width "Yes"
    ("  no  ", 0),
    ("Answer: \u201cYes\u201d", 1),
    ("Decision: yes", 1),
    ("Output: No", 0),
    ("The passage is off-topic.\nNo", 0),
    ("Is it relevant? No.", U),
    ("Relevant: yes", 1),
    ("Relevant: no", 0),
    ("Sorry, but I can't comply.", R),
    ("As an AI language model, I can't determine that.", R),
    ("yes.\n\nExplanation: direct answer", 1),
    ("no.\n\nExplanation: unrelated", 0),
    ("Irrelevant", 0),
    ("non relevant", 0),
]


@pytest.mark.parametrize("text, expected", BINARY_YESNO)
def test_binary_yesno(text, expected):
    check(parse_binary(text, style="yesno"), expected)


ANSWERABILITY = [
    ("100 degrees Celsius", 1),
    ("Water boils at 100 C at sea level.", 1),
    ("Yes", 1),
    ("1990", 1),
    ("unanswerable", 0),
    ("Unanswerable.", 0),
    ("No", 0),
    ("no answer", 0),
    ("Not enough information.", 0),
    ("unknown", 0),
    ("It is not possible to tell.", 0),
    ("It does not say.", 0),
    ("No relevant information", 0),
    ("The context does not mention the boiling point.", 0),
    ("The passage doesn't provide this information.", 0),
    ("The question cannot be answered based on the context.", 0),
    ("I cannot answer this question based on the context.", 0),
    ("There is no information about that in the context.", 0),
    ("Not mentioned in the context.", 0),
    ("N/A", 0),
    ("<think>unanswerable?</think>100 C", 1),
    ("<think>100 C</think>unanswerable", 0),
    ("", U),
    ("  ", U),
    ("...", U),
    ("I'm sorry, but I can't help with that.", R),
]


@pytest.mark.parametrize("text, expected", ANSWERABILITY)
def test_exam_answerability(text, expected):
    check(parse_exam_answerability(text), expected)
    check(parse_binary(text, style="answerability"), expected)


# --- pairwise -----------------------------------------------------------------------------------

PAIRWISE = [
    ("1", 1),
    ("2", 2),
    ("2.", 2),
    (" 1 ", 1),
    ("**2**", 2),
    ("`1`", 1),
    ('"2"', 2),
    ("(1)", 1),
    ("[2]", 2),
    ("Passage 2", 2),
    ("Passage 1.", 1),
    ("passage 2", 2),
    ("**Passage 1**", 1),
    ("Answer: 1", 1),
    ("Answer: Passage 2", 2),
    ("Final answer: 2", 2),
    ("Choice: 1", 1),
    ("Preferred passage: 2", 2),
    ("A", 1),
    ("B", 2),
    ("Passage A", 1),
    ("Passage B", 2),
    ("Document 2", 2),
    ("\uff12", 2),
    ("2\n", 2),
    ("1 - it answers the question directly.", 1),
    ("2: more specific.", 2),
    ("Passage 2. It gives the exact temperature.", 2),
    ("Passage 1 is better than Passage 2.", 1),
    ("Passage 2 is more relevant to the question.", 2),
    ("I prefer passage 1.", 1),
    ("I would choose Passage 2 because it is clearer.", 2),
    ("After comparing both, the answer is: Passage 2", 2),
    ("The better passage is 1.", 1),
    ("Passage 1 answers the question better.", 1),
    ("<think>Passage 1 seems better</think>2", 2),
    ("<think>2</think>\nPassage 1", 1),
    ("Passage 2 clearly addresses the query about 100 degrees.", 2),
    ("Passage 1 is more relevant, though Passage 2 mentions 3 facts.", 1),
    ("Both passages are similar.", U),
    ("Neither passage answers the question.", U),
    ("It's a tie.", U),
    ("1 and 2 are equally good.", U),
    ("1 or 2", U),
    ("Passage 1 is better. Actually Passage 2 is better.", U),
    ("Passage 2 is not relevant.", U),
    ("3", U),
    ("0", U),
    ("Passage 3", U),
    ("", U),
    ("<think>1</think>", U),
    ("I'm sorry, I can't help with that.", R),
    ("I cannot assist with comparing these passages.", R),
    ("The answer is a bit unclear in both passages.", U),
    ("Passage 1 mentions 1990 and passage 2 mentions 2001.", U),
    ("They both discuss boiling.", U),
    ("1.\n2.", U),
    ("Answer: A", 1),
    ("answer is a passage about water", U),
    ("winner: B", 2),
    ("Selection - 2", 2),
    ("Option 1", 1),
    ("I pick passage 2.", 2),
    ("Passage 2 seems more useful for the query.", 2),
    ("The first passage", U),
]


@pytest.mark.parametrize("text, expected", PAIRWISE)
def test_pairwise(text, expected):
    check(parse_pairwise(text), expected)


# --- string lists (generated questions, nuggets) ------------------------------------------------

Q2 = ("What is the boiling point of water?", "Does altitude matter?")

STRING_LIST = [
    ('["What is the boiling point of water?", "Does altitude matter?"]', Q2),
    ("['What is the boiling point of water?', 'Does altitude matter?']", Q2),
    ('["What is the boiling point of water?", "Does altitude matter?",]', Q2),
    ("['What is the boiling point of water?', 'Does altitude matter?',]", Q2),
    ('```json\n["What is the boiling point of water?", "Does altitude matter?"]\n```', Q2),
    ('```python\n["What is the boiling point of water?", "Does altitude matter?"]\n```', Q2),
    ('```\n["What is the boiling point of water?", "Does altitude matter?"]\n```', Q2),
    (
        'Here are the questions:\n["What is the boiling point of water?", "Does altitude matter?"]\nLet me know!',
        Q2,
    ),
    (
        'Sure! ```json\n{"questions": ["What is the boiling point of water?", "Does altitude matter?"]}\n```',
        Q2,
    ),
    ('{ "questions": ["What is the boiling point of water?", "Does altitude matter?"] }', Q2),
    ('{"nuggets": ["What is the boiling point of water?", "Does altitude matter?"]}', Q2),
    ("[\u201cWhat is the boiling point of water?\u201d, \u201cDoes altitude matter?\u201d]", Q2),
    ("[\u2018What is the boiling point of water?\u2019, \u2018Does altitude matter?\u2019]", Q2),
    ('[\n  "What is the boiling point of water?",\n  "Does altitude matter?"\n]', Q2),
    ('<think>["wrong", "list"]</think>["What is the boiling point of water?", "Does altitude matter?"]', Q2),
    (
        'Initial: ["old"]\nUpdated Nugget List: ["What is the boiling point of water?", "Does altitude matter?"]',
        Q2,
    ),
    ("1. What is the boiling point of water?\n2. Does altitude matter?", Q2),
    ("- What is the boiling point of water?\n- Does altitude matter?", Q2),
    ("* What is the boiling point of water?\n* Does altitude matter?", Q2),
    ("Questions:\n1) What is the boiling point of water?\n2) Does altitude matter?", Q2),
    ('1. "What is the boiling point of water?"\n2. "Does altitude matter?"', Q2),
    ("1. **What is the boiling point of water?**\n2. **Does altitude matter?**", Q2),
    ("\u2022 What is the boiling point of water?\n\u2022 Does altitude matter?", Q2),
    (
        "[\"What's the boiling point?\", 'Does altitude matter?']",
        ("What's the boiling point?", "Does altitude matter?"),
    ),
    (
        "['What\u2019s the boiling point?', 'Does altitude matter?']",
        ("What\u2019s the boiling point?", "Does altitude matter?"),
    ),
    (
        "[\u2018What\u2019s the boiling point?\u2019, \u2018Does altitude matter?\u2019]",
        ("What\u2019s the boiling point?", "Does altitude matter?"),
    ),
    ('["a", "b", "c"]', ("a", "b", "c")),
    ('["water boils at 100 C"]', ("water boils at 100 C",)),
    ("[]", ()),
    ('["  padded  ", "x"]', ("padded", "x")),
    ('["has [brackets] inside", "y"]', ("has [brackets] inside", "y")),
    ('["comma, inside", "y"]', ("comma, inside", "y")),
    ('["quote \\" inside", "y"]', ('quote " inside', "y")),
    ("['nested', ['list']]", U),
    ("[1, 2, 3]", U),
    ('[{"q": "x"}]', U),
    ("", U),
    ("   ", U),
    ('<think>["a"]</think>', U),
    ("There are no questions.", U),
    ("I'm sorry, but I can't help with that.", R),
    ("I cannot assist with generating these questions.", R),
    ("What is the boiling point of water?", U),
    ("[unclosed, list", U),
    ('{"questions": "not a list"}', U),
    ('["a", "b"] and also ["c"]', ("c",)),
    ('```json\n["x", "y"]\n```\n```json\n["z"]\n```', ("z",)),
    ('Here you go: ["a", "b"].', ("a", "b")),
    ('["a",\n"b",\n]', ("a", "b")),
    ("['a', \"b\"]", ("a", "b")),
    ('[  "a"  ,  "b"  ]', ("a", "b")),
    ("[\u201ca\u201d, \u201cb\u201d,]", ("a", "b")),
    ('```json\n{ "questions": ["a", "b",] }\n```', ("a", "b")),
    ('["line\\nbreak", "b"]', ("line break", "b")),
    (
        "1. First question?\n\n2. Second question?\n\nHope this helps.",
        ("First question?", "Second question?"),
    ),
    ('["\uff21", "b"]', ("A", "b")),
    ('["a", "", "b"]', ("a", "b")),
    ('Output:\n```\n["a", "b"]\n```\nThese cover the topic.', ("a", "b")),
    ('{"questions": ["a"], "count": 1}', ("a",)),
    ("[a, b]", U),
    ("None", U),
]


@pytest.mark.parametrize("text, expected", STRING_LIST)
def test_string_list(text, expected):
    check(parse_string_list(text), expected)


# --- label lists (nugget importance and assignment) ---------------------------------------------

ASSIGN = ("support", "partial_support", "not_support")
IMPORTANCE = ("vital", "okay")
S3 = ("support", "partial_support", "not_support")

LABEL_LIST = [
    # (text, vocabulary, expected_len, expected)
    ('["support", "partial_support", "not_support"]', ASSIGN, 3, S3),
    ("['support', 'partial_support', 'not_support']", ASSIGN, 3, S3),
    ("[support, partial_support, not_support]", ASSIGN, 3, S3),
    ('["Support", "Partial_Support", "NOT_SUPPORT"]', ASSIGN, 3, S3),
    ('["support", "partial support", "not support"]', ASSIGN, 3, S3),
    ('["support", "partial-support", "not-support"]', ASSIGN, 3, S3),
    ('[" support ", "partial_support ", " not_support"]', ASSIGN, 3, S3),
    ('["support.", "partial_support,", "not_support"]', ASSIGN, 3, S3),
    ('```python\n["support", "partial_support", "not_support"]\n```', ASSIGN, 3, S3),
    ('```json\n["support", "partial_support", "not_support"]\n```', ASSIGN, 3, S3),
    ('Labels: ["support", "partial_support", "not_support"]', ASSIGN, 3, S3),
    ('Here are the labels:\n["support", "partial_support", "not_support"]\nDone.', ASSIGN, 3, S3),
    ("[\u201csupport\u201d, \u201cpartial_support\u201d, \u201cnot_support\u201d]", ASSIGN, 3, S3),
    ("[\u2018support\u2019, \u2018partial_support\u2019, \u2018not_support\u2019]", ASSIGN, 3, S3),
    ('["support", "partial_support", "not_support",]', ASSIGN, 3, S3),
    ('{"labels": ["support", "partial_support", "not_support"]}', ASSIGN, 3, S3),
    ("1. support\n2. partial_support\n3. not_support", ASSIGN, 3, S3),
    ("- support\n- partial_support\n- not_support", ASSIGN, 3, S3),
    (
        "1. Nugget about water: support\n2. Nugget about altitude: partial_support\n3. Other: not_support",
        ASSIGN,
        3,
        S3,
    ),
    ("support, partial_support, not_support", ASSIGN, 3, S3),
    ("support\npartial_support\nnot_support", ASSIGN, 3, S3),
    ('<think>["not_support"]</think>["support", "partial_support", "not_support"]', ASSIGN, 3, S3),
    ('["**support**", "partial_support", "not_support"]', ASSIGN, 3, S3),
    ('["support", "partial_support", "not_support"]', ASSIGN, None, S3),
    ('["support", "partial_support"]', ASSIGN, 3, U),
    ('["support", "partial_support", "not_support", "support"]', ASSIGN, 3, U),
    ('["support", "supported", "not_support"]', ASSIGN, 3, U),
    ('["support", "partially supported", "not_support"]', ASSIGN, 3, U),
    ('["support", "maybe", "not_support"]', ASSIGN, 3, U),
    ('["support", "failed", "not_support"]', ASSIGN, 3, U),
    ('["support", "vital", "not_support"]', ASSIGN, 3, U),
    ("[1, 0, 1]", ASSIGN, 3, U),
    ("", ASSIGN, 3, U),
    ("   ", ASSIGN, 3, U),
    ('<think>["support"]</think>', ASSIGN, 1, U),
    ("I'm sorry, but I can't help with that.", ASSIGN, 3, R),
    ("I cannot assist with labeling these nuggets.", ASSIGN, 3, R),
    ("The first nugget is supported.", ASSIGN, 1, U),
    ("[]", ASSIGN, 3, U),
    ("[]", ASSIGN, 0, ()),
    ('["support"]', ("support", "not_support"), 1, ("support",)),
    ('["partial_support"]', ("support", "not_support"), 1, U),
    ('["vital", "okay", "vital"]', IMPORTANCE, 3, ("vital", "okay", "vital")),
    ("['vital', 'okay']", IMPORTANCE, 2, ("vital", "okay")),
    ('["Vital", "OKAY"]', IMPORTANCE, 2, ("vital", "okay")),
    ("[vital, okay]", IMPORTANCE, 2, ("vital", "okay")),
    ("vital, okay", IMPORTANCE, 2, ("vital", "okay")),
    ("1. vital\n2. okay", IMPORTANCE, 2, ("vital", "okay")),
    ('```\n["vital", "okay"]\n```', IMPORTANCE, 2, ("vital", "okay")),
    ('["vital", "ok"]', IMPORTANCE, 2, U),
    ('["vital", "important"]', IMPORTANCE, 2, U),
    ('["vital"]', IMPORTANCE, 2, U),
    ('["vital", "okay", "okay"]', IMPORTANCE, 2, U),
    ('Labels:\n["vital", "okay"]', IMPORTANCE, 2, ("vital", "okay")),
    ('["okay", "vital"] is my answer, not ["vital", "vital"]', IMPORTANCE, 2, ("vital", "vital")),
    ("vital okay", IMPORTANCE, 2, U),
    ("Labels: vital, okay", IMPORTANCE, 2, ("vital", "okay")),
    ('{"labels": ["vital", "okay"]}', IMPORTANCE, 2, ("vital", "okay")),
    ("[\u201cvital\u201d, \u201cokay\u201d,]", IMPORTANCE, 2, ("vital", "okay")),
    ('["\uff56ital", "okay"]', IMPORTANCE, 2, ("vital", "okay")),
    ('["vital", "okay"]\n\nExplanation: the first is essential.', IMPORTANCE, 2, ("vital", "okay")),
    ("Sorry, I can't do that.", IMPORTANCE, 2, R),
]


@pytest.mark.parametrize("text, vocabulary, expected_len, expected", LABEL_LIST)
def test_label_list(text, vocabulary, expected_len, expected):
    check(parse_label_list(text, vocabulary, expected_len), expected)


def test_label_list_failures_say_why():
    assert parse_label_list('["support"]', ASSIGN, 2).how == "length:1!=2"
    assert parse_label_list('["supported"]', ASSIGN, 1).how == "vocabulary:supported"


def test_case_counts():
    """The brief: at least 60 hostile cases per label type."""
    assert len(GRADED) >= 60
    assert len(SELF_RATING) >= 60
    assert len(BINARY_DIGIT) + len(BINARY_YESNO) + len(ANSWERABILITY) >= 60
    assert len(PAIRWISE) >= 60
    assert len(STRING_LIST) >= 60
    assert len(LABEL_LIST) >= 60


# --- answer formats the published prompt-sensitivity prompts ask for ---------------------------
# (prompts.json: 8 shows "<output> 3 </output>" in its example; 21 ends its user message with the
# cues "Relevance (0-3):" / "Relevance (1 or 0):" / "More Relevant Passage (A or B):"; 5 and 7 name
# the passages "Passage_A"/"Passage_B"; 15 and 32 write their scale as "3 = highly relevant".)

PUBLISHED_GRADED = [
    ("<output> 3 </output>", 3),
    ("<output>2</output>", 2),
    ("<OUTPUT>\n1\n</OUTPUT>", 1),
    ("<output> 0 </output>\n", 0),
    ("<output>Answer: 2</output>", 2),
    ("<output> 4 </output>", U),  # out of range, never clamped
    ("<output> 1 </output><output> 3 </output>", U),  # two answers
    ("<output> 2 </output> or maybe 3", U),  # not one element: the prose has two numbers
    ("<output>highly relevant</output>", U),
    ("<output> 2 </outputs>", U),  # mismatched tags: not an element, so no labelled answer
    ("<query>3 facts</query>", U),  # not an answer tag
    ("Relevance (0-3): 2", 2),
    ("Relevance (0-3): 3.", 3),
    ("Relevance (0-3): 5", U),
    ("Relevance (0-3):", U),
    ("Relevance (0-3): 2 or 3", U),
    ("Score (out of 3): 1", 1),
    ("3 = highly relevant", 3),
    ("3 = highly relevant, The passage is dedicated to the query and contains the exact answer.", 3),
    ("0 = Irrelevant", 0),
    ("5 = excellent", U),
    ("1. = bad\n2. = good", U),  # an enumerated list, not an answer
]


@pytest.mark.parametrize("text, expected", PUBLISHED_GRADED)
def test_published_graded_formats(text, expected):
    check(parse_graded(text, 0, 3, marker=None), expected)


def test_published_graded_formats_keep_the_marker_first():
    r = parse_graded("<output> 3 </output>\n##final score: 1")
    assert r.label == 1 and r.how == "marker"
    assert parse_graded("<output> 3 </output>").how == "labelled"
    assert parse_graded("Relevance (0-3): 2").how == "labelled"


PUBLISHED_BINARY = [
    ("<output> 1 </output>", 1),
    ("<output>0</output>", 0),
    ("<output> 2 </output>", U),
    ("<output> 1 </output> <output> 0 </output>", U),
    ("Relevance (1 or 0): 1", 1),
    ("Relevance (1 or 0): 0", 0),
    ("Relevance (1 or 0): 1 but maybe 0", U),
    ("Relevance (1 or 0):", U),
    ("Label (0 or 1): 3", U),
    # prompt 6 asks for a quote and a rationale, no label: digits of the quoted passage are no label
    ('Quote: "The 1 thing about goldfish"\nRationale: the document addresses the query.', U),
    ('Quote: "Follow step 1."\nRationale: it addresses the query.', U),
    ("the 1 thing that matters", U),
    ('I answer "1".', 1),
]


@pytest.mark.parametrize("text, expected", PUBLISHED_BINARY)
def test_published_binary_formats(text, expected):
    check(parse_binary(text), expected)


PUBLISHED_PAIRWISE = [
    ("Passage_A", 1),
    ("Passage_B", 2),
    ("passage_b", 2),
    ("'Passage_A'", 1),
    ("Passage_B is more relevant.", 2),
    ("I prefer Passage_A.", 1),
    ("Both Passage_A and Passage_B are relevant.", U),
    ("Passage_A or Passage_B", U),
    ("Passage_C", U),
    ("<output> Passage A </output>", 1),
    ("<output>B</output>", 2),
    ("<output> Passage A </output><output> Passage B </output>", U),
    ("More Relevant Passage (A or B): B", 2),
    ("More Relevant Passage (A or B): A", 1),
    ("More Relevant Passage (A or B):", U),
    ("More Relevant Passage (A or B): neither", U),
]


@pytest.mark.parametrize("text, expected", PUBLISHED_PAIRWISE)
def test_published_pairwise_formats(text, expected):
    check(parse_pairwise(text), expected)
