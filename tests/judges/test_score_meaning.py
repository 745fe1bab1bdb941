"""Each judge declares what the values of its score sets mean (`Judge.score_meaning`): gains usable
as graded relevance or not, grades on the human scale or not, and the binary cut; every score set
carries its judge's declaration (issue 25, item 7)."""

from __future__ import annotations

from _mixed_run import mixed
from reljudge.judges.registry import registered
from reljudge.judges.scoring import score_meaning, score_sets


def test_every_set_name_a_built_in_judge_declares_has_a_meaning():
    for name, cls in registered().items():
        for set_name in cls.set_names:
            meaning = cls.score_meaning(set_name)
            assert meaning is not None and meaning.what, (name, set_name)
            assert score_meaning(set_name) == meaning


def test_the_sets_of_a_mixed_run_carry_their_judges_declarations():
    sets = score_sets(mixed())
    binary, umbrela, pairwise = sets["binary"].meaning, sets["umbrela"].meaning, sets["pairwise"].meaning
    assert binary is not None and (binary.cut, binary.strict, binary.scale) == (1, False, (0, 1))
    assert umbrela is not None and umbrela.grades and umbrela.gains and umbrela.cut is None  # the human level
    assert pairwise is not None and not pairwise.gains and (pairwise.cut, pairwise.strict) == (0, True)
    assert sets["trec-assessor-v2"].meaning is None  # a custom prompt's labels: read off the values
    for name in ("exam-binary", "nuggets-all", "nuggets-weighted-strict"):
        meaning = sets[name].meaning
        assert meaning is not None and not meaning.gains and (meaning.cut, meaning.strict) == (0, True), name


def test_only_the_highest_exam_rating_is_a_gain_and_expected_grades_cut_on_their_scale():
    graded_max, graded_mean = score_meaning("exam-graded-max"), score_meaning("exam-graded-mean")
    assert graded_max is not None and graded_max.gains and graded_max.scale == (0, 5)
    assert graded_mean is not None and not graded_mean.gains
    expected = score_meaning("umbrela-expected")
    assert expected is not None and expected.cut is None and not expected.grades
    assert score_meaning("no-such-set") is None
