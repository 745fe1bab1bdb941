"""The files of ``judge combine``: the members read from their sources (run directories,
judgments files, qrels-like files, globs), and the consensus written as ``qrels.txt``,
``items.tsv`` and ``combine.json``."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from reljudge.analyses.combine.members import Member
from reljudge.errors import InputError
from reljudge.io.tables import json_ready

if TYPE_CHECKING:
    from reljudge.analyses.combine.pipeline import CombineReport

__all__ = ["load_members", "write_combined"]


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
