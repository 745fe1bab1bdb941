"""Alignment against agreement (thesis Fig. 4.5, spec S8c): for each judgment set of one or more
``judge evaluate`` results, the macro "Agree" share (the mean of the BvU, AvU and BvA agree
fractions) against the Kendall τ-b of its system ranking with the human one; one labelled point per
set, one colour per dataset label (`summary_points`, `plot_alignment_vs_agreement`)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reljudge.errors import InputError

COLUMNS: tuple[str, ...] = ("label", "set", "macro_agree", "kendall_tau_b")
_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]


def summary_points(evaluation: Mapping[str, Any], label: str) -> list[dict[str, Any]]:
    """One row per set of an ``evaluation.json`` content: ``label``, ``set``, ``macro_agree``,
    ``kendall_tau_b`` (NaN when the set was evaluated without runs)."""
    rows = []
    for entry in evaluation.get("sets", []):
        macro = (entry.get("alignment") or {}).get("macro") or {}
        tau = (entry.get("ranking_agreement") or {}).get("kendall_tau_b")
        agree = macro.get("agree_frac")
        rows.append(
            {
                "label": label,
                "set": entry.get("name", ""),
                "macro_agree": float(agree) if agree is not None else math.nan,
                "kendall_tau_b": float(tau) if tau is not None else math.nan,
            }
        )
    return rows


def read_points(paths: Sequence[str | Path]) -> list[dict[str, Any]]:
    """The points of several ``evaluation.json`` files (or directories holding one); each file's
    label is its ``settings.label`` (``judge evaluate --label``), else its directory's name."""
    rows: list[dict[str, Any]] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            path = path / "evaluation.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise InputError(f"cannot read an evaluation.json: {err}", path) from None
        if not isinstance(data, dict) or not isinstance(data.get("sets"), list):
            raise InputError("not a judge evaluate result (no 'sets' list)", path)
        label = (data.get("settings") or {}).get("label") or path.parent.name
        rows += summary_points(data, str(label))
    return rows


def _short(name: str) -> str:
    """A set name without its dataset suffix (``umbrela.dl21`` -> ``umbrela``)."""
    stem, dot, tail = name.rpartition(".")
    return stem if dot and tail.lower().startswith(("dl", "antique", "trec")) else name


def plot_alignment_vs_agreement(rows: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
    """Scatter of macro agree (x) against τ-b (y), a labelled point per set, a colour per label.
    Sets without a τ (no runs) are left out; raises ValueError when none has one."""
    from reljudge.io.figures import pyplot, save_figure

    points = [
        r for r in rows if r["kendall_tau_b"] == r["kendall_tau_b"] and r["macro_agree"] == r["macro_agree"]
    ]
    if not points:
        raise ValueError("no judgment set has both a macro agree share and a τ (evaluate with --runs)")
    plt = pyplot()
    labels = list(dict.fromkeys(r["label"] for r in points))
    fig, ax = plt.subplots(figsize=(7.5, 5.5))
    for i, label in enumerate(labels):
        mine = [r for r in points if r["label"] == label]
        colour = _COLOURS[i % len(_COLOURS)]
        ax.scatter(
            [r["macro_agree"] for r in mine],
            [r["kendall_tau_b"] for r in mine],
            s=36,
            color=colour,
            label=label,
        )
        offset = (4, 3) if i % 2 == 0 else (4, -10)  # a second label's names below its points
        for r in mine:
            ax.annotate(
                _short(r["set"]),
                (r["macro_agree"], r["kendall_tau_b"]),
                textcoords="offset points",
                xytext=offset,
                fontsize=7,
                color=colour,
            )
    ax.set_xlabel('macro "Agree" (mean of BvU, AvU, BvA agree shares)')
    ax.set_ylabel("Kendall τ-b with the human system ranking")
    ax.set_title("Alignment with human labels against system-ranking agreement", fontsize=10)
    ax.grid(color="0.9")
    ax.set_axisbelow(True)
    if len(labels) > 1 or labels[0]:
        ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
    plt.close(fig)
    return Path(path)


def write_summary(rows: Sequence[Mapping[str, Any]], out_dir: str | Path, *, plot: bool = True) -> list[Path]:
    """``alignment_vs_agreement.csv`` and (with ``plot``) ``.png`` in ``out_dir``."""
    from reljudge.io.atomic import write_text_atomic
    from reljudge.io.tables import csv_text

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "alignment_vs_agreement.csv"]
    write_text_atomic(written[0], csv_text([{k: r[k] for k in COLUMNS} for r in rows]))
    if plot:
        written.append(plot_alignment_vs_agreement(rows, out / "alignment_vs_agreement.png"))
    return written
