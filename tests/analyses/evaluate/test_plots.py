"""The figures of ``judge evaluate --plot`` / ``judge plot-summary`` as drawn: in the scatter of
alignment against τ, no point's name overlaps another's and every name lies inside the axes
(before, names of close points were drawn over each other at a fixed offset, and a name near
the right edge ran out of the axes); no title reaches past its figure."""

from __future__ import annotations

import pytest

from _figures import captured, drawn, overlapping, titles_outside

pytest.importorskip("matplotlib")

from reljudge.analyses.evaluate.plots import plot_alignment_vs_agreement  # noqa: E402
from reljudge.io.figures import pyplot  # noqa: E402

pyplot()  # pyplot's import paid once, when the module is collected

#: close points with long names (as nuggets-all / nuggets-weighted on the bundled sample), and
#: one at the right edge
POINTS = [
    ("nuggets-all-strict.dl19", 0.455, 0.714),
    ("nuggets-weighted-strict.dl19", 0.476, 0.714),
    ("nuggets-all.dl19", 0.700, 0.643),
    ("nuggets-weighted.dl19", 0.711, 0.643),
    ("exam-binary.dl19", 0.729, 0.714),
    ("exam-graded-mean.dl19", 0.787, 0.714),
    ("preferences-with-a-long-name.dl19", 0.899, 0.929),
    ("umbrela.dl19", 0.725, 1.0),
]


@pytest.mark.slow
@pytest.mark.parametrize("labels", [("",), ("dl19", "dl20")])
def test_point_names_do_not_overlap_and_stay_inside(tmp_path, monkeypatch, labels):
    rows = [
        {"label": label, "set": name, "macro_agree": x - 0.03 * k, "kendall_tau_b": y - 0.05 * k}
        for k, label in enumerate(labels)
        for name, x, y in POINTS
    ]
    with captured(monkeypatch) as figures:
        plot_alignment_vs_agreement(rows, tmp_path / "a.png")
    (fig,) = figures
    renderer = drawn(fig)
    ax = fig.axes[0]
    names = [t for t in ax.texts if t.get_text()]
    assert len(names) == len(rows)
    assert overlapping(names, renderer) == []
    inside = ax.get_window_extent(renderer).expanded(1.001, 1.001)  # a pixel's rounding
    for name in names:
        box = name.get_window_extent(renderer)
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1, name.get_text()
        assert inside.y0 <= box.y0 and box.y1 <= inside.y1, name.get_text()
    assert titles_outside(fig) == []
