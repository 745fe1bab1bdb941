"""Win ratios between runs (thesis §3.1.3): how often run X's top passage is preferred to Y's.

Over the queries where the top passages of X and Y differ and the pair has an outcome:
W = X's passage preferred, L = Y's, T = ties; ratio = W / (W + L). Significance: exact two-sided
binomial test against 0.5, Bonferroni-corrected over the C(m, 2) run pairs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from reljudge.analyses.shallow.btp import binomial_two_sided
from reljudge.analyses.shallow.preference_outcomes import TIE, Preferences


@dataclass
class WinRatios:
    runs: list[str]
    wins: np.ndarray  # wins[i, j]: queries where run i's passage beat run j's
    ties: np.ndarray
    p_values: np.ndarray  # two-sided exact binomial, uncorrected (NaN on the diagonal)
    alpha: float = 0.05

    @property
    def comparisons(self) -> int:
        m = len(self.runs)
        return m * (m - 1) // 2

    @property
    def threshold(self) -> float:
        """The Bonferroni-corrected significance level."""
        return self.alpha / max(self.comparisons, 1)

    def ratio(self, i: int, j: int) -> float:
        n = self.wins[i, j] + self.wins[j, i]
        return float(self.wins[i, j] / n) if n else float("nan")

    def significant(self, i: int, j: int) -> bool:
        """Run i beats run j: ratio above 0.5 and p below the corrected level."""
        return bool(self.ratio(i, j) > 0.5 and self.p_values[i, j] < self.threshold)

    def beaten(self, i: int) -> tuple[int, int]:
        """(runs that i beats by ratio > 0.5, runs it beats significantly)."""
        others = [j for j in range(len(self.runs)) if j != i]
        return (
            sum(1 for j in others if self.ratio(i, j) > 0.5),
            sum(1 for j in others if self.significant(i, j)),
        )

    def matrix_rows(self) -> list[dict[str, object]]:
        """The CSV rows: column beats row (cell = the column run's win ratio against the row run),
        then a row with how many rows each column beats (ratio > 0.5) and beats significantly."""
        rows: list[dict[str, object]] = []
        for j, row_run in enumerate(self.runs):
            row: dict[str, object] = {"row": row_run}
            for i, col_run in enumerate(self.runs):
                r = self.ratio(i, j) if i != j else float("nan")
                row[col_run] = "" if r != r else round(r, 4)
            rows.append(row)
        beats: dict[str, object] = {"row": "rows beaten (ratio > 0.5 / significant)"}
        for i, col_run in enumerate(self.runs):
            b, s = self.beaten(i)
            beats[col_run] = f"{b}/{s}"
        rows.append(beats)
        return rows


def win_ratios(
    top: Mapping[str, Mapping[str, str]], prefs: Preferences, queries: Iterable[str], *, alpha: float = 0.05
) -> WinRatios:
    """Win ratios of every run pair of ``top`` (``{run: {qid: top docid}}``, the pseudo-run of q*
    included by the caller) over ``queries``."""
    runs = list(top)
    m = len(runs)
    wins = np.zeros((m, m), int)
    ties = np.zeros((m, m), int)
    queries = list(queries)
    for i in range(m):
        for j in range(i + 1, m):
            for q in queries:
                a, b = top[runs[i]].get(q), top[runs[j]].get(q)
                if a is None or b is None or a == b:
                    continue
                w = prefs.outcome(q, a, b)
                if w is None:
                    continue
                if w == TIE:
                    ties[i, j] += 1
                    ties[j, i] += 1
                elif w == a:
                    wins[i, j] += 1
                else:
                    wins[j, i] += 1
    p = np.full((m, m), np.nan)
    for i in range(m):
        for j in range(m):
            if i != j:
                p[i, j] = binomial_two_sided(int(wins[i, j]), int(wins[i, j] + wins[j, i]))
    return WinRatios(runs=runs, wins=wins, ties=ties, p_values=p, alpha=alpha)
