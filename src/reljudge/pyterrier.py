"""PyTerrier bridge (``pip install 'reljudge[pyterrier]'``): judge result frames inside a pipeline,
and use LLM-judged qrels in ``pt.Experiment``.

- `LLMJudge`: a transformer that takes a result frame (``qid``, ``query``, ``docno``, ``text``)
  and returns it with the judge's ``label`` (the method's primary score, NaN where the model gave
  none) and ``judge_status``; with ``scores="expected"`` also ``expected``, the expected grade from
  the log-probabilities (the ``<method>-expected`` score set). It runs `reljudge.run.run_job` on a run directory (``out``), so its
  calls are cached, a re-run costs nothing and an interrupted one resumes; the frame's queries,
  passages and ranking are written under ``out/inputs/`` as the run's input files.
- `judged_qrels`: the qrels of a run directory (or a judgments file) as the ``qid, docno, label``
  frame ``pt.Experiment(..., qrels=...)`` takes.

    >>> judge = LLMJudge("umbrela", "openai/gpt-4o-mini", out="runs/pt-umbrela")
    >>> judged = (bm25 % 10 >> pt.text.get_text(dataset, "text") >> judge)(topics)
    >>> pt.Experiment([bm25, dense], topics, judged_qrels("runs/pt-umbrela"), ["ndcg_cut_10"])

PyTerrier itself is imported only for the base class; nothing here needs Java.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from reljudge.errors import InputError, MissingExtraError

REQUIRED_COLUMNS = ("qid", "query", "docno", "text")


def _pt() -> Any:
    try:
        import pyterrier
    except ImportError as err:
        raise MissingExtraError(
            "the PyTerrier bridge needs python-terrier: pip install 'reljudge[pyterrier]'"
        ) from err
    return pyterrier


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def judged_qrels(source: str | Path, *, method: str | None = None) -> Any:
    """A run directory's labels (its primary score set, as in its ``qrels.txt``) or a qrels file as a
    ``qid, docno, label`` frame for ``pt.Experiment``."""
    import pandas as pd

    scores = _scores(source, method)
    rows = [(qid, docid, grade) for qid, docs in scores.items() for docid, grade in docs.items()]
    return pd.DataFrame(rows, columns=["qid", "docno", "label"])


def _make_transformer_class() -> type:
    pt = _pt()

    class LLMJudge(pt.Transformer):  # type: ignore[name-defined]  # a base class loaded at run time
        """Judge a result frame with one method and model (see the module docstring); any other
        keyword is a `reljudge.run.RunConfig` field (``base_url``, ``concurrency``, ``options``...)."""

        def __init__(self, method: str, model: str, *, out: str | Path, **config: Any) -> None:
            self.method = method
            self.model = model
            self.out = Path(out)
            self.config = dict(config)

        def transform(self, frame: Any) -> Any:
            missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
            if missing:
                raise InputError(
                    f"LLMJudge needs the columns {', '.join(REQUIRED_COLUMNS)}; missing {', '.join(missing)} "
                    "(add the text with pt.text.get_text)"
                )
            result = frame.copy()
            if frame.empty:
                result["label"] = []
                result["judge_status"] = []
                return result
            statuses = judge_frame(frame, self.method, self.model, self.out, **self.config)
            labels = judged_labels(self.out)
            keys = list(zip(frame["qid"].astype(str), frame["docno"].astype(str), strict=True))
            result["label"] = [labels.get(k, math.nan) for k in keys]
            result["judge_status"] = [statuses.get(k, "missing") for k in keys]
            if self.config.get("scores") == "expected":
                expected = judged_labels(self.out, score_set=f"{self.method}-expected")
                result["expected"] = [expected.get(k, math.nan) for k in keys]
            return result

    return LLMJudge


def __getattr__(name: str) -> Any:  # the class is built on first use, so importing needs no PyTerrier
    if name == "LLMJudge":
        cls = _make_transformer_class()
        globals()["LLMJudge"] = cls
        return cls
    raise AttributeError(name)


def write_frame_inputs(frame: Any, directory: Path) -> dict[str, Path]:
    """The frame as a run's input files: ``topics.tsv``, ``corpus.jsonl`` and ``run.txt`` (the
    frame's order within each query is the ranking)."""
    from reljudge.io.atomic import write_text_atomic

    directory.mkdir(parents=True, exist_ok=True)
    topics: dict[str, str] = {}
    texts: dict[str, str] = {}
    ranking: dict[str, list[str]] = {}
    for qid, query, docno, text in zip(
        frame["qid"].astype(str), frame["query"], frame["docno"].astype(str), frame["text"], strict=True
    ):
        if topics.setdefault(qid, _one_line(query)) != _one_line(query):
            raise InputError(f"LLMJudge: query {qid!r} has two different texts in the frame")
        if texts.setdefault(docno, str(text)) != str(text):
            raise InputError(f"LLMJudge: passage {docno!r} has two different texts in the frame")
        docs = ranking.setdefault(qid, [])
        if docno not in docs:
            docs.append(docno)
    paths = {
        "topics": directory / "topics.tsv",
        "corpus": directory / "corpus.jsonl",
        "run": directory / "run.txt",
    }
    write_text_atomic(paths["topics"], "".join(f"{q}\t{t}\n" for q, t in topics.items()))
    write_text_atomic(
        paths["corpus"],
        "".join(json.dumps({"docid": d, "text": t}, ensure_ascii=False) + "\n" for d, t in texts.items()),
    )
    write_text_atomic(
        paths["run"],
        "".join(
            f"{qid} Q0 {docno} {rank} {len(docs) - rank} pyterrier\n"
            for qid, docs in ranking.items()
            for rank, docno in enumerate(docs, start=1)
        ),
    )
    depth = max(len(d) for d in ranking.values())
    paths["depth"] = Path(str(depth))
    return paths


def judge_frame(frame: Any, method: str, model: str, out: Path, **config: Any) -> dict[tuple[str, str], str]:
    """Judge every (qid, docno) of the frame into the run directory ``out``; return each one's status."""
    from reljudge.io.judgments import load_judgments
    from reljudge.run import RunConfig, run_job

    paths = write_frame_inputs(frame, out / "inputs")
    run_config = RunConfig(
        method=method,
        model=model,
        topics=paths["topics"],
        corpus=paths["corpus"],
        pool=f"run:{paths['run']}:{paths['depth']}",
        output=out,
        **config,
    )
    run_job(run_config)
    statuses: dict[tuple[str, str], str] = {}
    for record in load_judgments(out):
        if record.docid is not None and record.docid_b is None:
            statuses[(record.qid, record.docid)] = record.status
    return statuses


def judged_labels(out: Path, *, score_set: str | None = None) -> dict[tuple[str, str], float]:
    """The scores of a run directory (its primary set, or ``score_set``): ``{(qid, docno): score}``;
    a score set the run does not have gives none."""
    try:
        scores = _scores(out, None, score_set)
    except InputError:
        if score_set is None:
            raise
        return {}
    return {(q, d): float(g) for q, docs in scores.items() for d, g in docs.items()}


def _scores(
    source: str | Path, method: str | None, score_set: str | None = None
) -> dict[str, dict[str, float]]:
    """The document scores of a run directory, judgments file or qrels file (no rounding)."""
    from reljudge.export import export_scores, load_judgment_source

    return export_scores(load_judgment_source(source), method=method, score_set=score_set)
