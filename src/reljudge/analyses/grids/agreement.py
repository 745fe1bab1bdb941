"""Meta-evaluation: how often a grid measure prefers the system people preferred (thesis §5.2). Pure.

A human preference compares two systems' grids for a prompt on five points: ``pref`` = −2 (X much
better), −1 (X somewhat better), 0 (the same), +1 (Y somewhat better), +2 (Y much better), the
consensus of the annotators as given. Its sign is the preferred system.

A measure prefers X when its value for X's grid is higher (lower for a measure where lower is
better: FID), Y when it is lower, neither when the two differ by at most `TIE_TOLERANCE`.

**Agreement** of a measure over a prompt set = the share, among the preferences that are not
human ties, of those where the measure prefers the same system. Ties are stated, never hidden:
human ties (pref 0) are left out of the share and counted (``human_ties``); a measure's tie on a
preference that is not a human tie counts as not agreeing (``measure_ties`` says how many).

**Interval**: a bootstrap over the prompts of the set (a replicate draws prompts with
replacement; a prompt carries all its preferences, which share its grids), through
`reljudge.metrics.bootstrap.bootstrap_interval`: the ``t`` interval of the share
(agreements / preferences of the drawn prompts), clipped to [0, 1]. `SIMULATED_COVERAGE` is the
coverage ``bench/bench_grids_agreement.py`` measured for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

#: two values closer than this are a tie of the measure
TIE_TOLERANCE = 1e-9
#: bootstrap replicates of the agreement interval
DEFAULT_BOOT = 1000
DEFAULT_LEVEL = 0.95
INTERVAL = "t"
#: the coverage of the nominal 95 % agreement interval measured by bench/bench_grids_agreement.py
SIMULATED_COVERAGE = (
    "nominal 95 %: simulated coverage 92.7-96.3 % with 50-500 prompts of 1-3 preferences and an agreement "
    "of 0.6 or 0.9; with 20 prompts 95.3 % at 0.6 but 89.5 % at 0.9 (400 collections each, "
    "bench/bench_grids_agreement.py)"
)


@dataclass(frozen=True)
class GridPreference:
    """One human preference between the grids of two systems for a prompt."""

    prompt: str
    system_x: str
    system_y: str
    pref: int
    prompt_set: str = "all"


def preferred(x: float, y: float, lower_is_better: bool = False) -> int:
    """−1 when the measure prefers X, +1 when it prefers Y, 0 for a tie (or a NaN value)."""
    if not (np.isfinite(x) and np.isfinite(y)) or abs(x - y) <= TIE_TOLERANCE:
        return 0
    better_x = x < y if lower_is_better else x > y
    return -1 if better_x else 1


def _share(agree: np.ndarray, counted: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Agreements / preferences of each measure (rows) for prompt weights (replicates × prompts)."""
    num = agree @ weights.T  # measures × replicates
    den = counted @ weights.T
    return np.divide(num, den, out=np.full(num.shape, np.nan), where=den > 0)


def agreement_table(
    values: Mapping[str, Mapping[tuple[str, str], float]],
    preferences: Sequence[GridPreference],
    *,
    lower_is_better: frozenset[str] = frozenset(),
    n_boot: int = DEFAULT_BOOT,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """One row per (prompt set, measure): the agreement of the measure's preferences with the
    human ones. ``values[measure][(prompt, system)]`` is the measure's value of a grid; a
    preference whose two grids the measure has no value for is left out (counted in
    ``no_value``)."""
    from reljudge.metrics.bootstrap import bootstrap_interval

    measures = list(values)
    rows: list[dict[str, Any]] = []
    for prompt_set in sorted({p.prompt_set for p in preferences}):
        prefs = sorted(
            (p for p in preferences if p.prompt_set == prompt_set),
            key=lambda p: (p.prompt, p.system_x, p.system_y),
        )
        prompts = sorted({p.prompt for p in prefs})
        index = {prompt: i for i, prompt in enumerate(prompts)}
        human_ties = sum(1 for p in prefs if p.pref == 0)
        agree = np.zeros((len(measures), len(prompts)))
        counted = np.zeros((len(measures), len(prompts)))
        ties = np.zeros(len(measures), dtype=int)
        missing = np.zeros(len(measures), dtype=int)
        for m, measure in enumerate(measures):
            table = values[measure]
            for p in prefs:
                if p.pref == 0:
                    continue
                x, y = table.get((p.prompt, p.system_x)), table.get((p.prompt, p.system_y))
                if x is None or y is None:
                    missing[m] += 1
                    continue
                said = preferred(x, y, measure in lower_is_better)
                counted[m, index[p.prompt]] += 1
                ties[m] += said == 0
                agree[m, index[p.prompt]] += said == int(np.sign(p.pref))

        share = partial(_share, agree, counted)

        totals = counted.sum(axis=1)
        estimate = share(np.ones((1, len(prompts))))[:, 0]
        if len(prompts) >= 2 and totals.any():
            low, high, _ = bootstrap_interval(
                share, len(prompts), n_boot=n_boot, level=level, seed=seed, method=INTERVAL
            )
            low, high = np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)
        else:
            low = high = np.full(len(measures), np.nan)
        for m, measure in enumerate(measures):
            rows.append(
                {
                    "prompt_set": prompt_set,
                    "measure": measure,
                    "prompts": len(prompts),
                    "preferences": int(totals[m]),
                    "agree": int(agree[m].sum()),
                    "agreement": float(estimate[m]),
                    "ci_low": float(low[m]),
                    "ci_high": float(high[m]),
                    "human_ties": human_ties,
                    "measure_ties": int(ties[m]),
                    "no_value": int(missing[m]),
                }
            )
    return rows


__all__ = [
    "DEFAULT_BOOT",
    "SIMULATED_COVERAGE",
    "TIE_TOLERANCE",
    "GridPreference",
    "agreement_table",
    "preferred",
]
