"""Krippendorff's α reads small integer labels without sorting (`_value_codes`): the same α as
through `np.unique`, for every level and with missing values."""

from __future__ import annotations

import numpy as np
import pytest

from reljudge.metrics.agreement import _value_codes, krippendorff_alpha


def test_value_codes_equal_np_unique():
    rng = np.random.default_rng(0)
    for flat in (
        rng.integers(-3, 9, 500).astype(float),
        np.array([2.0]),
        np.array([]),
        np.array([0.5, 0.25]),
    ):
        values, codes = _value_codes(flat)
        want_values, want_codes = np.unique(flat, return_inverse=True)
        assert np.array_equal(values, want_values) and np.array_equal(codes, want_codes.reshape(-1))


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_of_integers_equals_alpha_of_shifted_non_integers(level):
    rng = np.random.default_rng(1)
    for _ in range(20):
        data = rng.integers(0, 4, size=(int(rng.integers(2, 6)), 150)).astype(float)
        data[rng.random(data.shape) < 0.2] = np.nan
        a, b = krippendorff_alpha(data, level=level), krippendorff_alpha(data + 0.5, level=level)
        assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b, abs=1e-12)
