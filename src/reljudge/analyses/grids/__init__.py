"""``judge grids``: offline set-based evaluation of text-to-image grids (thesis §5.2).

A system answers a prompt with a grid of k = w × h images (a ranked list is a 1 × k grid); a
trajectory π is the order in which a user inspects them. With f the relevance of an image and
γ = 0.9 the patience of the user:

- relevance (Eq. 5.3): f(x) = cos(φ(x̂), φ(x)) clipped to [0, 1], x̂ a target image of the prompt
  (several targets: the max, or the mean);
- RBP (Eq. 5.1): RBP(π) = Σ_i f(π_i) γ^(i−1), no (1 − γ) factor;
- ERR (Eq. 5.2): ERR(π) = Σ_i f(π_i) γ^(i−1) Π_{j<i} (1 − g(π_j)), g = f by default;
- novelty discount (Eq. 5.4): δ(i, π) = 1 − max_{j<i} cos(φ(π_i), φ(π_j)) multiplies f(π_i);
- the expected measure over trajectories: uniform (superscript u) or Plackett–Luce over the
  images' normalised salience (sampled with the Gumbel trick, 100 trajectories per prompt), or
  exactly over all k! orders for k <= 8; the six measures of Table 5.5 (RBP, RBP_δ^u, RBP_δ, ERR,
  ERR_δ^u, ERR_δ); baselines Diversity (reported as 1 − mean pairwise cosine: higher = more
  diverse) and FID;
- meta-evaluation: the share of human grid preferences (five points, X much better .. Y much
  better) whose preferred system each measure prefers, per prompt set, with a bootstrap interval.

Pure computation: `measures` (f, δ, RBP, ERR along trajectories), `trajectories` (uniform,
Plackett–Luce and row-major laws, sampling and exact probabilities), `baselines` (Diversity,
FID), `agreement` (the meta-evaluation), `evaluate` (all of it over in-memory grids: the Python
API). Roles: `files` (inputs from files, tables), `pipeline` (from paths), `plots`, `command`
(``judge grids``). The file formats are `reljudge.io.grids`.

From Python, on in-memory arrays::

    from reljudge.analyses.grids import GridSettings, evaluate_grids
    report = evaluate_grids({("q1", "A"): ["a1", "a2"]}, {"a1": v1, "a2": v2}, {"q1": target})
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reljudge.analyses.grids.agreement import GridPreference
    from reljudge.analyses.grids.evaluate import (
        MEASURES,
        VARIANTS,
        GridReport,
        GridSettings,
        evaluate_grids,
        grid_values,
    )

#: the Python API, imported when first used: `judge` registers `judge grids` through this package,
#: and numpy (which the measures need) should not slow every other command's start
_API = {
    "GridPreference": "agreement",
    "MEASURES": "evaluate",
    "VARIANTS": "evaluate",
    "GridReport": "evaluate",
    "GridSettings": "evaluate",
    "evaluate_grids": "evaluate",
    "grid_values": "evaluate",
}


def __getattr__(name: str) -> Any:
    if name in _API:
        import importlib

        return getattr(importlib.import_module(f"reljudge.analyses.grids.{_API[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "MEASURES",
    "VARIANTS",
    "GridPreference",
    "GridReport",
    "GridSettings",
    "evaluate_grids",
    "grid_values",
]
