"""Orchestration behind ``judge evaluate``: load human qrels, one or more judgment sets and
optionally a directory of runs; compute alignment, κ/α, per-run compatibility, the human
measure, and the agreement of the two system rankings; write JSON + CSV.

Judgment inputs (each path may be a file, a directory or a glob):

- a qrels-like file ``qid iter docid score`` (score int or float) — one set;
- a reljudge judgments JSONL file, or a run directory holding ``judgments.jsonl`` — one set
  per score set its records support (`reljudge.aggregation.sets.score_sets`), named like the
  published files: ``binary``, ``umbrela`` (any pointwise method), ``pairwise`` (win counts;
  the comparisons are kept as preferences for alignment, unlisted documents won nothing),
  ``exam-binary`` or ``exam-graded-max`` and ``exam-graded-mean``, ``nuggets-all`` and the
  five other nugget scores. Failed records are never labels;
- a directory without ``judgments.jsonl``: every regular, non-hidden file in it, one set each.

Judgment topics that are not in the human qrels are dropped (and counted): the published
nugget files, for instance, accumulate topics across years.
"""

from __future__ import annotations

import fnmatch
import glob
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from reljudge.errors import InputError
from reljudge.io.atomic import write_text_atomic
from reljudge.io.tables import csv_text, json_ready
from reljudge.metrics.agreement import (
    binarize,
    cohen_kappa,
    confusion_matrix,
    krippendorff_alpha,
    paired_labels,
)
from reljudge.metrics.alignment import COMPARISONS, AlignmentResult, human_alignment, preference_alignment
from reljudge.metrics.compatibility import DEFAULT_DEPTH, DEFAULT_P, Compatibility
from reljudge.metrics.ranking import bootstrap_ranking_agreement, ranking_agreement

if TYPE_CHECKING:
    from reljudge.records import Judgment

Scores = dict[str, dict[str, float]]
QRELS_SUFFIXES = (".qrels", ".txt", ".tsv", ".gz")


@dataclass
class JudgmentSet:
    """One judge's labels: pointwise scores and, for pairwise judges, the preference records."""

    name: str
    scores: Scores
    preferences: list[tuple[str, str, str, int]] | None = None
    source: str = ""
    missing: float | None = None  # score of a human-judged document the set does not list
    dropped_topics: int = 0

    @property
    def n_labels(self) -> int:
        return sum(len(d) for d in self.scores.values())


def _set_name(path: Path) -> str:
    name = path.name
    for suffix in (".gz",) + QRELS_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


def _expand(spec: str | Path) -> list[Path]:
    text = str(spec)
    if any(ch in text for ch in "*?["):
        matches = sorted(Path(p) for p in glob.glob(text))
        if not matches:
            raise InputError(f"no file matches {text!r}")
        return matches
    path = Path(text)
    if not path.exists():
        raise InputError("file not found", path)
    return [path]


def sets_from_judgments(records: Iterable[Judgment], name: str, source: str = "") -> list[JudgmentSet]:
    """Judgment sets from reljudge `Judgment` records: one per score set the records support
    (`reljudge.aggregation.sets.score_sets`: pointwise labels, pairwise win counts, the EXAM
    and nugget scores), named ``name`` when there is one set and ``name:<set>`` otherwise. A
    pairwise set keeps its comparisons for preference alignment; documents it does not list won
    nothing. Failed records are never labels; sets without any label are left out."""
    from reljudge.aggregation.sets import score_sets

    try:
        found = score_sets(records)
    except ValueError as err:
        raise InputError(f"cannot aggregate the judgments: {err}", source or None) from None
    found = {n: s for n, s in found.items() if any(s.scores.values())}
    out = []
    for set_name, result in found.items():
        label = name if len(found) == 1 else f"{name}:{set_name}"
        prefs = result.details.get("preferences")
        if prefs is not None:
            out.append(JudgmentSet(label, result.scores, list(prefs), source, missing=0))
        else:
            out.append(JudgmentSet(label, result.scores, None, source))
    return out


def load_judgment_sets(specs: Sequence[str | Path], *, missing_zero: Sequence[str] = ()) -> list[JudgmentSet]:
    """Load judgment sets from files, directories or globs (see the module docstring).

    ``missing_zero``: glob patterns of set names whose unlisted documents score 0 (e.g.
    ``preferences*``: win-count files list only documents that won).
    """
    from reljudge.io.judgments import JUDGMENTS_FILE, is_judgments_path, load_judgments
    from reljudge.io.trec import read_qrels

    sets: list[JudgmentSet] = []
    for spec in specs:
        for path in _expand(spec):
            if path.is_dir() and not (path / JUDGMENTS_FILE).exists():
                files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
                if not files:
                    raise InputError("directory holds no judgment files", path)
            else:
                files = [path]
            for f in files:
                if is_judgments_path(f):
                    name = f.name if f.is_dir() else _set_name(Path(f.name.rsplit(".", 1)[0]))
                    found = sets_from_judgments(load_judgments(f), name, str(f))
                    if not found:
                        raise InputError("no usable judgments (no record with status ok gives a score)", f)
                    sets.extend(found)
                else:
                    sets.append(JudgmentSet(_set_name(f), read_qrels(f), None, str(f)))
    names = [s.name for s in sets]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise InputError(f"two judgment sets share the name {sorted(dup)[0]!r}; rename one of the files")
    for s in sets:
        if any(fnmatch.fnmatch(s.name, pat) for pat in missing_zero):
            s.missing = 0.0
    return sets


def load_runs(path: str | Path) -> dict[str, object]:
    """Every run file in a directory (``.gz`` allowed), keyed by run name (the runid column);
    see `reljudge.io.trec.read_runs_dir`."""
    from reljudge.io.trec import read_runs_dir

    return dict(read_runs_dir(path))


def restrict(scores: Mapping[str, Mapping[str, float]], topics: set[str]) -> tuple[Scores, int]:
    kept = {q: dict(d) for q, d in scores.items() if q in topics}
    return kept, len(scores) - len(kept)


def auto_threshold(values: np.ndarray, human_grades: np.ndarray, human_threshold: float) -> tuple[float, str]:
    """The judge-side binarisation threshold: 1 for 0/1 labels, the human threshold for labels
    on the human integer scale, otherwise any positive score (``> 0``)."""
    uniq = set(np.unique(values).tolist())
    if uniq <= {0.0, 1.0}:
        return 1.0, ">= 1"
    lo, hi = float(human_grades.min()), float(human_grades.max())
    if all(float(v).is_integer() and lo <= v <= hi for v in uniq):
        return human_threshold, f">= {human_threshold:g}"
    return float(np.nextafter(0.0, 1.0)), "> 0"


@dataclass
class SetReport:
    name: str
    source: str
    n_labels: int
    dropped_topics: int
    alignment: AlignmentResult
    kappa: dict[str, float | str | int] = field(default_factory=dict)
    confusion: dict = field(default_factory=dict)
    compatibility: dict[str, dict[str, float]] = field(default_factory=dict)  # run -> qid -> value
    ranking: dict[str, float | int] = field(default_factory=dict)


@dataclass
class Report:
    measure: str
    p: float
    sets: list[SetReport]
    human_measure: dict[str, dict[str, float]] = field(default_factory=dict)  # run -> qid -> value
    settings: dict = field(default_factory=dict)

    def mean_measure(self) -> dict[str, float]:
        return {r: float(np.mean(list(v.values()))) if v else math.nan for r, v in self.human_measure.items()}

    def as_dict(self) -> dict:
        human = self.mean_measure()
        out = {
            "settings": self.settings,
            "measure": self.measure,
            "p": self.p,
            "human_measure": human,
            "sets": [],
        }
        for s in self.sets:
            out["sets"].append(
                {
                    "name": s.name,
                    "source": s.source,
                    "labels": s.n_labels,
                    "dropped_topics": s.dropped_topics,
                    "alignment": s.alignment.as_dict(),
                    "kappa": s.kappa,
                    "confusion": s.confusion,
                    "compatibility": {
                        run: {"mean": float(np.mean(list(v.values()))) if v else None, "topics": len(v)}
                        for run, v in s.compatibility.items()
                    },
                    "ranking_agreement": s.ranking,
                }
            )
        return json_ready(out)


def _kappa_block(
    qrels: Scores, js: JudgmentSet, human_threshold: float, judge_threshold: float | None
) -> tuple[dict, dict]:
    _, human, judge = paired_labels(qrels, js.scores, missing=js.missing)
    if human.size == 0:
        return {"pairs": 0}, {}
    if judge_threshold is None:
        thr, thr_text = auto_threshold(judge, human, human_threshold)
    else:
        thr, thr_text = judge_threshold, f">= {judge_threshold:g}"
    hb, jb = binarize(human, human_threshold), binarize(judge, thr)
    block: dict = {
        "pairs": int(human.size),
        "human_threshold": f">= {human_threshold:g}",
        "judge_threshold": thr_text,
        "binary": cohen_kappa(hb, jb),
        "binary_alpha_nominal": krippendorff_alpha(np.vstack([hb, jb]).astype(float), level="nominal"),
    }
    cats, m = confusion_matrix(hb, jb, labels=[0, 1])
    confusion = {"binary": {"labels": [int(c) for c in cats], "matrix": m.tolist()}}
    lo, hi = float(human.min()), float(human.max())
    on_scale = all(float(v).is_integer() and lo <= v <= hi for v in np.unique(judge).tolist())
    if on_scale and np.unique(judge).size > 2:
        labels = sorted(set(np.unique(human).tolist()) | set(np.unique(judge).tolist()))
        for w in (None, "linear", "quadratic"):
            block[f"graded_{w or 'unweighted'}"] = cohen_kappa(human, judge, weights=w, labels=labels)
        block["graded_alpha_ordinal"] = krippendorff_alpha(np.vstack([human, judge]), level="ordinal")
        block["graded_alpha_interval"] = krippendorff_alpha(np.vstack([human, judge]), level="interval")
        cats, m = confusion_matrix(human, judge, labels=labels)
        confusion["graded"] = {"labels": [float(c) for c in cats], "matrix": m.tolist()}
    return block, confusion


def evaluate(
    qrels: Mapping[str, Mapping[str, float]],
    sets: Sequence[JudgmentSet],
    runs: Mapping[str, Mapping[str, Mapping[str, float]]] | None = None,
    *,
    measure: str = "ndcg_cut_10",
    p: float = DEFAULT_P,
    depth: int = DEFAULT_DEPTH,
    unacceptable: float = 0,
    human_threshold: float = 2,
    judge_threshold: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Report:
    """Compute everything ``judge evaluate`` reports (see the module docstring)."""
    from reljudge.metrics.measures import system_measures

    qrels = {q: dict(d) for q, d in qrels.items()}
    topics = set(qrels)
    report = Report(
        measure,
        p,
        [],
        settings={
            "unacceptable": unacceptable,
            "human_threshold": human_threshold,
            "judge_threshold": judge_threshold if judge_threshold is not None else "auto",
            "depth": depth,
            "n_boot": n_boot,
            "seed": seed,
            "ranking": "system means: compatibility over topics with a positive judgment; measure over the run's topics with qrels",
        },
    )
    if runs:
        report.human_measure = system_measures(qrels, runs, measure)
    positions = None  # run -> qid -> docid -> rank, shared by all sets
    for js in sets:
        scores, dropped = restrict(js.scores, topics)
        js = JudgmentSet(js.name, scores, js.preferences, js.source, js.missing, dropped)
        if js.preferences is not None:
            prefs = [r for r in js.preferences if r[0] in topics]
            alignment = preference_alignment(qrels, prefs, unacceptable=unacceptable)
        else:
            alignment = human_alignment(qrels, scores, unacceptable=unacceptable, missing=js.missing)
        kappa, confusion = (
            _kappa_block(qrels, js, human_threshold, judge_threshold) if js.preferences is None else ({}, {})
        )
        rep = SetReport(js.name, js.source, js.n_labels, dropped, alignment, kappa, confusion)
        if runs:
            scorer = Compatibility(scores, p=p, depth=depth)
            if positions is None:
                positions = {name: scorer.positions(run) for name, run in runs.items()}
            rep.compatibility = {name: scorer.score_positions(positions[name]).per_topic for name in runs}
            compat_mean = {r: float(np.mean(list(v.values()))) for r, v in rep.compatibility.items() if v}
            human_mean = {r: v for r, v in report.mean_measure().items() if not math.isnan(v)}
            if len(set(compat_mean) & set(human_mean)) >= 2:
                interval = bootstrap_ranking_agreement(
                    report.human_measure, rep.compatibility, "kendall", n_boot=n_boot, seed=seed
                )
                rep.ranking = {
                    "runs": len(set(compat_mean) & set(human_mean)),
                    "kendall_tau_b": ranking_agreement(human_mean, compat_mean, "kendall"),
                    "kendall_ci_low": interval.low,
                    "kendall_ci_high": interval.high,
                    "spearman": ranking_agreement(human_mean, compat_mean, "spearman"),
                    "tau_ap": ranking_agreement(human_mean, compat_mean, "tau_ap"),
                    "rbo_p0.9": ranking_agreement(human_mean, compat_mean, "rbo", p=0.9),
                }
        report.sets.append(rep)
    return report


def table_rows(report: Report) -> dict[str, list[dict]]:
    """The CSV tables: alignment, kappa, ranking agreement, per-run compatibility, human measure."""
    alignment, kappa, ranking, compat = [], [], [], []
    for s in report.sets:
        row: dict = {"set": s.name, "missing": s.alignment.missing}
        for comp in COMPARISONS:
            c = s.alignment.counts[comp]
            a, t, d = c.fractions()
            row.update(
                {f"{comp}_agree": a, f"{comp}_tie": t, f"{comp}_disagree": d, f"{comp}_pairs": c.total}
            )
        a, t, d = s.alignment.macro
        row.update({"macro_agree": a, "macro_tie": t, "macro_disagree": d})
        alignment.append(row)
        if s.kappa:
            kappa.append({"set": s.name, **s.kappa})
        if s.ranking:
            ranking.append({"set": s.name, **s.ranking})
        for run, values in s.compatibility.items():
            compat.append(
                {
                    "set": s.name,
                    "run": run,
                    "compatibility": float(np.mean(list(values.values()))) if values else math.nan,
                    "topics": len(values),
                }
            )
    human = [
        {"run": r, report.measure: v, "topics": len(report.human_measure[r])}
        for r, v in report.mean_measure().items()
    ]
    return {
        "alignment": alignment,
        "kappa": kappa,
        "ranking": ranking,
        "compatibility": compat,
        "measure": human,
    }


def write_report(report: Report, out_dir: str | Path) -> list[Path]:
    """Write ``evaluation.json`` and one CSV per table into ``out_dir``; return the paths."""
    out_dir = Path(out_dir)
    texts = {out_dir / "evaluation.json": json.dumps(report.as_dict(), indent=1) + "\n"}
    for name, rows in table_rows(report).items():
        if rows:
            texts[out_dir / f"{name}.csv"] = csv_text(rows)
    for path, text in texts.items():  # everything is rendered before the first file is written
        write_text_atomic(path, text)
    return list(texts)


def _fmt(v: object, digits: int = 3) -> str:
    if isinstance(v, float):
        return "-" if math.isnan(v) else f"{v:.{digits}f}"
    return str(v)


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[str(h) for h in headers]] + [[_fmt(v) for v in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def summary(report: Report) -> str:
    """Human-readable tables of the report."""
    parts = []
    rows = []
    for s in report.sets:
        r = [s.name]
        for comp in COMPARISONS:
            a, t, d = s.alignment.fractions(comp)
            r.append(f"{_fmt(100 * a, 1)}/{_fmt(100 * t, 1)}/{_fmt(100 * d, 1)}")
        a, t, d = s.alignment.macro
        r.append(f"{_fmt(100 * a, 1)}/{_fmt(100 * t, 1)}/{_fmt(100 * d, 1)}")
        rows.append(r)
    parts.append(
        "Human alignment, % agree/tie/disagree\n" + format_table(["set", "BvU", "AvU", "BvA", "macro"], rows)
    )
    rows = [
        [
            s.name,
            s.kappa.get("judge_threshold", "-"),
            s.kappa.get("binary", math.nan),
            s.kappa.get("graded_unweighted", math.nan),
            s.kappa.get("graded_linear", math.nan),
            s.kappa.get("graded_quadratic", math.nan),
            s.kappa.get("graded_alpha_ordinal", math.nan),
        ]
        for s in report.sets
        if s.kappa.get("pairs")
    ]
    if rows:
        thr = report.settings.get("human_threshold")
        parts.append(
            f"Cohen's kappa (human relevant: grade >= {thr:g})\n"
            + format_table(
                ["set", "judge rel.", "binary", "graded", "linear", "quadratic", "alpha ord."], rows
            )
        )
    rows = [
        [
            s.name,
            s.ranking["runs"],
            s.ranking["kendall_tau_b"],
            f"[{_fmt(s.ranking['kendall_ci_low'])}, {_fmt(s.ranking['kendall_ci_high'])}]",
            s.ranking["spearman"],
            s.ranking["tau_ap"],
            s.ranking["rbo_p0.9"],
        ]
        for s in report.sets
        if s.ranking
    ]
    if rows:
        parts.append(
            f"System ranking: {report.measure} (human qrels) vs compatibility (p={report.p:g})\n"
            + format_table(["set", "runs", "tau-b", "95% CI", "spearman", "tau_ap", "rbo"], rows)
        )
    return "\n\n".join(parts)
