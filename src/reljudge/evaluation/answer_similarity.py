"""``judge answers similarity``: generated answers against judged passages, from files.

Reads the qrels, the answer files (TREC RAG 2024 or TSV, `reljudge.io.answers`) and the passage
texts, takes the vectors from a ``.npy`` file or encodes passages and answers with the encoder
of ``judge fd`` (cached on disk), and computes (`reljudge.metrics.similarity`,
`reljudge.metrics.common_scale`, `reljudge.metrics.fd.fd_answers`): the cross-grade validation
of the encoder, per-grade answer similarity, FD of each system's answers (k = 1) and the
common-scale score of answers and, with ``runs``, of retrieval runs (with nDCG@10, its τ-b and
FD@k of the runs against the same reference set); with ``anchors``, the no-judgment anchors
(`reljudge.evaluation.common_scale`). Writes ``similarity.json``, ``similarity.csv`` (one row
per system or run), ``cross_grade.csv`` and, with anchors, ``anchors.csv``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from reljudge.errors import InputError


def answer_similarity_paths(
    qrels: str | Path,
    answer_files: list[Path],
    *,
    corpus: str | Path | None = None,
    encoder: str | None = None,
    embeddings: str | Path | None = None,
    ids: str | Path | None = None,
    runs: str | Path | None = None,
    anchors: Sequence[str | Path] | None = None,
    k: int = 10,
    min_grade: float = 2,
    max_per_topic: int | None = None,
    target: str = "random",
    macro: bool = False,
    seed: int = 0,
    batch_size: int = 64,
    device: str | None = None,
    embedding_cache: str | Path | None = None,
    notify: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every measure of the module docstring, as the content of ``similarity.json``."""
    from reljudge.evaluation.common_scale import anchors_section, common_scale, load_anchor_runs, needed_ids
    from reljudge.evaluation.embeddings import vector_source
    from reljudge.io.answer_sets import read_answers_by_system
    from reljudge.io.trec import read_qrels
    from reljudge.metrics.fd import fd_answers, fd_docids, fd_runs
    from reljudge.metrics.similarity import answer_grades, answer_id, cross_grade, pick_targets

    say = notify or (lambda _line: None)
    if (encoder is None) == (embeddings is None):
        raise InputError("give exactly one of --encoder NAME or --embeddings FILE")
    if anchors and not answer_files:
        raise InputError("--anchors scores answers: give answer files too")
    if not answer_files and runs is None:
        raise InputError("nothing to score: give answer files, --runs DIR, or both")
    human = read_qrels(qrels)
    by_system = read_answers_by_system(answer_files) if answer_files else {}
    if answer_files and not by_system:
        raise InputError("no answers in " + ", ".join(map(str, answer_files)))
    answers = {s: {q: answer_id(s, q) for q in by_qid} for s, by_qid in by_system.items()}
    run_map: dict = {}
    if runs is not None:
        from reljudge.analyses.inputs import load_runs

        run_map = load_runs(runs)
    anchor_map = load_anchor_runs(anchors) if anchors else {}
    needed = list(dict.fromkeys(d for docs in human.values() for d in docs))
    if run_map:
        extra = fd_docids(human, run_map, k=k, max_per_topic=max_per_topic, min_grade=min_grade, seed=seed)
        needed = list(dict.fromkeys([*needed, *extra]))
    answer_qids = {q for by_qid in answers.values() for q in by_qid}
    needed = list(dict.fromkeys([*needed, *needed_ids(human, run_map, anchor_map, answer_qids)]))
    texts: dict[str, str] | None = None
    if encoder is not None:
        from reljudge.io.corpus import load_corpus

        if corpus is None:
            raise InputError("--encoder needs --corpus with the passage texts")
        texts = dict(load_corpus(corpus, docids=needed))
        texts.update({answer_id(s, q): a.text for s, by_qid in by_system.items() for q, a in by_qid.items()})
    all_ids = needed + [aid for by_qid in answers.values() for aid in by_qid.values()]
    source, model = vector_source(encoder, embeddings, ids, texts, all_ids, batch_size=batch_size, device=device,
                            cache_file=embedding_cache, say=say)  # fmt: skip
    try:
        targets = pick_targets(human, min_grade=min_grade, mode=target, seed=seed)
        grades = cross_grade(human, targets, source, texts)
        per_grade = answer_grades(human, answers, source, texts)
        scale = common_scale(human, answers, run_map, source, texts, min_grade=min_grade, macro=macro)
        anchor_part = anchors_section(answers, anchor_map, source, texts) if anchor_map else None
        fds = fd_answers(human, answers, source, max_per_topic=max_per_topic, min_grade=min_grade,
                         texts=texts, seed=seed)  # fmt: skip
        run_report = (
            fd_runs(
                human,
                run_map,
                source,
                k=k,
                max_per_topic=max_per_topic,
                min_grade=min_grade,
                texts=texts,
                seed=seed,
            )  # fmt: skip
            if run_map
            else None
        )
    finally:
        close = getattr(model, "close", None)
        if close is not None:
            close()
    systems = {
        s: {
            **scale["systems"][s],
            "fd": fds[s].fd,
            "fd_topics": len(fds[s].topics),
            **{f"sim_grade_{g:g}": v for g, v in per_grade[s].items()},
        }  # fmt: skip
        for s in answers
    }
    if run_report is not None:
        for name, r in run_report.runs.items():
            systems[name] = {**scale["systems"][name], "fd": r.fd, "fd_topics": len(r.topics), "fd_k": k}
    settings = {"encoder": getattr(source, "name", "?"), "min_grade": min_grade, "max_per_topic": max_per_topic,
                "target": target, "seed": seed, "score": scale["average"],
                "answer_files": [str(p) for p in answer_files], "runs": str(runs) if runs else None,
                "anchors": [str(a) for a in anchors or []]}  # fmt: skip
    return {
        "settings": settings,
        "cross_grade": grades.summary(),
        "cross_grade_missing": len(grades.missing),
        "systems": systems,
        "common_scale": {"measure": scale["measure"], "agreement": scale["agreement"]},
        "anchors": anchor_part,
    }


def _nan_last(value: Any) -> float:
    return -value if isinstance(value, (int, float)) and value == value else float("inf")


def format_similarity(data: dict[str, Any]) -> str:
    from reljudge.evaluation.common_scale import MEASURE, format_anchors
    from reljudge.evaluation.report import format_table

    rows = data["systems"]
    grade_cols = sorted({c for r in rows.values() for c in r if c.startswith("sim_grade_")}, reverse=True)
    table = [
        [
            name,
            r["kind"],
            r["score"],
            r[MEASURE],
            r["pairs"],
            r["missing_vectors"],
            r["no_result"],
            r["fd"],
            *(r.get(c, float("nan")) for c in grade_cols),
        ]  # fmt: skip
        for name, r in sorted(
            rows.items(), key=lambda kv: (kv[1]["kind"] != "answers", _nan_last(kv[1]["score"]))
        )
    ]
    head = f"similarity to judged passages (encoder {data['settings']['encoder']}; score: {data['settings']['score']})"
    columns = ["system", "kind", "score", MEASURE, "pairs", "no vector", "no result", "FD", *grade_cols]
    lines = [head, format_table(columns, table)]
    ag = data["common_scale"]["agreement"]
    if ag:
        lines.append(
            f"runs: Kendall tau-b(score, {MEASURE}) = {ag['tau_b']:.3f} (p = {ag['p']:.2g}, {ag['systems']} runs)"
        )
    cross = format_table(
        ["target vs grade", "n", "mean", "median"],
        [[r["grade"], r["n"], r["mean"], r["median"]] for r in data["cross_grade"]],
    )
    lines.append(cross)
    if data.get("anchors"):
        lines.append(format_anchors(data["anchors"]))
    return "\n".join(lines)


def write_similarity(data: dict[str, Any], out_dir: str | Path) -> list[Path]:
    from reljudge.evaluation.common_scale import anchor_rows
    from reljudge.io.atomic import write_text_atomic
    from reljudge.io.tables import csv_text, json_ready

    out_dir = Path(out_dir)
    paths = [out_dir / "similarity.json", out_dir / "similarity.csv", out_dir / "cross_grade.csv"]
    write_text_atomic(paths[0], json.dumps(json_ready(data), indent=1) + "\n")
    write_text_atomic(paths[1], csv_text([{"system": n, **r} for n, r in data["systems"].items()]))
    write_text_atomic(paths[2], csv_text(data["cross_grade"]))
    if data.get("anchors"):
        paths.append(out_dir / "anchors.csv")
        write_text_atomic(paths[-1], csv_text(anchor_rows(data["anchors"])))
    return paths


def plot_cross_grade(data: dict[str, Any], path: str | Path, title: str = "") -> Path:
    """Box plot of cos(target, passage) by the passage's grade (box: quartiles, line: median,
    whiskers: 5th-95th percentiles, dot: mean)."""
    from reljudge.io.figures import pyplot, save_figure

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
    return save_figure(fig, path)
