"""Runs and generators on one scale, and the no-judgment anchors, from loaded inputs (the file side
of `reljudge.metrics.common_scale`): the ``common_scale`` and ``anchors`` sections of
``judge answers similarity``'s ``similarity.json``, ``anchors.csv``, the scatter
``common_scale.png``, and the ranking of generators and runs together of ``judge evaluate
--answers`` (`answer_ranking`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reljudge.errors import InputError

MEASURE = "nDCG@10"


def load_anchor_runs(specs: Sequence[str | Path]) -> dict[str, Any]:
    """Anchor runs from directories of runs and single run files, by run name."""
    from reljudge.io.trec import read_run, read_runs_dir

    out: dict[str, Any] = {}
    for spec in specs:
        path = Path(spec)
        if path.is_dir():
            found = dict(read_runs_dir(path))
        elif path.is_file():
            run = read_run(path)
            found = {run.name or path.name: run}
        else:
            raise InputError("anchor run file or directory not found", path)
        for name, run in found.items():
            if name in out:
                raise InputError(f"two anchor runs are named {name!r}", path)
            out[name] = run
    return out


def needed_ids(human, runs: Mapping[str, Any], anchors: Mapping[str, Any], answer_qids) -> list[str]:
    """The run passages that need a vector: each run's first two passages on the topics with
    targets (f_R(q, t) is one of them), each anchor's top-1 on the answered topics."""
    from reljudge.metrics.common_scale import run_top_passages
    from reljudge.metrics.similarity import top_grade_targets

    return list(dict.fromkeys([*run_top_passages(runs, top_grade_targets(human), depth=2),
                               *run_top_passages(anchors, answer_qids, depth=1)]))  # fmt: skip


def common_scale(
    human, answers, runs, source, texts, *, min_grade: float = 2, macro: bool = False
) -> dict[str, Any]:
    """``{"systems": {name: {"kind", score, pairs, ..., nDCG@10}}, "agreement": τ-b of the runs'
    scores with nDCG@10, "average": ...}``."""
    from reljudge.metrics.common_scale import generator_scale_scores, run_scale_scores, scale_agreement
    from reljudge.metrics.measures import system_measures

    options = dict(min_grade=min_grade, macro=macro, texts=texts)
    systems: dict[str, dict[str, Any]] = {}
    for name, s in generator_scale_scores(human, answers, source, **options).items():
        systems[name] = {"kind": "answers", **s.as_dict(), MEASURE: float("nan")}  # no ranking
    measure: dict[str, float] = {}
    if runs:
        per_topic = system_measures(human, runs, MEASURE)
        measure = {r: sum(v.values()) / len(v) if v else float("nan") for r, v in per_topic.items()}
        for name, s in run_scale_scores(human, runs, source, **options).items():
            if name in systems:
                raise InputError(f"a run and an answer system are both named {name!r}")
            systems[name] = {"kind": "run", **s.as_dict(), MEASURE: measure.get(name, float("nan"))}
    run_scores = {n: r["score"] for n, r in systems.items() if r["kind"] == "run"}
    return {
        "average": "macro over topics" if macro else "micro over (topic, target) pairs",
        "measure": MEASURE,
        "systems": systems,
        "agreement": scale_agreement(run_scores, measure) if runs else None,
    }


def anchors_section(answers, anchors, source, texts) -> dict[str, Any]:
    from reljudge.metrics.common_scale import anchor_scores, ordering_stability

    table = anchor_scores(answers, anchors, source, texts)
    return {
        "scores": table.scores,
        "mean": table.mean(),
        "topics": table.topics,
        "missing": table.missing,
        "stability": ordering_stability(table.scores),
    }


def anchor_rows(section: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One CSV row per generator: its mean over anchors, then one column per anchor."""
    return [{"system": g, "mean": section["mean"][g], **by_m} for g, by_m in section["scores"].items()]


def format_anchors(section: Mapping[str, Any]) -> str:
    st = section["stability"]
    ranked = sorted(section["mean"].items(), key=lambda kv: -kv[1] if kv[1] == kv[1] else 9)
    head = "no-judgment anchors (mean over anchor runs of mean_q cos(answer, top-1 of the anchor)):"
    body = "\n".join(f"  {g}: {v:.3f}" for g, v in ranked)
    stab = (f"ordering stability over {st['pairs']} anchor pairs ({st['anchors']} anchors): "
            f"tau-b mean {st['mean_tau_b']:.3f}, min {st['min_tau_b']:.3f}, identical order "
            f"{st['identical_order_share']:.1%}")  # fmt: skip
    return "\n".join([head, body, stab])


def plot_common_scale(data: Mapping[str, Any], path: str | Path, title: str = "") -> Path:
    """Scatter: x = nDCG@10, y = common-scale score, one dot per run; each generator a labelled
    horizontal line (it has no nDCG)."""
    from reljudge.io.figures import pyplot, save_figure

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
    return save_figure(fig, path)


def answer_ranking(
    human,
    answer_files: Sequence[Path],
    runs: Mapping[str, Any] | None,
    *,
    encoder: str | None = None,
    embeddings: str | Path | None = None,
    ids: str | Path | None = None,
    corpus: str | Path | None = None,
    embedding_cache: str | Path | None = None,
    batch_size: int = 64,
    device: str | None = None,
    macro: bool = False,
    notify=None,
) -> dict[str, Any]:
    """Generators and runs in one ranking by their common-scale score (``judge evaluate
    --answers``): ``{"average", "agreement", "systems": [{"system", "kind", "similarity",
    nDCG@10, "pairs", ...}, best first]}``. Encodes only the targets, the runs' first two
    passages and the answers."""
    from reljudge.evaluation.embeddings import vector_source
    from reljudge.io.answer_sets import read_answers_by_system
    from reljudge.metrics.similarity import answer_id, top_grade_targets

    if (encoder is None) == (embeddings is None):
        raise InputError("--answers needs exactly one of --encoder NAME or --embeddings FILE")
    by_system = read_answers_by_system(answer_files) if answer_files else {}
    answers = {s: {q: answer_id(s, q) for q in by_qid} for s, by_qid in by_system.items()}
    runs = runs or {}
    targets = [d for docs in top_grade_targets(human).values() for d in docs]
    needed = list(dict.fromkeys([*targets, *needed_ids(human, runs, {}, ())]))
    texts: dict[str, str] | None = None
    if encoder is not None:
        from reljudge.io.corpus import load_corpus

        if corpus is None:
            raise InputError("--encoder needs --corpus with the passage texts")
        texts = dict(load_corpus(corpus, docids=needed))
        texts.update({answer_id(s, q): a.text for s, by_qid in by_system.items() for q, a in by_qid.items()})
    all_ids = needed + [aid for by_qid in answers.values() for aid in by_qid.values()]
    source, model = vector_source(encoder, embeddings, ids, texts, all_ids, batch_size=batch_size, device=device,
                                  cache_file=embedding_cache, say=notify or (lambda _line: None))  # fmt: skip
    try:
        scale = common_scale(human, answers, runs, source, texts, macro=macro)
    finally:
        close = getattr(model, "close", None)
        if close is not None:
            close()
    rows = [{"system": n, "kind": r["kind"], "similarity": r["score"], MEASURE: r[MEASURE], "pairs": r["pairs"],
             "missing_vectors": r["missing_vectors"], "no_result": r["no_result"]}
            for n, r in scale["systems"].items()]  # fmt: skip
    rows.sort(
        key=lambda r: (-r["similarity"] if r["similarity"] == r["similarity"] else float("inf"), r["system"])
    )
    return {
        "encoder": getattr(source, "name", "?"),
        "measure": MEASURE,
        "average": scale["average"],
        "agreement": scale["agreement"],
        "systems": rows,
    }
