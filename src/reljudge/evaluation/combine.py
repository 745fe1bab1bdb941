"""``judge combine``: an ensemble of judgment sets (prompts, models, runs) -> a consensus set.

Each source (a run directory, a judgments file, a qrels-like file, a glob) is one member: its
primary score set, or its ``<method>-expected`` set with ``scores="expected"``. Labels outside a
given ``scale`` are invalid (dropped and counted: the published releases keep some residue). The
consensus is computed by `reljudge.aggregation.consensus.combine_scores`; this module adds
Krippendorff's α between the members, the provenance of every member (path, set, SHA-256 of the
file) and, with human labels, Cohen's κ of every member and of the consensus.
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from reljudge.aggregation.consensus import Consensus, combine_scores
from reljudge.errors import InputError
from reljudge.io.tables import json_ready

__all__ = ["CombineReport", "Member", "combine", "load_members", "write_combined"]


@dataclass
class Member:
    name: str
    source: str
    set_name: str
    scores: dict[str, dict[str, float]]
    invalid: int = 0
    sha256: str = ""

    @property
    def n_labels(self) -> int:
        return sum(len(d) for d in self.scores.values())


@dataclass
class CombineReport:
    consensus: Consensus
    members: list[Member]
    alpha: dict[str, float]
    #: with human labels: name -> {"binary": κ, "graded": κ or None}; the consensus is "consensus"
    kappa: dict[str, dict[str, Any]] = field(default_factory=dict)
    human_threshold: float | None = None

    def median_member(self, key: str = "binary") -> float:
        values = [k[key] for n, k in self.kappa.items() if n != "consensus" and k.get(key) is not None]
        return statistics.median(values) if values else float("nan")

    def as_dict(self) -> dict[str, Any]:
        c = self.consensus
        return {
            "rule": c.rule,
            "items": len(c.agreement),
            "mean_agreement": c.mean_agreement,
            "unanimous": c.unanimous,
            "alpha": self.alpha,
            "members": [
                {
                    "name": m.name,
                    "source": m.source,
                    "set": m.set_name,
                    "sha256": m.sha256,
                    "labels": m.n_labels,
                    "invalid": m.invalid,
                }
                for m in self.members
            ],
            "kappa": self.kappa,
            "human_threshold": self.human_threshold,
            "median_member_kappa": {k: self.median_member(k) for k in ("binary", "graded")}
            if self.kappa
            else {},
        }


def _digest(source: str) -> str:
    path = Path(source)
    if path.is_dir():
        path = path / "judgments.jsonl"
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def _sets(specs: Sequence[str | Path], duplicates: str) -> list[Any]:
    """The judgment sets of the sources; qrels-like files read with ``duplicates`` (``error``,
    ``last`` or ``max``) for a (qid, docid) listed twice."""
    from reljudge.analyses.inputs import JudgmentSet, _expand, _set_name, load_judgment_sets
    from reljudge.io.judgments import is_judgments_path
    from reljudge.io.trec import OnDuplicate, read_qrels

    if duplicates not in ("error", "last", "max"):
        raise InputError(f"--duplicates must be error, last or max, got {duplicates!r}")
    on_duplicate = cast(OnDuplicate, duplicates)  # one of the three, checked above
    found: list[Any] = []
    for spec in specs:
        for path in _expand(spec):
            if path.is_file() and not is_judgments_path(path):
                found.append(
                    JudgmentSet(_set_name(path), read_qrels(path, on_duplicate=on_duplicate), None, str(path))
                )
            else:
                found.extend(load_judgment_sets([path]))
    return found


def load_members(
    specs: Sequence[str | Path],
    *,
    scores: str = "labels",
    scale: tuple[float, float] | None = None,
    duplicates: str = "error",
) -> list[Member]:
    """One member per source file or run directory (see the module docstring)."""
    if scores not in ("labels", "expected"):
        raise InputError(f"--scores must be labels or expected, got {scores!r}")
    by_source: dict[str, list[Any]] = {}
    for js in _sets(specs, duplicates):
        by_source.setdefault(js.source, []).append(js)
    members: list[Member] = []
    for source, sets in by_source.items():
        if scores == "expected":
            chosen = [s for s in sets if s.name.endswith("-expected")]
            if not chosen:
                raise InputError("no expected-relevance scores (run it with --scores expected)", source)
        else:
            chosen = [s for s in sets if not s.name.endswith("-expected")]
        if len(chosen) > 1:
            names = ", ".join(s.name for s in chosen)
            raise InputError(f"holds several score sets ({names}); give one method per source", source)
        js = chosen[0]
        kept: dict[str, dict[str, float]] = {}
        invalid = 0
        for qid, docs in js.scores.items():
            for docid, value in docs.items():
                if scale is not None and not scale[0] <= value <= scale[1]:
                    invalid += 1
                    continue
                kept.setdefault(qid, {})[docid] = value
        members.append(Member(js.name, source, js.name, kept, invalid, _digest(source)))
    member_names = [m.name for m in members]
    for m in members:
        if member_names.count(m.name) > 1:
            m.name = f"{m.name}@{Path(m.source).parent.name}"
    if len(members) < 2:
        raise InputError("judge combine needs at least two judgment sets")
    return members


def _alpha(consensus: Consensus, members: list[Member]) -> dict[str, float]:
    import numpy as np

    from reljudge.metrics.agreement import krippendorff_alpha

    rows = list(consensus.values.values())
    if not rows:
        return {}
    data = np.array([[math.nan if v is None else v for v in row] for row in rows], dtype=float).T
    integer = bool(np.all(np.isnan(data) | (data == np.round(data))))
    levels = ("nominal", "ordinal", "interval") if integer else ("interval",)
    return {level: krippendorff_alpha(data, level=level) for level in levels}  # type: ignore[arg-type]


def _kappas(
    scores: dict[str, dict[str, float]], human: Any, scale: tuple[float, float] | None = None
) -> dict[str, Any]:
    from reljudge.metrics.base import JudgeLabels
    from reljudge.metrics.kappa import kappa_block

    labels = JudgeLabels(
        human.qrels, scores, None, None, human.unacceptable, human.human_threshold, judge_scale=scale
    )
    block, _ = kappa_block(labels)
    return {
        "pairs": block.get("pairs", 0),
        "binary": block.get("binary"),
        "graded": block.get("graded_unweighted"),
        "judge_threshold": block.get("judge_threshold"),
    }


def combine(
    members: list[Member],
    rule: str = "majority",
    human: Any = None,
    scale: tuple[float, float] | None = None,
) -> CombineReport:
    """The consensus of ``members`` by ``rule``, α between them, and κ against ``human``
    (`reljudge.analyses.inputs.HumanLabels`) when given; float consensus scores (``mean``)
    are cut on the members' ``scale`` (`reljudge.metrics.kappa.scale_threshold`)."""
    try:
        consensus = combine_scores({m.name: m.scores for m in members}, rule)
    except ValueError as err:
        raise InputError(str(err)) from None
    report = CombineReport(consensus, members, _alpha(consensus, members))
    if human is not None:
        report.human_threshold = human.human_threshold
        for m in members:
            report.kappa[m.name] = _kappas(m.scores, human)
        report.kappa["consensus"] = _kappas(consensus.scores, human, scale)
    return report


def summary(report: CombineReport) -> str:
    """The text ``judge combine`` prints."""
    c = report.consensus
    lines = [
        f"consensus ({c.rule}, ties to the lowest label) of {len(report.members)} members over "
        f"{len(c.agreement)} items: mean agreement {c.mean_agreement:.3f}, unanimous {c.unanimous}",
        "Krippendorff's alpha between members: " + ", ".join(f"{k} {v:.3f}" for k, v in report.alpha.items()),
    ]
    invalid = sum(m.invalid for m in report.members)
    if invalid:
        lines.append(f"{invalid} labels outside the scale were left out (invalid)")
    if report.kappa:
        lines.append(
            f"Cohen's kappa against the human labels (relevant: grade >= {report.human_threshold:g})"
        )
        lines.append("member\tlabels\tkappa binary\tkappa graded")

        def fmt(v: Any) -> str:
            return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}"

        for m in report.members:
            k = report.kappa[m.name]
            lines.append(f"{m.name}\t{m.n_labels}\t{fmt(k['binary'])}\t{fmt(k['graded'])}")
        k = report.kappa["consensus"]
        lines.append(
            f"median member\t\t{fmt(report.median_member('binary'))}\t{fmt(report.median_member('graded'))}"
        )
        lines.append(
            f"consensus\t{sum(len(d) for d in c.scores.values())}\t{fmt(k['binary'])}\t{fmt(k['graded'])}"
        )
    return "\n".join(lines)


def write_combined(report: CombineReport, out_dir: str | Path) -> list[Path]:
    """``qrels.txt`` (the consensus), ``items.tsv`` (per item: consensus, members that scored it,
    agreement, each member's value) and ``combine.json`` (rule, α, members with provenance, κ),
    each written atomically."""
    from reljudge.io.atomic import write_text_atomic

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    c = report.consensus

    def num(v: float | None) -> str:
        if v is None:
            return ""
        return str(int(v)) if float(v).is_integer() else repr(float(v))

    qrels = [f"{q} 0 {d} {num(v)}" for q, docs in c.scores.items() for d, v in docs.items()]
    header = "\t".join(["qid", "docid", "consensus", "n", "agreement", *c.members])
    rows = [
        "\t".join(
            [q, d, num(c.scores[q][d]), str(sum(v is not None for v in vals)), f"{c.agreement[(q, d)]:.4f}"]
            + [num(v) for v in vals]
        )
        for (q, d), vals in c.values.items()
    ]
    files = {
        out / "qrels.txt": "\n".join(qrels) + "\n",
        out / "items.tsv": "\n".join([header, *rows]) + "\n",
        out / "combine.json": json.dumps(json_ready(report.as_dict()), indent=1) + "\n",
    }
    for path, text in files.items():
        write_text_atomic(path, text)
    return list(files)
