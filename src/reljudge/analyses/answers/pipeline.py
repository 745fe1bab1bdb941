"""``judge answers similarity`` and ``judge evaluate --answers`` from paths: generated answers
against judged passages, what the commands and the Python API call.

`answer_similarity_paths` reads the qrels, the answer files (TREC RAG 2024 or TSV,
`reljudge.io.answers`) and the passage texts, takes the vectors from a ``.npy`` file or encodes
passages and answers with the encoder of ``judge fd`` (cached on disk, `reljudge.vectors`), and
computes (`reljudge.analyses.answers.similarity`, `reljudge.analyses.answers.common_scale`,
`reljudge.analyses.fd.per_run.fd_answers`): the cross-grade validation of the encoder, per-grade
answer similarity, FD of each system's answers (k = 1) and the common-scale score of answers
and, with ``runs``, of retrieval runs (with nDCG@10, its τ-b and FD@k of the runs against the
same reference set); with ``anchors`` (runs read by `load_anchor_runs`), the no-judgment
anchors. The result is the content of ``similarity.json``, which
`reljudge.analyses.answers.files` prints and writes.

`answer_ranking` ranks generators and runs together by their common-scale score (``judge
evaluate --answers``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from reljudge.analyses.answers.common_scale import MEASURE
from reljudge.errors import InputError


def answer_similarity_paths(
    qrels: str | Path | dict[str, dict[str, float]],
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
    from reljudge.analyses.answers.similarity import answer_grades, answer_id, cross_grade, pick_targets
    from reljudge.analyses.fd.per_run import fd_answers, fd_docids, fd_runs
    from reljudge.analyses.inputs import read_human
    from reljudge.io.answer_sets import read_answers_by_system
    from reljudge.vectors.embedding_cache import vector_source

    say = notify or (lambda _line: None)
    if (encoder is None) == (embeddings is None):
        raise InputError("give exactly one of --encoder NAME or --embeddings FILE")
    if anchors and not answer_files:
        raise InputError("--anchors scores answers: give answer files too")
    if not answer_files and runs is None:
        raise InputError("nothing to score: give answer files, --runs DIR, or both")
    human = read_human(qrels)
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
        scale = common_scale_section(human, answers, run_map, source, texts, min_grade=min_grade, macro=macro)
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
    from reljudge.analyses.answers.common_scale import run_top_passages
    from reljudge.analyses.answers.similarity import top_grade_targets

    return list(dict.fromkeys([*run_top_passages(runs, top_grade_targets(human), depth=2),
                               *run_top_passages(anchors, answer_qids, depth=1)]))  # fmt: skip


def common_scale_section(
    human, answers, runs, source, texts, *, min_grade: float = 2, macro: bool = False
) -> dict[str, Any]:
    """``{"systems": {name: {"kind", score, pairs, ..., nDCG@10}}, "agreement": τ-b of the runs'
    scores with nDCG@10, "average": ...}``."""
    from reljudge.analyses.answers.common_scale import (
        generator_scale_scores,
        run_scale_scores,
        scale_agreement,
    )
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
    from reljudge.analyses.answers.common_scale import anchor_scores, ordering_stability

    table = anchor_scores(answers, anchors, source, texts)
    return {
        "scores": table.scores,
        "mean": table.mean(),
        "topics": table.topics,
        "missing": table.missing,
        "stability": ordering_stability(table.scores),
    }


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
    from reljudge.analyses.answers.similarity import answer_id, top_grade_targets
    from reljudge.io.answer_sets import read_answers_by_system
    from reljudge.vectors.embedding_cache import vector_source

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
        scale = common_scale_section(human, answers, runs, source, texts, macro=macro)
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
