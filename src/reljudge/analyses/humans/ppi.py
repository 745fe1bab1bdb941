"""Estimates that combine many LLM labels with a probability sample of human labels.

**Setting.** A population of ``N`` judged items (the run's (qid, docid) pairs with an LLM label
``ŷ_i``); the target is a quantity ``θ`` computed from the *human* labels ``y_i`` of all of them
(the "full-human value"): a system's mean P@k or nDCG@k over the topics, or the share of items
with ``y ≥ r``. Humans label a sample ``S`` drawn by a known design: strata ``h`` (by default
the LLM label), ``n_h`` of the ``N_h`` items of stratum ``h`` drawn by simple random sampling
without replacement, independently across strata, so item ``i`` has inclusion probability
``π_i = n_h / N_h``.

**Linear targets** (P@k with relevance level ``r``; the relevant share). ``θ = Σ_i a_i x(y_i)``
with known weights ``a_i`` (for P@k of system ``s``: ``1/(k·T_s)`` when ``i`` is in the system's
top ``k`` for its topic, ``T_s`` the topics the system ranks and the labels cover, unjudged
documents gaining 0 as in trec_eval; ``x(y) = 1[y ≥ r]``). The estimator is the difference
(prediction-powered) estimator with the Horvitz–Thompson correction, with a power-tuning factor
``λ`` (PPI++, Angelopoulos et al. 2023)::

    θ̂_λ = λ · Σ_{i ≤ N} a_i x(ŷ_i)  +  Σ_{i ∈ S} a_i (x(y_i) − λ x(ŷ_i)) / π_i

For any fixed ``λ`` it is exactly unbiased under the design, whatever the LLM's errors:
``E[Σ_S z_i/π_i] = Σ_i z_i``. ``λ = 1`` is plain PPI (the difference estimator of survey
sampling) and the default; ``λ = 0`` is the human-only Horvitz–Thompson estimator (the
"human-only" interval of the same sample). PPI++ (``tuning="ppi++"``) takes, per target,
``λ̂ = Σ_h c_h Cov_h(u, v) / Σ_h c_h Var_h(v)`` clipped to [0, 1], with ``u = a·x(y)``,
``v = a·x(ŷ)`` over the sampled items of each stratum and ``c_h = N_h²(1 − n_h/N_h)/n_h`` -- the
λ minimising the estimated variance; estimating λ on the same sample makes the estimator
unbiased only asymptotically. (In the simulation λ̂ made P@10's intervals cover less -- 64 %
instead of 71 % at 100 labels -- so it is not the default. With strata by the LLM label and the
relevant share, ``x(ŷ)`` is constant within each stratum and λ cancels.)

Variance (stratified SRSWOR, finite population correction)::

    V̂ = Σ_h N_h² (1 − n_h/N_h) S_h² / n_h

where ``S_h²`` is the variance of ``z_i = a_i d_i``, ``d_i = x(y_i) − λ x(ŷ_i)``, over stratum
``h``. The design-based estimate of ``S_h²`` (``variance="design"``; always for the human-only
interval) is the sample variance of ``z`` over the sampled items of ``h``. For one system's P@k
that is a handful of items (its top k holds ~5 % of the pool), often all with ``d = 0``, and
the interval then has no width: at 100 labels it covered 71 % in the simulation. The default
(``variance="pooled"``) is model-assisted: ``S_h² = E_h[a²]·E_h[d²] − (E_h[a]·E_h[d])²`` (times
``n_h/(n_h−1)``), the moments of ``a`` exact over all ``N_h`` items and those of ``d`` from
*all* sampled items of the stratum, which assumes that within a stratum the LLM's error ``d``
does not depend on the weight ``a`` (on whether the system ranks the item in its top k). For a
target with equal weights (the relevant share) the two coincide. The interval is
``θ̂ ± z_{1−α/2} √V̂``, cut to the target's range ([0, 1] for P@k, a share and nDCG@k, which
never lowers the coverage) (normal approximation; a stratum needs ``n_h ≥ 2`` unless it is taken
whole). A stratum with items but no sampled item makes the target inestimable without a model
assumption: that is an error, never a silent zero.

**nDCG@k** (trec_eval's ``ndcg_cut``: gains = the grades, discount ``1/log2(rank+1)``, ideal DCG
from the topic's judged documents) is a ratio. Per system and topic ``D_{s,t} = Σ_i d_{s,i} y_i``
(the DCG, linear) and the ideal DCG ``I_t = IDCG(c_t)`` of the topic's grade counts
``c_{t,g} = Σ_{i∈t} 1[y_i = g]`` (linear). Both totals are estimated by the difference estimator
with λ = 1 (``D̂ = D(ŷ) + Σ_S d (y − ŷ)/π``, likewise ``ĉ``; the human-only estimate uses λ = 0)
and ``θ̂_s = (1/T_s) Σ_t D̂_{s,t} / IDCG(ĉ_t)``, ``IDCG`` extended to fractional counts (the
ideal list filled grade by grade, a fractional document taking that share of its position's
discount; negative counts count as 0). It is consistent, not exactly unbiased (a ratio of
unbiased totals). Its interval is the union of two: the percentile interval of a stratified
bootstrap (each stratum's sample redrawn with replacement, ``replicates`` times, seeded), and
``θ̂ ± z √V̂`` with a pooled delta-method variance: the influence of item ``i`` on ``θ_s``,
``ψ(i, y) = (d_{s,i} y / I_t − D_{s,t} e_t(y) / I_t²) / T_s`` (``e_t(y) = ∂IDCG/∂c_{t,y}``),
evaluated at the LLM-only totals, and ``S_h²`` the variance of ``ψ(i, y) − ψ(i, ŷ_i)`` over
the stratum's items ``i`` and the people's grades ``y`` drawn from the stratum's sampled grade
distribution (independent of ``i``, as for pooled linear variances). In the simulation the
bootstrap alone covered too little with 100 labels (the few sampled items in a system's top k)
and the pooled one alone a little too little everywhere (about 91 %); their union covers at
least the nominal rate there, and is conservative. The human-only interval is the bootstrap's.
The delta method evaluated at the noisy estimated totals overstated the spread several-fold
and is not used; λ̂ of PPI++ is not used for nDCG (it raised the error).
How close these intervals come to their nominal coverage at a given budget is measured by
simulation (``bench/bench_humans.py``), not assumed.

Assumptions: for pooled variances, the one stated above; the sample is the design's (the
strata and inclusion probabilities recorded by ``judge select``, items drawn at random within
strata); human labels are the truth the target is defined by (an assessor's own error is not modelled); each item's human label does not depend
on whether it was sampled. Nothing is assumed about the LLM labels. Labels are whole grades
(``--float`` LLM labels are rounded half up for the grade counts of nDCG).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "SIMULATED_COVERAGE",
    "Design",
    "Estimate",
    "Population",
    "estimate_linear",
    "estimate_ndcg",
    "estimate_share",
    "idcg",
    "linear_weights",
    "ndcg_weights",
    "normal_quantile",
    "true_ndcg",
]

Runs = Mapping[str, Mapping[str, Mapping[str, float]]]

#: coverage of the 95 % intervals measured by ``bench/bench_humans.py`` (GPT-4o UMBRELA labels
#: corrected by NIST labels, a stratified sample of 100 / 300 / 1000; 200 draws per budget): the
#: relevant share (lowest of DL19/DL20/DL21), and the 63 DL21 runs' P@10 and nDCG@10 (all
#: runs × draws). ``judge estimate`` prints them beside its intervals; the bench checks them.
SIMULATED_COVERAGE: dict[str, dict[int, float]] = {
    "relevant share": {100: 0.935, 300: 0.93, 1000: 0.92},
    "P@10": {100: 0.946, 300: 0.963, 1000: 0.963},
    "nDCG@10": {100: 0.977, 300: 0.970, 1000: 0.965},
}


def normal_quantile(level: float) -> float:
    """The two-sided normal quantile of a coverage ``level`` (0.95 -> 1.96)."""
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + level / 2)


@dataclass
class Population:
    """The judged items in a fixed order (sorted by key), their LLM labels and topics."""

    keys: list[tuple[str, str]]
    llm: np.ndarray  # float, one per item

    def __post_init__(self) -> None:
        self.index = {k: i for i, k in enumerate(self.keys)}
        self.topics = sorted({q for q, _ in self.keys})
        topic_index = {q: j for j, q in enumerate(self.topics)}
        self.topic_of = np.array([topic_index[q] for q, _ in self.keys], dtype=np.int64)

    @property
    def size(self) -> int:
        return len(self.keys)


@dataclass
class Design:
    """Which items humans labelled, with their labels, and the strata they were drawn from.

    ``stratum``: the stratum index of every item; ``sizes``/``sampled``: ``N_h`` and ``n_h``;
    ``human``: the human label of every item (NaN where not sampled); ``mask``: sampled."""

    stratum: np.ndarray
    human: np.ndarray
    names: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.mask = ~np.isnan(self.human)
        k = int(self.stratum.max()) + 1 if self.stratum.size else 0
        self.sizes = np.bincount(self.stratum, minlength=k).astype(float)
        self.sampled = np.bincount(self.stratum[self.mask], minlength=k).astype(float)
        if not self.names:
            self.names = [str(h) for h in range(k)]

    def check(self) -> None:
        """Raise ValueError when a stratum has items but fewer than 2 sampled (unless taken whole)."""
        for h, (big, small) in enumerate(zip(self.sizes, self.sampled, strict=True)):
            if big > 0 and small < min(2, big):
                raise ValueError(
                    f"stratum {self.names[h]!r} has {int(big)} items and {int(small)} labelled by people: "
                    "an unbiased estimate needs at least 2 of each stratum (or all of it)"
                )

    @property
    def inclusion(self) -> np.ndarray:
        """``π_i`` of every item."""
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(self.sizes > 0, self.sampled / np.maximum(self.sizes, 1), 0.0)
        return share[self.stratum]


@dataclass
class Estimate:
    """One target's estimate: point, standard error, interval, the λ used, and the human-only
    (λ = 0) and LLM-only values beside it."""

    value: float
    se: float
    low: float
    high: float
    lam: float
    human_only: float
    human_only_se: float
    human_only_low: float
    human_only_high: float
    llm_only: float

    def clipped(self, low: float, high: float) -> Estimate:
        """The intervals cut to the range the target cannot leave (never lowers coverage)."""

        def cut(v: float) -> float:
            return min(max(v, low), high)

        return Estimate(
            self.value, self.se, cut(self.low), cut(self.high), self.lam,
            self.human_only, self.human_only_se, cut(self.human_only_low), cut(self.human_only_high),
            self.llm_only,
        )  # fmt: skip

    @property
    def width(self) -> float:
        return self.high - self.low

    @property
    def human_only_width(self) -> float:
        return self.human_only_high - self.human_only_low

    def as_dict(self) -> dict[str, float]:
        return {
            "estimate": self.value,
            "se": self.se,
            "low": self.low,
            "high": self.high,
            "lambda": self.lam,
            "llm_only": self.llm_only,
            "human_only": self.human_only,
            "human_only_se": self.human_only_se,
            "human_only_low": self.human_only_low,
            "human_only_high": self.human_only_high,
        }


# --- the design's variance --------------------------------------------------------------------


def _stratum_moments(
    design: Design, u: np.ndarray, v: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per target (rows of u, v: targets × sampled items), ``Σ_h c_h Var_h(u)``, ``Σ_h c_h Cov_h(u, v)``
    and ``Σ_h c_h Var_h(v)`` with ``c_h = N_h²(1 − f_h)/n_h``."""
    strata = design.stratum[design.mask]
    targets = u.shape[0]
    vuu, vuv, vvv = np.zeros(targets), np.zeros(targets), np.zeros(targets)
    for h in range(design.sizes.size):
        big, small = design.sizes[h], design.sampled[h]
        if small < 2 or small >= big:
            continue  # a stratum taken whole has no sampling variance
        c = big * big * (1 - small / big) / small
        cols = strata == h
        uh, vh = u[:, cols], v[:, cols]
        du = uh - uh.mean(axis=1, keepdims=True)
        dv = vh - vh.mean(axis=1, keepdims=True)
        vuu += c * (du * du).sum(axis=1) / (small - 1)
        vuv += c * (du * dv).sum(axis=1) / (small - 1)
        vvv += c * (dv * dv).sum(axis=1) / (small - 1)
    return vuu, vuv, vvv


def _lambda(vuv: np.ndarray, vvv: np.ndarray, tuning: str) -> np.ndarray:
    if tuning == "ppi":
        return np.ones_like(vuv)
    if tuning == "human":
        return np.zeros_like(vuv)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(vvv > 0, vuv / vvv, 1.0)
    return np.clip(lam, 0.0, 1.0)


def _ht(design: Design, values: np.ndarray) -> np.ndarray:
    """Horvitz–Thompson totals of ``values`` (targets × sampled items) over the design's sample."""
    weights = 1.0 / design.inclusion[design.mask]
    return values @ weights


# --- linear targets ----------------------------------------------------------------------------


def estimate_linear(
    weights: np.ndarray,
    x_llm: np.ndarray,
    x_human: np.ndarray,
    design: Design,
    *,
    level: float = 0.95,
    tuning: str = "ppi",
    variance: str = "pooled",
    bounds: tuple[float, float] | None = None,
) -> list[Estimate]:
    """Estimates of ``θ_s = Σ_i weights[s, i] x(y_i)`` for every row ``s`` (see the module doc).
    ``x_llm``: ``x(ŷ_i)`` of every item; ``x_human``: ``x(y_i)`` (read where sampled).
    ``tuning``: ``ppi`` (λ = 1) or ``ppi++`` (λ̂); ``variance`` of the combined estimate:
    ``pooled`` (model-assisted) or ``design``. The human-only estimate's is the design's.
    ``bounds``: the range of the target (P@k, a share: (0, 1)); the intervals are cut to it."""
    design.check()
    mask = design.mask
    z = normal_quantile(level)
    u = weights[:, mask] * x_human[mask][None, :]
    v = weights[:, mask] * x_llm[mask][None, :]
    vuu, vuv, vvv = _stratum_moments(design, u, v)
    lam = _lambda(vuv, vvv, tuning)
    base = weights @ x_llm
    ht_u, ht_v = _ht(design, u), _ht(design, v)
    values = lam * base + ht_u - lam * ht_v
    var = np.maximum(vuu - 2 * lam * vuv + lam * lam * vvv, 0.0)
    if variance == "pooled":
        var = np.array(
            [
                _pooled_variance(design, weights[s], x_human[mask] - lam[s] * x_llm[mask])
                for s in range(lam.size)
            ]
        )
    elif variance != "design":
        raise ValueError(f"unknown variance {variance!r}; choose pooled or design")
    out = []
    for s in range(weights.shape[0]):
        se, hse = math.sqrt(var[s]), math.sqrt(max(vuu[s], 0.0))
        out.append(
            Estimate(
                float(values[s]), se, float(values[s] - z * se), float(values[s] + z * se), float(lam[s]),
                float(ht_u[s]), hse, float(ht_u[s] - z * hse), float(ht_u[s] + z * hse), float(base[s]),
            )
        )  # fmt: skip
    return [e.clipped(*bounds) for e in out] if bounds is not None else out


def _pooled_variance(design: Design, a: np.ndarray, d: np.ndarray) -> float:
    """The model-assisted variance of ``Σ_S a_i d_i / π_i`` (module doc): per stratum, the
    population variance of ``z = a·d`` from the known moments of ``a`` over all its items and the
    moments of ``d`` over all its sampled items, taken as independent of ``a``."""
    strata = design.stratum[design.mask]
    total = 0.0
    for h in range(design.sizes.size):
        big, small = design.sizes[h], design.sampled[h]
        if small < 2 or small >= big:
            continue
        dh = d[strata == h]
        ah = a[design.stratum == h]
        m1, m2 = float(dh.mean()), float((dh * dh).mean())
        ea, ea2 = float(ah.mean()), float((ah * ah).mean())
        s2 = max(ea2 * m2 - (ea * m1) ** 2, 0.0) * small / (small - 1)
        total += big * big * (1 - small / big) / small * s2
    return total


def estimate_share(
    llm: np.ndarray,
    human: np.ndarray,
    design: Design,
    threshold: float,
    *,
    level: float = 0.95,
    tuning: str = "ppi",
) -> Estimate:
    """The share of items whose label is at least ``threshold`` (a linear target)."""
    n = llm.size
    weights = np.full((1, n), 1.0 / n)
    x_llm = (llm >= threshold).astype(float)
    x_human = np.where(np.isnan(human), 0.0, (human >= threshold).astype(float))
    return estimate_linear(weights, x_llm, x_human, design, level=level, tuning=tuning, bounds=(0.0, 1.0))[0]


def _top(ranking: Mapping[str, float], k: int) -> list[str]:
    from reljudge.metrics.measures import trec_eval_order

    return trec_eval_order(ranking)[:k]


def linear_weights(population: Population, runs: Runs, k: int) -> tuple[list[str], np.ndarray]:
    """P@k's weights ``a[s, i]`` (see the module doc): the system names (sorted) and the matrix.
    A system that ranks none of the labelled topics is left out."""
    names, rows = [], []
    topics = set(population.topics)
    for name in sorted(runs):
        run = runs[name]
        ranked = [q for q in sorted(run) if q in topics and run[q]]
        if not ranked:
            continue
        row = np.zeros(population.size)
        for q in ranked:
            for d in _top(run[q], k):
                i = population.index.get((q, d))
                if i is not None:
                    row[i] += 1.0 / (k * len(ranked))
        names.append(name)
        rows.append(row)
    return names, np.array(rows).reshape(len(rows), population.size)


# --- nDCG@k ----------------------------------------------------------------------------------


def _discounts(k: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, k + 2))


def idcg(counts: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ideal DCG@k of grade counts (topics × grades 0..G, fractional allowed) and its
    derivative ``e[t, y] = ∂IDCG/∂c_{t,y}``: with gains = grades, ``IDCG = Σ_{g≥1} F(min(C_g, k))``,
    ``C_g`` the count of grades ≥ g and ``F`` the cumulative discount (linear within a position)."""
    disc = _discounts(k)
    cum = np.concatenate([[0.0], np.cumsum(disc)])
    counts = np.maximum(counts, 0.0)
    at_least = np.cumsum(counts[:, ::-1], axis=1)[:, ::-1]  # C_g
    x = np.minimum(at_least, k)
    whole = np.floor(x).astype(int)
    frac = x - whole
    nxt = np.where(whole < k, disc[np.minimum(whole, k - 1)], 0.0)
    f = cum[whole] + frac * nxt
    total = f[:, 1:].sum(axis=1)
    slope = np.where(at_least < k, nxt, 0.0)  # F'(C_g)
    slope[:, 0] = 0.0  # grade 0 gains nothing
    deriv = np.cumsum(slope, axis=1)  # e[t, y] = Σ_{g=1..y} F'(C_g)
    return total, deriv


def ndcg_weights(population: Population, runs: Runs, k: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The systems (sorted), their discount weights ``d[s, i]`` and ``1/T_s`` per topic
    (systems × topics: ``1/T_s`` where the system ranks the topic, else 0)."""
    disc = _discounts(k)
    names, rows, topic_rows = [], [], []
    for name in sorted(runs):
        run = runs[name]
        ranked = [q for q in population.topics if run.get(q)]
        if not ranked:
            continue
        row = np.zeros(population.size)
        for q in ranked:
            for r, d in enumerate(_top(run[q], k)):
                i = population.index.get((q, d))
                if i is not None:
                    row[i] = disc[r]
        trow = np.zeros(len(population.topics))
        trow[[population.topics.index(q) for q in ranked]] = 1.0 / len(ranked)
        names.append(name)
        rows.append(row)
        topic_rows.append(trow)
    n, t = population.size, len(population.topics)
    return names, np.array(rows).reshape(len(rows), n), np.array(topic_rows).reshape(len(rows), t)


def _grade_matrix(labels: np.ndarray, grades: int) -> np.ndarray:
    g = np.clip(np.floor(labels + 0.5).astype(int), 0, grades - 1)
    out = np.zeros((labels.size, grades))
    out[np.arange(labels.size), g] = 1.0
    return out


def true_ndcg(
    population: Population, weights: np.ndarray, topic_w: np.ndarray, labels: np.ndarray, k: int
) -> np.ndarray:
    """nDCG@k of every system with ``labels`` for every item (the full-label value)."""
    grades = int(np.nanmax(labels)) + 1 if labels.size else 1
    t = len(population.topics)
    counts = np.zeros((t, grades))
    np.add.at(counts, population.topic_of, _grade_matrix(labels, grades))
    ideal, _ = idcg(counts, k)
    dcg = _per_topic(weights * labels[None, :], population.topic_of, t)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(ideal[None, :] > 0, dcg / ideal[None, :], 0.0)
    return (ratio * topic_w).sum(axis=1)


def _per_topic(values: np.ndarray, topic_of: np.ndarray, topics: int) -> np.ndarray:
    """Sum the item columns of ``values`` (rows × items) into topic columns."""
    out = np.zeros((values.shape[0], topics))
    for row in range(values.shape[0]):
        out[row] = np.bincount(topic_of, weights=values[row], minlength=topics)
    return out


def _bootstrap_multiplicities(design: Design, replicates: int, seed: int) -> np.ndarray:
    """Replicates × sampled items: how often each sampled item is drawn when every stratum's
    sample is redrawn with replacement (a stratum taken whole is kept as it is)."""
    rng = np.random.default_rng(seed)
    strata = design.stratum[design.mask]
    out = np.zeros((replicates, strata.size))
    for h in range(design.sizes.size):
        cols = np.flatnonzero(strata == h)
        if cols.size == 0:
            continue
        if design.sampled[h] >= design.sizes[h]:
            out[:, cols] = 1.0
            continue
        draws = rng.integers(0, cols.size, size=(replicates, cols.size))
        for b in range(replicates):
            out[b, cols] = np.bincount(draws[b], minlength=cols.size)
    return out


def _ndcg_pooled_variance(
    population: Population, weights: np.ndarray, topic_w: np.ndarray, design: Design, k: int, grades: int
) -> np.ndarray:
    """The model-assisted (pooled) delta-method variance of each system's nDCG@k estimate
    (module doc): item influences at the LLM-only totals, the people's grade distribution of each
    stratum from all of its sampled items."""
    llm = population.llm
    t = len(population.topics)
    topic_of = population.topic_of
    g_of = np.clip(np.floor(llm + 0.5).astype(int), 0, grades - 1)
    counts = np.zeros((t, grades))
    np.add.at(counts, (topic_of, g_of), 1.0)
    ideal, deriv = idcg(counts, k)
    dcg = _per_topic(weights * llm[None, :], topic_of, t)
    safe = np.where(ideal[topic_of] > 1e-12, ideal[topic_of], np.inf)
    tw = topic_w[:, topic_of]
    ratio = dcg[:, topic_of] / (safe * safe)[None, :]

    def psi(y: np.ndarray | int) -> np.ndarray:
        return tw * (
            weights * np.asarray(y, dtype=float) / safe[None, :] - ratio * deriv[topic_of, y][None, :]
        )

    own = psi(g_of)
    per_grade = [psi(y) - own for y in range(grades)]
    strata = design.stratum[design.mask]
    sampled_grades = np.clip(np.floor(design.human[design.mask] + 0.5).astype(int), 0, grades - 1)
    out = np.zeros(weights.shape[0])
    for h in range(design.sizes.size):
        big, small = design.sizes[h], design.sampled[h]
        if small < 2 or small >= big:
            continue
        cols = design.stratum == h
        p = np.bincount(sampled_grades[strata == h], minlength=grades) / small
        m1 = np.zeros(weights.shape[0])
        m2 = np.zeros(weights.shape[0])
        for y in range(grades):
            if p[y] == 0:
                continue
            diff = per_grade[y][:, cols]
            m1 += p[y] * diff.mean(axis=1)
            m2 += p[y] * (diff * diff).mean(axis=1)
        out += big * big * (1 - small / big) / small * np.maximum(m2 - m1 * m1, 0.0) * small / (small - 1)
    return out


def estimate_ndcg(
    population: Population,
    weights: np.ndarray,
    topic_w: np.ndarray,
    design: Design,
    k: int,
    *,
    grades: int | None = None,
    level: float = 0.95,
    replicates: int = 200,
    seed: int = 0,
) -> list[Estimate]:
    """nDCG@k of every system (rows of ``weights``): the PPI ratio estimate (λ = 1) and the
    human-only one (λ = 0), each with a stratified-bootstrap percentile interval (module doc)."""
    design.check()
    llm, human, mask = population.llm, design.human, design.mask
    if grades is None:
        top = max(float(np.nanmax(llm)), float(np.nanmax(human)) if mask.any() else 0.0)
        grades = int(math.floor(top + 0.5)) + 1
    t = len(population.topics)
    topic_of = population.topic_of
    sampled = np.flatnonzero(mask)
    pi = design.inclusion[sampled]
    tops = topic_of[sampled]
    h_s, y_s = human[sampled], llm[sampled]
    g_h, g_y = _grade_matrix(h_s, grades), _grade_matrix(y_s, grades)
    c_base = np.zeros((t, grades))
    np.add.at(c_base, topic_of, _grade_matrix(llm, grades))
    d_base = _per_topic(weights * llm[None, :], topic_of, t)
    w_s = weights[:, sampled]
    mult = np.vstack([np.ones((1, sampled.size)), _bootstrap_multiplicities(design, replicates, seed)])
    reps = mult.shape[0]
    systems = weights.shape[0]
    # per replicate: HT totals of the people's and the LLM's labels of the sampled items
    d_h = np.zeros((reps, systems, t))
    d_y = np.zeros((reps, systems, t))
    c_h = np.zeros((reps, t, grades))
    c_y = np.zeros((reps, t, grades))
    for j in range(t):
        cols = np.flatnonzero(tops == j)
        if cols.size == 0:
            continue
        m = mult[:, cols] / pi[cols][None, :]
        d_h[:, :, j] = (m * h_s[cols][None, :]) @ w_s[:, cols].T
        d_y[:, :, j] = (m * y_s[cols][None, :]) @ w_s[:, cols].T
        c_h[:, j, :] = m @ g_h[cols]
        c_y[:, j, :] = m @ g_y[cols]

    def ndcg(dd: np.ndarray, cc: np.ndarray) -> np.ndarray:
        ideal, _ = idcg(cc.reshape(-1, grades), k)
        ideal = ideal.reshape(reps, 1, t)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(ideal > 1e-12, dd / ideal, 0.0)
        return (ratio * topic_w[None, :, :]).sum(axis=2)  # reps × systems

    combined = ndcg(d_base[None] + d_h - d_y, c_base[None] + c_h - c_y)
    alone = ndcg(d_h, c_h)
    lo_q, hi_q = 100 * (1 - level) / 2, 100 * (1 + level) / 2
    llm_only = true_ndcg(population, weights, topic_w, llm, k)
    pooled = np.sqrt(_ndcg_pooled_variance(population, weights, topic_w, design, k, grades))
    z = normal_quantile(level)
    out = []
    for s in range(systems):
        boot, hboot = combined[1:, s], alone[1:, s]
        lo, hi = np.percentile(boot, [lo_q, hi_q]) if replicates else (math.nan, math.nan)
        hlo, hhi = np.percentile(hboot, [lo_q, hi_q]) if replicates else (math.nan, math.nan)
        value = float(combined[0, s])
        lo, hi = min(lo, value - z * pooled[s]), max(hi, value + z * pooled[s])  # the union
        out.append(
            Estimate(
                value, float(pooled[s]), float(lo), float(hi), 1.0,
                float(alone[0, s]), float(hboot.std(ddof=1)) if replicates > 1 else math.nan, float(hlo), float(hhi),
                float(llm_only[s]),
            ).clipped(0.0, 1.0)
        )  # fmt: skip
    return out
