"""``judge grids``'s files: the inputs checked against each other, the tables written and printed.

Inputs (formats in `reljudge.io.grids`): `GridInputs` holds what the files say, in memory, with
every reference between files checked and reported at the line that makes it (a grid image
without a vector: the grid's first line; a prompt without a target: its first grid's line; a
preference naming a grid that is not there: the preference's line).

Outputs, in the output directory, every file replaced atomically and all of them computed before
the first is written: ``per_prompt.tsv`` (one row per grid), ``per_system.tsv`` (means over the
prompts, FID over all prompts), ``agreement.tsv`` (with preferences: one row per prompt set and
measure) and ``grids.json`` (the settings, the notes and the three tables). Numbers are written
with 6 decimals, NaN as an empty cell.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from reljudge.analyses.grids.agreement import GridPreference
from reljudge.analyses.grids.evaluate import MEASURES, VARIANTS, GridReport
from reljudge.analyses.text_table import format_table
from reljudge.errors import InputError, clip


@dataclass
class GridInputs:
    """What the input files hold, checked against each other."""

    grids: dict[tuple[str, str], tuple[str, ...]]
    vectors: tuple[list[str], Any]  # (ids, matrix)
    targets: dict[str, np.ndarray]
    salience: dict[str, float] | None
    preferences: list[GridPreference]
    sources: dict[str, str]


def load_inputs(
    grids: str | Path,
    *,
    vectors: tuple[list[str], Any],
    vectors_name: str,
    targets: str | Path | None = None,
    target_embeddings: str | Path | None = None,
    salience: str | Path | None = None,
    preferences: str | Path | None = None,
) -> GridInputs:
    """Read and cross-check the files (module docstring); ``vectors`` = (ids, matrix) of the images."""
    from reljudge.io.grids import (
        read_grids,
        read_preferences,
        read_salience,
        read_target_embeddings,
        read_targets,
    )

    if (targets is None) == (target_embeddings is None):
        raise InputError(
            "give exactly one of --targets FILE (prompt<TAB>image) or --target-embeddings FILE.npy"
        )
    read = read_grids(grids)
    ids, matrix = vectors
    index = {image: i for i, image in enumerate(ids)}
    for key, images in read.grids.items():
        missing = [i for i in images if i not in index]
        if missing:
            raise InputError(
                f"image {clip(missing[0])!r} of the grid of system {clip(key[1])!r} for prompt "
                f"{clip(key[0])!r} has no vector in {vectors_name} ({len(missing)} image(s) of the grid have none)",
                grids,
                read.lines[key],
            )
    if targets is not None:
        target_ids = read_targets(targets)
        target_vectors = {}
        for prompt, images in target_ids.items():
            missing = [i for i in images if i not in index]
            if missing:
                raise InputError(
                    f"target image {clip(missing[0])!r} of prompt {clip(prompt)!r} has no vector in {vectors_name}",
                    targets,
                )
            target_vectors[prompt] = np.asarray(
                [np.asarray(matrix[index[i]], dtype=np.float64) for i in images]
            )
        target_source = str(targets)
    else:
        assert target_embeddings is not None
        target_vectors = read_target_embeddings(target_embeddings)
        target_source = str(target_embeddings)
        width = next(iter(target_vectors.values())).shape[1]
        if width != matrix.shape[1]:
            raise InputError(
                f"target vectors have {width} dimensions, the image vectors of {vectors_name} {matrix.shape[1]}",
                target_embeddings,
            )
    for key in read.grids:
        if key[0] not in target_vectors:
            raise InputError(
                f"prompt {clip(key[0])!r} has no target in {target_source}", grids, read.lines[key]
            )
    sal = None
    if salience is not None:
        sal = read_salience(salience)
        for key, images in read.grids.items():
            lacking = [i for i in images if i not in sal]
            if lacking:
                raise InputError(
                    f"image {clip(lacking[0])!r} of the grid of system {clip(key[1])!r} for prompt "
                    f"{clip(key[0])!r} has no salience in {salience}",
                    grids,
                    read.lines[key],
                )
    prefs: list[GridPreference] = []
    if preferences is not None:
        for p in read_preferences(preferences):
            for system in (p.system_x, p.system_y):
                if (p.prompt, system) not in read.grids:
                    raise InputError(
                        f"no grid of system {clip(system)!r} for prompt {clip(p.prompt)!r} in {grids}",
                        preferences,
                        p.line,
                    )
            prefs.append(GridPreference(p.prompt, p.system_x, p.system_y, p.pref, p.prompt_set))
    sources = {
        "grids": str(grids),
        "vectors": vectors_name,
        "targets": target_source,
        "salience": str(salience) if salience is not None else "",
        "preferences": str(preferences) if preferences is not None else "",
    }
    return GridInputs(read.grids, (list(ids), matrix), target_vectors, sal, prefs, sources)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "" if not math.isfinite(value) else f"{value:.6f}"
    return str(value)


def tsv_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """Rows as TSV with a header (the columns of the first row)."""
    if not rows:
        return ""
    columns = list(rows[0])
    lines = ["\t".join(columns)] + ["\t".join(_cell(row.get(c, "")) for c in columns) for row in rows]
    return "\n".join(lines) + "\n"


def report_data(report: GridReport, sources: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The content of ``grids.json``."""
    return {
        "settings": report.settings,
        "inputs": dict(sources or {}),
        "notes": report.notes,
        "per_system": report.per_system,
        "agreement": report.agreement,
        "per_prompt": report.per_prompt,
    }


def write_outputs(
    out: str | Path, report: GridReport, sources: Mapping[str, str] | None = None
) -> list[Path]:
    """The tables and ``grids.json`` in ``out`` (module docstring); returns the paths written."""
    from reljudge.io.atomic import write_text_atomic
    from reljudge.io.tables import json_ready

    folder = Path(out)
    texts = {
        folder / "per_prompt.tsv": tsv_text(report.per_prompt),
        folder / "per_system.tsv": tsv_text(report.per_system),
    }
    if report.agreement:
        texts[folder / "agreement.tsv"] = tsv_text(report.agreement)
    texts[folder / "grids.json"] = json.dumps(json_ready(report_data(report, sources)), indent=1) + "\n"
    for path, text in texts.items():
        write_text_atomic(path, text)
    return list(texts)


def format_report(report: GridReport) -> str:
    """The printed report: settings, the per-system table, the agreement table."""
    s = report.settings
    lines = [
        f"{s['systems']} system(s), {s['prompts']} prompt(s), grids of k = {s['k']} images; gamma = {s['gamma']}",
        f"relevance f: {s['relevance']}",
        f"trajectories: u = uniform; the others: {s['trajectory_text']}; {s['expectation']}",
        f"ERR stop probability: {s['stop']}; diversity: {s['diversity']}; FID: {s['FID']}",
        "",
        format_table(
            ["system", "prompts", *MEASURES, "FID"],
            [[r["system"], r["prompts"], *(r[m] for m in MEASURES), r["FID"]] for r in report.per_system],
        ),
    ]
    if report.agreement:
        lines += [
            "",
            "agreement with the human preferences (per prompt set):",
            format_table(
                [
                    "set",
                    "measure",
                    "prompts",
                    "prefs",
                    "agree",
                    "share",
                    "ci_low",
                    "ci_high",
                    "human ties",
                    "measure ties",
                ],
                [
                    [
                        r["prompt_set"],
                        r["measure"],
                        r["prompts"],
                        r["preferences"],
                        r["agree"],
                        r["agreement"],
                        r["ci_low"],
                        r["ci_high"],
                        r["human_ties"],
                        r["measure_ties"],
                    ]
                    for r in report.agreement
                ],
            ),
        ]
    lines += [f"note: {note}" for note in report.notes]
    return "\n".join(lines)


__all__ = [
    "VARIANTS",
    "GridInputs",
    "format_report",
    "load_inputs",
    "report_data",
    "tsv_text",
    "write_outputs",
]
