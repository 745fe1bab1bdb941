"""The synthetic benchmark whose answer is known (examples/grids/synthetic.py): A diverse images
near the target, B the same image repeated near the target, C diverse images far from it.

Fluency (RBP, ERR) ranks A and B above C; the novelty-discounted measures rank A above B;
Diversity ranks A and C above B. The agreement with preferences built from A > B > C is printed
(``pytest -s``) and checked: the discounted measures agree with every non-tie preference of the
A-B pairs that fluency gets wrong."""

from __future__ import annotations

import numpy as np
import pytest

from _grids_synthetic import synthetic
from reljudge.analyses.grids import GridPreference, GridSettings, evaluate_grids
from reljudge.analyses.grids.files import format_report

pytestmark = pytest.mark.slow  # the bootstrap of the agreement (about 1 s)


def report(prompts=24, k=8, **settings):
    data = synthetic().generate(prompts=prompts, k=k)
    targets = {p: np.array([data["vectors"][i] for i in ids]) for p, ids in data["targets"].items()}
    return evaluate_grids(
        data["grids"],
        data["vectors"],
        targets,
        salience=data["salience"],
        preferences=[GridPreference(*p) for p in data["preferences"]],
        settings=GridSettings(**settings),
    )


@pytest.mark.parametrize(
    ("exact", "prompts", "k"),
    [(False, 24, 8), (True, 12, 6)],  # the exact expectation over 6! orders (8! takes 0.1-0.3 s a grid)
)
def test_the_known_answer(exact, prompts, k):
    found = report(prompts, k, exact=exact, n_boot=200)
    by = {r["system"]: r for r in found.per_system}
    a, b, c = by["A"], by["B"], by["C"]
    for fluency in ("relevance", "RBP", "ERR"):
        assert min(a[fluency], b[fluency]) > c[fluency], fluency
    for novelty in ("RBP_delta_u", "RBP_delta", "ERR_delta_u", "ERR_delta"):
        assert a[novelty] > b[novelty] > c[novelty], novelty
    assert min(a["diversity"], c["diversity"]) > b["diversity"]
    assert a["FID"] < c["FID"] and b["FID"] < c["FID"]
    print("\n" + format_report(found))
    rows = {(r["prompt_set"], r["measure"]): r for r in found.agreement}
    for prompt_set in ("coco", "prompts"):
        ties = sum(
            1 for n in range(prompts) if n % 5 == 4 and ("coco" if n % 2 == 0 else "prompts") == prompt_set
        )
        assert rows[(prompt_set, "RBP")]["human_ties"] == ties > 0
        for novelty in ("RBP_delta", "ERR_delta_u", "ERR_delta"):
            assert rows[(prompt_set, novelty)]["agreement"] > rows[(prompt_set, "RBP")]["agreement"]
        assert rows[(prompt_set, "diversity")]["agreement"] < 0.5
