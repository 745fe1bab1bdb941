"""The judge registry's messages: an unknown method names the closest registered one."""

from __future__ import annotations

import pytest

from _cli import judge
from reljudge.errors import InputError
from reljudge.judges.registry import get_judge, unknown_method


def test_an_unknown_method_gets_a_did_you_mean():
    assert unknown_method("umbrella").startswith("unknown method 'umbrella'; did you mean 'umbrela'?")
    assert "did you mean" not in unknown_method("zzz") and "umbrela" in unknown_method("zzz")
    with pytest.raises(InputError, match="did you mean 'pairwise'"):
        get_judge("pairwise2")


def test_judge_run_with_a_misspelt_method_says_which_one(tmp_path):
    ran = judge("run", "--method", "umbrella", "--model", "gpt-4o", "--dataset", "dl19-sample", "--dry-run")
    assert ran.returncode == 2
    assert "error: unknown method 'umbrella'; did you mean 'umbrela'?" in ran.stderr
