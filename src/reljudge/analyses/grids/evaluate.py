"""Every grid of every system measured, the systems compared, the measures meta-evaluated
against human preferences: the computation behind ``judge grids`` and its Python API. Pure.

The measures of a grid (thesis Table 5.5), each an expectation over trajectories
(`reljudge.analyses.grids.trajectories`) of the measures of `reljudge.analyses.grids.measures`:

| measure | user model | gain | Pr(π) |
|---|---|---|---|
| ``RBP`` | position (Eq. 5.1) | f(x) | salience |
| ``RBP_delta_u`` | position | f(x)·δ(i, π) (Eq. 5.4) | uniform |
| ``RBP_delta`` | position | f(x)·δ(i, π) | salience |
| ``ERR`` | cascade (Eq. 5.2) | f(x) | salience |
| ``ERR_delta_u`` | cascade | f(x)·δ(i, π) | uniform |
| ``ERR_delta`` | cascade | f(x)·δ(i, π) | salience |

"salience" is Plackett–Luce over the images' salience when salience is given; without it the
non-u measures follow the row-major trajectory (1, 2, ..., k: a ranked list read in order), and
the report says which (``settings["trajectory"]``). Beside them: ``relevance`` (the mean f of the
grid, no user model), ``diversity`` (1 − mean pairwise cosine, higher = more diverse) and
``FID`` (per system and prompt set, lower is better) from `reljudge.analyses.grids.baselines`.

`evaluate_grids` takes in-memory data (grids as image ids, vectors by image id, target vectors
by prompt, salience by image id, preferences) and returns a `GridReport`: per-prompt rows
(one per grid), per-system rows (means over prompts, FID over all prompts) and the agreement
table (`reljudge.analyses.grids.agreement`). Results do not depend on the order of the input:
grids are taken in sorted (prompt, system) order and each prompt's random stream depends only
on the seed and the prompt id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from reljudge.analyses.grids.agreement import (
    DEFAULT_BOOT,
    DEFAULT_LEVEL,
    INTERVAL,
    SIMULATED_COVERAGE,
    GridPreference,
    agreement_table,
)
from reljudge.analyses.grids.baselines import diversity, fid
from reljudge.analyses.grids.measures import (
    DEFAULT_GAMMA,
    TARGET_AGGREGATES,
    StopFunction,
    relevance,
    similarity,
    trajectory_values,
)
from reljudge.analyses.grids.trajectories import (
    DEFAULT_SAMPLES,
    MAX_EXACT_K,
    exact_orders,
    gumbel_noise,
    order_probabilities,
    sample_orders,
)
from reljudge.errors import InputError

#: the six measures of Table 5.5, in its order
VARIANTS = ("RBP", "RBP_delta_u", "RBP_delta", "ERR", "ERR_delta_u", "ERR_delta")
#: every measure of a grid, in the order of the tables
MEASURES = ("relevance", *VARIANTS, "diversity")
#: measures where lower is better
LOWER_IS_BETTER = frozenset({"FID"})
TRAJECTORIES = ("salience", "row-major")
#: the largest grid measured (δ and Diversity compare every pair of its images: k × k similarities)
MAX_GRID = 1024
#: image id -> vector, or (ids, matrix) with one row per id (a memory-mapped matrix is read row by row)
ImageVectors = Mapping[str, np.ndarray] | tuple[Sequence[str], np.ndarray]


@dataclass(frozen=True)
class GridSettings:
    """How grids are measured. ``trajectory``: the law of the non-u measures, ``"salience"``
    (Plackett–Luce; needs salience) or ``"row-major"``; None: salience when it is given, else
    row-major. ``exact``: the exact expectation over all k! orders (k <= 8) instead of
    ``samples`` sampled trajectories per prompt."""

    gamma: float = DEFAULT_GAMMA
    samples: int = DEFAULT_SAMPLES
    seed: int = 0
    exact: bool = False
    targets: str = "max"
    trajectory: str | None = None
    n_boot: int = DEFAULT_BOOT
    level: float = DEFAULT_LEVEL

    def check(self) -> None:
        if not 0.0 < self.gamma <= 1.0:
            raise InputError(f"gamma must be in (0, 1], got {self.gamma}")
        if self.samples < 1:
            raise InputError(f"samples must be at least 1, got {self.samples}")
        if self.targets not in TARGET_AGGREGATES:
            raise InputError(f"targets must be max or mean, got {self.targets!r}")
        if self.trajectory is not None and self.trajectory not in TRAJECTORIES:
            raise InputError(f"trajectory must be salience or row-major, got {self.trajectory!r}")
        if self.n_boot < 1 or not 0.0 < self.level < 1.0:
            raise InputError("the bootstrap needs at least one replicate and a level in (0, 1)")


@dataclass
class GridReport:
    """What `evaluate_grids` found (see the module docstring)."""

    settings: dict[str, Any]
    per_prompt: list[dict[str, Any]]
    per_system: list[dict[str, Any]]
    agreement: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _vector_lookup(vectors: ImageVectors) -> tuple[dict[str, int], Any]:
    if isinstance(vectors, tuple):
        ids, matrix = vectors
        return {image: i for i, image in enumerate(ids)}, matrix
    ids = sorted(vectors)
    return {image: i for i, image in enumerate(ids)}, [vectors[i] for i in ids]


def grid_values(
    images: np.ndarray,
    targets: np.ndarray,
    *,
    salience: np.ndarray | None = None,
    noise: np.ndarray | None = None,
    settings: GridSettings = GridSettings(),
    trajectory: str = "row-major",
    stop: StopFunction | None = None,
) -> dict[str, float]:
    """The measures of one grid (its k image vectors in position order, its prompt's target
    vectors): `MEASURES`. ``noise``: the prompt's Gumbel draws (samples × k; drawn from
    ``settings.seed`` when not given); ``trajectory``: the law of the non-u measures."""
    rel = relevance(images, targets, settings.targets)
    sim = similarity(images)
    k = rel.size
    out = {"relevance": float(rel.mean())}
    laws = {"uniform": ("RBP_delta_u", "ERR_delta_u"), trajectory: ("RBP", "RBP_delta", "ERR", "ERR_delta")}
    every_order: dict[str, np.ndarray] | None = (
        None  # the exact values, shared by the laws over all k! orders
    )
    for law, names in laws.items():
        if settings.exact and law != "row-major":
            orders = exact_orders(k)
            weights = order_probabilities(orders, law, salience)
            if every_order is None:
                every_order = trajectory_values(rel, sim, orders, settings.gamma, stop)
            values = every_order
        else:
            if settings.exact or law == "row-major":
                orders = np.arange(k)[None, :]
            else:
                draws = noise if noise is not None else gumbel_noise(settings.seed, "", settings.samples, k)
                orders = sample_orders(draws, law, salience)
            weights = np.full(orders.shape[0], 1.0 / orders.shape[0])
            values = trajectory_values(rel, sim, orders, settings.gamma, stop)
        for name in names:
            out[name] = float(weights @ values[name.removesuffix("_u")])
    out["diversity"] = diversity(images)
    return {name: out[name] for name in MEASURES}


def evaluate_grids(
    grids: Mapping[tuple[str, str], Sequence[str]],
    vectors: ImageVectors,
    targets: Mapping[str, np.ndarray],
    *,
    salience: Mapping[str, float] | None = None,
    preferences: Sequence[GridPreference] = (),
    settings: GridSettings = GridSettings(),
    stop: StopFunction | None = None,
) -> GridReport:
    """Measure every grid ``grids[(prompt, system)]`` (image ids in position order), average per
    system, and meta-evaluate against ``preferences`` (module docstring). A grid image without a
    vector, a prompt without a target, an image without salience (when salience is given), a
    preference naming a grid that is not there and grids of different sizes are `InputError`."""
    settings.check()
    if not grids:
        raise InputError("no grids to measure")
    sizes = {len(images) for images in grids.values()}
    if len(sizes) != 1:
        raise InputError(f"every grid must have the same number of images, found sizes {sorted(sizes)}")
    k = sizes.pop()
    if not 1 <= k <= MAX_GRID:
        raise InputError(
            f"grids of {k} images: the measures compare every pair of a grid, at most {MAX_GRID} images"
        )
    if settings.exact and k > MAX_EXACT_K:
        raise InputError(
            f"the exact expectation enumerates k! orders, for k <= {MAX_EXACT_K} (the grids have {k})"
        )
    trajectory = settings.trajectory or ("salience" if salience is not None else "row-major")
    if trajectory == "salience" and salience is None:
        raise InputError("trajectory 'salience' needs salience values (image<TAB>value)")
    index, matrix = _vector_lookup(vectors)

    def vectors_of(image_ids: Sequence[str], what: str) -> np.ndarray:
        missing = [i for i in image_ids if i not in index]
        if missing:
            raise InputError(f"{what}: no vector for image {missing[0]!r} ({len(missing)} missing)")
        return np.asarray([np.asarray(matrix[index[i]], dtype=np.float64) for i in image_ids])

    target_vectors = {prompt: np.atleast_2d(np.asarray(t, dtype=np.float64)) for prompt, t in targets.items()}
    per_prompt: list[dict[str, Any]] = []
    image_rows: dict[tuple[str, str], np.ndarray] = {}
    for prompt, system in sorted(grids):
        ids = list(grids[(prompt, system)])
        where = f"the grid of system {system!r} for prompt {prompt!r}"
        images = vectors_of(ids, where)
        if prompt not in target_vectors or target_vectors[prompt].size == 0:
            raise InputError(f"prompt {prompt!r} has no target")
        if target_vectors[prompt].shape[1] != images.shape[1]:
            raise InputError(
                f"prompt {prompt!r}: target vectors have {target_vectors[prompt].shape[1]} dimensions, "
                f"image vectors {images.shape[1]}"
            )
        sal = None
        if trajectory == "salience":
            assert salience is not None
            lacking = [i for i in ids if i not in salience]
            if lacking:
                raise InputError(f"{where}: no salience for image {lacking[0]!r} ({len(lacking)} missing)")
            sal = np.array([salience[i] for i in ids], dtype=np.float64)
        noise = None if settings.exact else gumbel_noise(settings.seed, prompt, settings.samples, k)
        row = grid_values(
            images,
            target_vectors[prompt],
            salience=sal,
            noise=noise,
            settings=settings,
            trajectory=trajectory,
            stop=stop,
        )
        image_rows[(prompt, system)] = images
        per_prompt.append({"prompt": prompt, "system": system, **row})
    systems = sorted({s for _, s in grids})
    prompts = sorted({p for p, _ in grids})

    def fid_over(prompt_subset: Sequence[str]) -> dict[str, float]:
        chosen = set(prompt_subset)
        tv = [target_vectors[p] for p in sorted(chosen) if p in target_vectors]
        if not tv:
            return {s: float("nan") for s in systems}
        t = np.vstack(tv)
        out = {}
        for s in systems:
            rows = [image_rows[(p, s)] for p in sorted(chosen) if (p, s) in image_rows]
            out[s] = fid(np.vstack(rows), t) if rows else float("nan")
        return out

    fid_all = fid_over(prompts)
    per_system = []
    for s in systems:
        rows = [r for r in per_prompt if r["system"] == s]
        per_system.append(
            {
                "system": s,
                "prompts": len(rows),
                **{m: float(np.mean([r[m] for r in rows])) for m in MEASURES},
                "FID": fid_all[s],
            }
        )
    table: list[dict[str, Any]] = []
    notes: list[str] = []
    if preferences:
        for p in preferences:
            for s in (p.system_x, p.system_y):
                if (p.prompt, s) not in grids:
                    raise InputError(
                        f"a preference names the grid of system {s!r} for prompt {p.prompt!r}, which is not given"
                    )
        for prompt_set in sorted({p.prompt_set for p in preferences}):
            prefs = [p for p in preferences if p.prompt_set == prompt_set]
            set_fid = fid_over(sorted({p.prompt for p in prefs}))
            values: dict[str, dict[tuple[str, str], float]] = {
                m: {(r["prompt"], r["system"]): r[m] for r in per_prompt} for m in MEASURES
            }
            values["FID"] = {(r["prompt"], r["system"]): set_fid[r["system"]] for r in per_prompt}
            table += agreement_table(
                values,
                prefs,
                lower_is_better=LOWER_IS_BETTER,
                n_boot=settings.n_boot,
                level=settings.level,
                seed=settings.seed,
            )
        notes.append(
            "agreement: share of the non-tie human preferences where the measure prefers the same system; "
            "human ties left out (human_ties), a measure's tie counts as disagreement (measure_ties); "
            f"interval: bootstrap over prompts, {INTERVAL} interval, "
            f"{SIMULATED_COVERAGE}"
        )
    law_text = {
        "salience": "Plackett-Luce over normalised salience (Gumbel trick)",
        "row-major": "row-major order (1..k), no salience given",
    }[trajectory]
    described = {
        **asdict(settings),
        "k": k,
        "trajectory": trajectory,
        "trajectory_text": law_text,
        "expectation": "exact over all k! orders"
        if settings.exact
        else f"{settings.samples} sampled trajectories per prompt (seed {settings.seed})",
        "relevance": f"cosine to the target clipped to [0, 1], the {settings.targets} over a prompt's targets (Eq. 5.3)",
        "diversity": "1 - mean pairwise cosine within a grid: higher = more diverse",
        "FID": "Frechet distance between a system's images and the targets, lower is better",
        "stop": "g = f (the discounted gain in the delta variants)" if stop is None else "a given g",
        "systems": len(systems),
        "prompts": len(prompts),
    }
    return GridReport(
        settings=described, per_prompt=per_prompt, per_system=per_system, agreement=table, notes=notes
    )


__all__ = [
    "LOWER_IS_BETTER",
    "MEASURES",
    "VARIANTS",
    "GridReport",
    "GridSettings",
    "ImageVectors",
    "evaluate_grids",
    "grid_values",
]
