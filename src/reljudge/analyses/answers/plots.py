"""``judge answers similarity --plot``'s figures: ``cross_grade.png`` (the cross-grade validation
of the encoder) and ``common_scale.png`` (runs and generators on one scale).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reljudge.analyses.answers.common_scale import MEASURE


def plot_cross_grade(data: dict[str, Any], path: str | Path, title: str = "") -> Path:
    """Box plot of cos(target, passage) by the passage's grade (box: quartiles, line: median,
    whiskers: 5th-95th percentiles, dot: mean)."""
    from reljudge.io.figures import fit_titles, pyplot, save_figure

    plt = pyplot()
    rows = [r for r in data["cross_grade"] if r["n"]]
    stats = [{"label": f"grade {r['grade']:g}\n(n={r['n']})", "med": r["median"], "q1": r["q1"], "q3": r["q3"],
              "whislo": r["p5"], "whishi": r["p95"], "mean": r["mean"], "fliers": []} for r in rows]  # fmt: skip
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.bxp(stats, showmeans=True)
    ax.set_ylabel("cosine to the topic's target passage")
    enc = data["settings"]["encoder"]
    ax.set_title(title or f"cross-grade validation ({enc})", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    fit_titles(fig)
    return save_figure(fig, path)


def plot_common_scale(data: Mapping[str, Any], path: str | Path, title: str = "") -> Path:
    """Scatter: x = nDCG@10, y = common-scale score, one dot per run; each generator a labelled
    horizontal line (it has no nDCG)."""
    from reljudge.io.figures import fit_titles, pyplot, save_figure

    plt = pyplot()
    runs = {n: r for n, r in data["systems"].items() if r["kind"] == "run" and r[MEASURE] == r[MEASURE]}
    gens = {n: r for n, r in data["systems"].items() if r["kind"] == "answers"}
    fig, ax = plt.subplots(figsize=(7.5, 5))
    xs = [r[MEASURE] for r in runs.values()]
    ax.scatter(
        xs, [r["score"] for r in runs.values()], s=22, color="#1f4e79", label=f"runs ({len(runs)})", zorder=3
    )
    colors = plt.get_cmap("tab10").colors
    for i, (name, r) in enumerate(sorted(gens.items(), key=lambda kv: -kv[1]["score"])):
        c = colors[(i + 1) % len(colors)]
        ax.axhline(r["score"], color=c, linestyle="--", linewidth=1.4)
        ax.annotate(f"{name} ({r['score']:.3f})", xy=(1.0, r["score"]), xycoords=("axes fraction", "data"),
                    xytext=(5, 0), textcoords="offset points", ha="left", va="center", color=c, fontsize=9)  # fmt: skip
    ax.set_xlabel(f"{MEASURE} (human qrels)")
    ax.set_ylabel("similarity to the top-grade passages (cosine)")
    ag = data.get("agreement") or {}
    sub = f"runs: Kendall τ-b = {ag['tau_b']:.3f} (p = {ag['p']:.2g})" if ag else ""
    ax.set_title((title or "runs and generators on one scale") + (f"\n{sub}" if sub else ""), fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=9)
    fit_titles(fig)
    return save_figure(fig, path)
