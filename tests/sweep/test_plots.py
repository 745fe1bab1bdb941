"""The sweep's figures as drawn: each heat map's colour scale spans its measure's whole range
(κ and α from −1 to 1, said in the colour bar's label; before, the scale stopped at −0.2 and a
lower value looked like −0.2), and no title reaches past its figure (the bar chart's title was
cut off at one dataset's width)."""

from __future__ import annotations

import numpy as np
import pytest

from _figures import captured, colour_bar_limits, titles_outside

pytest.importorskip("matplotlib")

from reljudge.io.figures import pyplot  # noqa: E402
from reljudge.sweep.analysis import Conventions, analyze  # noqa: E402
from reljudge.sweep.labels import CellLabels  # noqa: E402
from reljudge.sweep.plots import scale_of, write_plots  # noqa: E402

pyplot()  # pyplot's import paid once, when the module is collected

HUMAN = [1, 0, 1, 0, 1, 1, 0, 0, 1, 0]


def _cell(prompt: str, group: str, labels: list[int], model: str) -> CellLabels:
    return CellLabels(
        dataset="dl19-sample",
        model=model,
        task="binary",
        prompt=prompt,
        group=group,
        qids=["1"] * len(labels),
        docids=[f"x{i}" for i in range(len(labels))],
        values=np.array(labels, dtype=float),
        items=len(labels),
    )


@pytest.mark.slow
def test_heat_maps_span_the_whole_range_and_titles_fit(tmp_path, monkeypatch):
    opposite = [1 - v for v in HUMAN]  # κ = −1 with the humans, α = −1 with the other prompt
    cells = [
        _cell("builtin-binary", "builtin", HUMAN, "mock"),
        _cell("terse", "mine", opposite, "mock"),
        _cell("builtin-binary", "builtin", HUMAN, "other"),
        _cell("terse", "mine", opposite, "other"),
    ]
    qrels = {"dl19-sample": {"1": {f"x{i}": 2 * v for i, v in enumerate(HUMAN)}}}
    analysis = analyze(cells, qrels, Conventions())
    assert min(r["value"] for r in analysis.rows) == pytest.approx(-1.0)
    with captured(monkeypatch) as figures:
        written = write_plots(analysis, tmp_path)
    assert {"bars_binary.png", "heatmap_dl19-sample_binary.png"} <= {path.name for path, _ in written}
    assert len(figures) == len(written)
    bars = [c for c in map(colour_bar_limits, figures) if c]
    kappa = [c for (c,) in bars if c[2].startswith("Cohen's κ")]
    alpha = [c for (c,) in bars if c[2].startswith("Krippendorff's α")]
    assert len(kappa) == 1 and len(alpha) == 2  # one heat map; an α matrix per model
    assert all(c[:2] == (-1.0, 1.0) and "−1 to 1" in c[2] for c in kappa + alpha)
    for fig in figures:
        assert titles_outside(fig) == []


def test_every_cell_metric_has_its_full_range():
    assert scale_of("kappa")[:2] == (-1.0, 1.0)
    assert scale_of("agree")[:2] == (0.0, 1.0) and "0 to 1" in scale_of("agree")[3]
