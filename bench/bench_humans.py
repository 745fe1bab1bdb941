"""Humans where they matter: coverage and width of ``judge estimate``'s intervals, and how many
disagreements ``judge select``'s strategies find per label, by simulation on real labels.

Data (../shared/data, or RELJUDGE_DATA_DIR): TREC DL19/DL20/DL21 passages. "LLM" = the
published GPT-4o UMBRELA labels (``llm-judgments/gpt-4o/umbrela.dlXX.qrels``, 0-3); "people" =
the NIST qrels (0-3). The population is every pair both label (9,260 / 11,386 / 10,828 minus
the few the LLM file lacks). The full-human value of each target is computed from the NIST
labels of the whole population; a draw asks "people" for ``n`` labels by a design and
estimates the target from them and the LLM labels -- the code of ``judge select`` and
``judge estimate`` (`reljudge.analyses.humans.design`, `reljudge.analyses.humans.ppi`).

Targets: the relevant share (grade >= 2) on all three collections; on DL21 (the one with
system runs: the 63 submitted runs) each run's P@10 (grade >= 2) and nDCG@10 -- one interval
per run and draw.

nDCG@10 intervals: stratified-bootstrap percentile (200 replicates); the others: normal.

Designs, each with ``n`` = 100, 300, 1000 human labels and ``DRAWS`` draws (seeds 0..DRAWS-1):
- combined: stratified by the LLM label, proportional allocation (`stratified_sample`),
  PPI++ estimate (`estimate_linear`, `estimate_ndcg`);
- human-only: a simple random sample of ``n`` (one stratum), the Horvitz-Thompson estimate
  (λ = 0) -- what the same budget buys without the LLM labels.
Coverage = the share of all intervals (draws × targets) holding the full-human value.

Disagreements per label: of the ``n`` items each strategy chooses, the share whose LLM label
is on the other side of "relevant" (>= 2) from the people's (and, in brackets, any different
grade): ``uncertainty`` (ensemble disagreement: GPT-4o's UMBRELA grade >= 2 vs its binary
judgment, ties broken at random -- the published labels carry no log-probabilities),
``influence`` on DL21 (pairs of runs swapped under nDCG@10), against random (the stratified
sample, mean over the draws).

Usage: python bench/bench_humans.py [--quick]   (--quick: 40 draws, a smoke run)
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("RELJUDGE_DATA_DIR", ROOT.parent / "shared" / "data"))
BUDGETS = (100, 300, 1000)
DRAWS = 200
LEVEL = 0.95
#: the target: nominal 95 % within ±3 points, or the coverage ``judge estimate`` prints for the
#: target (`reljudge.analyses.humans.ppi.SIMULATED_COVERAGE`) within ±3 points
TOLERANCE = 0.03
REL = 2


def load(year: str):
    from reljudge.io.trec import read_qrels

    human = read_qrels(DATA / f"trec-dl{year}" / "qrels.txt")
    llm = read_qrels(DATA / "llm-judgments" / "gpt-4o" / f"umbrela.dl{year}.qrels", on_duplicate="max")
    binary = read_qrels(DATA / "llm-judgments" / "gpt-4o" / f"binary.dl{year}.qrels", on_duplicate="max")
    keys = sorted((q, d) for q, docs in human.items() for d in docs if d in llm.get(q, {}))
    h = np.array([float(human[q][d]) for q, d in keys])
    y = np.array([float(llm[q][d]) for q, d in keys])
    b = [binary.get(q, {}).get(d) for q, d in keys]
    runs = {}
    if (DATA / f"trec-dl{year}" / "runs").is_dir():
        from reljudge.io.trec import read_runs_dir

        runs = dict(read_runs_dir(DATA / f"trec-dl{year}" / "runs"))
    return keys, h, y, b, runs


def covered(estimates, truths, human_only: bool = False) -> list[bool]:
    if human_only:
        return [e.human_only_low <= t <= e.human_only_high for e, t in zip(estimates, truths, strict=True)]
    return [e.low <= t <= e.high for e, t in zip(estimates, truths, strict=True)]


def collection(year: str, draws: int) -> dict:
    from reljudge.analyses.humans.design import (
        label_stratum,
        stratified_sample,
        top_by_score,
        uncertainty_score,
    )
    from reljudge.analyses.humans.ppi import (
        Design,
        Population,
        estimate_linear,
        estimate_ndcg,
        linear_weights,
        ndcg_weights,
        true_ndcg,
    )
    from reljudge.metrics.ranking import kendall_tau_b_batch

    keys, h, y, b, runs = load(year)
    pop = Population(keys, y)
    strata = [label_stratum(v) for v in y]
    names = sorted(set(strata))
    sidx = np.array([names.index(s) for s in strata])
    one = np.zeros(len(keys), dtype=np.int64)
    share_w = np.full((1, len(keys)), 1.0 / len(keys))
    targets = {"relevant share": (share_w, None)}
    truths = {"relevant share": np.array([(h >= REL).mean()])}
    if runs:
        _, pw = linear_weights(pop, runs, 10)
        targets["P@10"] = (pw, None)
        truths["P@10"] = pw @ (h >= REL).astype(float)
        _, nw, tw = ndcg_weights(pop, runs, 10)
        targets["nDCG@10"] = (nw, tw)
        truths["nDCG@10"] = true_ndcg(pop, nw, tw, h, 10)
    disagree = (h >= REL) != (y >= REL)
    graded = h != y
    out: dict = {"year": year, "items": len(keys), "results": {}}
    for n in BUDGETS:
        res = {
            t: {"cov": [], "cov_h": [], "cov_hs": [], "w": [], "w_h": [], "w_hs": [], "tau": [], "tau_h": []}
            for t in targets
        }
        rand_dis = []
        for seed in range(draws):
            strat = stratified_sample(strata, n, seed)
            srs = stratified_sample(["all"] * len(keys), n, seed)
            designs = {}
            for which, chosen, st, nm in (("comb", strat, sidx, names), ("srs", srs, one, ["all"])):
                lab = np.full(len(keys), np.nan)
                lab[chosen.items] = h[chosen.items]
                designs[which] = Design(st, lab, nm)
            rand_dis.append(disagree[strat.items].mean())
            for t, (w, tw) in targets.items():
                truth = truths[t]
                got = {}
                for which, d in designs.items():
                    if tw is None:
                        x_h = np.where(np.isnan(d.human), 0.0, (d.human >= REL).astype(float))
                        got[which] = estimate_linear(
                            w, (y >= REL).astype(float), x_h, d, level=LEVEL, bounds=(0.0, 1.0)
                        )
                    else:
                        got[which] = estimate_ndcg(pop, w, tw, d, 10, level=LEVEL, seed=seed)
                r = res[t]
                r["cov"] += covered(got["comb"], truth)
                r["cov_hs"] += covered(got["comb"], truth, human_only=True)  # same sample, λ = 0
                r["cov_h"] += covered(got["srs"], truth, human_only=True)
                r["w"] += [e.width for e in got["comb"]]
                r["w_hs"] += [e.human_only_width for e in got["comb"]]
                r["w_h"] += [e.human_only_width for e in got["srs"]]
                if len(truth) > 1:
                    tr = truth[:, None]
                    r["tau"].append(
                        float(kendall_tau_b_batch(np.array([[e.value] for e in got["comb"]]), tr)[0])
                    )
                    r["tau_h"].append(
                        float(kendall_tau_b_batch(np.array([[e.human_only] for e in got["srs"]]), tr)[0])
                    )
        # uncertainty: ensemble disagreement (UMBRELA >= 2 vs binary), ties at random (one choice per seed)
        votes = [
            uncertainty_score({}, [float(v >= REL), None if bb is None else float(bb >= 1)])
            for v, bb in zip(y, b, strict=True)
        ]
        unc = [
            disagree[
                top_by_score(keys, [s for s, _ in votes], [w for _, w in votes], n, seed, "u").items
            ].mean()
            for seed in range(min(draws, 20))
        ]
        unc_g = [
            graded[
                top_by_score(keys, [s for s, _ in votes], [w for _, w in votes], n, seed, "u").items
            ].mean()
            for seed in range(min(draws, 20))
        ]
        summary = {
            t: {
                "coverage": float(np.mean(r["cov"])),
                "coverage_human_only_srs": float(np.mean(r["cov_h"])),
                "coverage_human_only_same_sample": float(np.mean(r["cov_hs"])),
                "width": float(np.mean(r["w"])),
                "width_human_only_srs": float(np.mean(r["w_h"])),
                "width_human_only_same_sample": float(np.mean(r["w_hs"])),
                "intervals": len(r["cov"]),
                "tau_combined": float(np.mean(r["tau"])) if r["tau"] else None,
                "tau_human_only": float(np.mean(r["tau_h"])) if r["tau_h"] else None,
            }
            for t, r in res.items()
        }
        if runs:
            from reljudge.analyses.humans.ppi import true_ndcg as _tn

            llm_scores = _tn(pop, targets["nDCG@10"][0], targets["nDCG@10"][1], y, 10)[:, None]
            summary["nDCG@10"]["tau_llm_only"] = float(
                kendall_tau_b_batch(llm_scores, truths["nDCG@10"][:, None])[0]
            )
        summary["disagreements per label"] = {
            "random": float(np.mean(rand_dis)),
            "uncertainty": float(np.mean(unc)),
            "uncertainty_graded": float(np.mean(unc_g)),
            "random_graded": float(graded.mean()),
        }
        if runs:
            summary["disagreements per label"]["influence"] = _influence_share(keys, y, runs, disagree, n)
        out["results"][n] = summary
    return out


_INFLUENCE: dict = {}


def _influence_share(keys, y, runs, disagree, n) -> float:
    """Share of disagreements among the ``n`` most influential items (nDCG@10), computed once."""
    if "flips" not in _INFLUENCE:
        from reljudge.analyses.humans.files import RunLabels
        from reljudge.analyses.humans.pipeline import _influence

        run = RunLabels(Path("llm"), "", dict(zip(keys, y.tolist(), strict=True)))
        _INFLUENCE["flips"] = _influence(run, list(keys), runs, "nDCG@10", REL)[0]
    from reljudge.analyses.humans.design import top_by_score

    flips = _INFLUENCE["flips"]
    chosen = top_by_score(keys, flips.tolist(), [""] * len(keys), n, 0, "i").items
    return float(disagree[chosen].mean())


def main(quick: bool = False) -> list[tuple[str, float, float, str]]:
    from reljudge.analyses.humans.ppi import SIMULATED_COVERAGE

    if not (DATA / "README.md").exists():
        print(f"skipped: no shared data at {DATA} (set RELJUDGE_DATA_DIR)")
        return []
    draws = 40 if quick else DRAWS
    rows: list[tuple[str, float, float, str]] = []
    results = []
    for year in ("19", "20", "21"):
        start = time.perf_counter()
        got = collection(year, draws)
        results.append(got)
        print(
            f"DL{year}: {got['items']} pairs, {draws} draws per budget ({time.perf_counter() - start:.0f} s)"
        )
        for n, summary in got["results"].items():
            for t, s in summary.items():
                if t == "disagreements per label":
                    extra = f", influence {s['influence']:.2f}" if "influence" in s else ""
                    print(
                        f"  n={n:<5} disagreements per label (relevant vs not): uncertainty {s['uncertainty']:.2f}, "
                        f"random {s['random']:.2f}{extra}; any grade: uncertainty {s['uncertainty_graded']:.2f}, "
                        f"random {s['random_graded']:.2f}"
                    )
                    continue
                tau = ""
                if s["tau_combined"] is not None:
                    tau = f"; tau-b with the full-human order: combined {s['tau_combined']:.3f}, human-only {s['tau_human_only']:.3f}"
                    if "tau_llm_only" in s:
                        tau += f", LLM only {s['tau_llm_only']:.3f}"
                print(
                    f"  n={n:<5} {t:<15} coverage {s['coverage']:.1%} (human-only {s['coverage_human_only_srs']:.1%}) "
                    f"of {s['intervals']}; mean width {s['width']:.4f} vs human-only {s['width_human_only_srs']:.4f} "
                    f"({s['width'] / s['width_human_only_srs']:.2f}x; same sample, lambda=0: {s['width_human_only_same_sample']:.4f}){tau}"
                )
                value = s["coverage"]
                printed = SIMULATED_COVERAGE[t][n]  # what judge estimate prints beside its intervals
                ok = (
                    "ok"
                    if abs(value - LEVEL) <= TOLERANCE
                    else "ok (printed)"
                    if abs(value - printed) <= TOLERANCE
                    else "MISSED"
                )
                rows.append((f"humans: coverage at 95%, DL{year} {t} n={n}", value, LEVEL, ok))
                ratio = s["width"] / s["width_human_only_srs"]
                rows.append(
                    (
                        f"humans: width / human-only, DL{year} {t} n={n}",
                        ratio,
                        1.0,
                        "ok" if ratio < 1 else "MISSED",
                    )
                )
    if not quick:
        import json

        (ROOT / "bench" / "humans_results.json").write_text(json.dumps(results, indent=1) + "\n")
    return rows


def figure(out: Path) -> None:
    """The docs' figure from ``bench/humans_results.json`` (the last full run)."""
    import json

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = json.loads((ROOT / "bench" / "humans_results.json").read_text())
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    markers = {"relevant share": "o", "P@10": "s", "nDCG@10": "^"}
    colours = {"19": "tab:blue", "20": "tab:orange", "21": "tab:green"}
    for got in results:
        year = got["year"]
        budgets = [int(n) for n in got["results"]]
        for target, marker in markers.items():
            if target not in got["results"][str(budgets[0])]:
                continue
            rows = [got["results"][str(n)][target] for n in budgets]
            label = f"DL{year} {target}"
            axes[0].plot(
                budgets, [r["coverage"] for r in rows], marker=marker, color=colours[year], label=label
            )
            axes[1].plot(
                budgets,
                [r["width"] / r["width_human_only_srs"] for r in rows],
                marker=marker,
                color=colours[year],
                label=label,
            )
        dis = [got["results"][str(n)]["disagreements per label"] for n in budgets]
        axes[2].plot(
            budgets,
            [d["uncertainty"] for d in dis],
            marker="o",
            color=colours[year],
            label=f"DL{year} uncertainty",
        )
        axes[2].plot(
            budgets,
            [d["random"] for d in dis],
            marker="x",
            ls="--",
            color=colours[year],
            label=f"DL{year} random",
        )
        if "influence" in dis[0]:
            axes[2].plot(
                budgets,
                [d["influence"] for d in dis],
                marker="^",
                ls=":",
                color=colours[year],
                label=f"DL{year} influence",
            )
    axes[0].axhline(LEVEL, color="grey", lw=0.8)
    axes[0].set_ylim(0.85, 1.0)
    axes[0].set(
        title="coverage of the combined 95% intervals", xlabel="human labels", ylabel="coverage", xscale="log"
    )
    axes[1].axhline(1.0, color="grey", lw=0.8)
    axes[1].set(title="width: combined / human-only (same budget)", xlabel="human labels", xscale="log")
    axes[2].set(title="disagreements (relevant or not) per label", xlabel="human labels", xscale="log")
    for ax in axes:
        ax.set_xticks(list(BUDGETS), [str(b) for b in BUDGETS])
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    if "--figure" in sys.argv:
        figure(Path(sys.argv[sys.argv.index("--figure") + 1]))
        raise SystemExit(0)
    start = time.perf_counter()
    found = main("--quick" in sys.argv)
    print(
        f"\n{sum(r[3] == 'MISSED' for r in found)} of {len(found)} targets missed ({time.perf_counter() - start:.0f} s)"
    )
