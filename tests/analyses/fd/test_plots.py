"""``fd_bootstrap.png``'s title names only the intervals its panels draw (before, it named
bootstrap bars with ``--bootstrap 0``, when none were drawn), and it fits the figure."""

from __future__ import annotations

import math

import pytest

from _figures import titles_outside

pytest.importorskip("matplotlib")

from reljudge.analyses.fd.per_run import FDReport, FDResult  # noqa: E402
from reljudge.analyses.fd.plots import bootstrap_figure  # noqa: E402
from reljudge.analyses.fd.variants import FDVariantsReport  # noqa: E402
from reljudge.io.figures import pyplot  # noqa: E402
from reljudge.metrics.ranking import Interval  # noqa: E402

plt = pyplot()  # pyplot's import paid once, when the module is collected


def _report(with_intervals: bool) -> FDVariantsReport:
    runs = {
        f"r{i}": FDResult(
            1.0 + i,
            10,
            10,
            ["q"],
            interval=Interval(1.0 + i, 0.5 + i, 1.5 + i, 10) if with_intervals else None,
        )
        for i in range(4)
    }
    human = {f"r{i}": 0.6 - 0.1 * i for i in range(4)}
    fd = FDReport(runs, "nDCG@10", human, {}, {"k": 10})
    half = 0.05 if with_intervals else math.nan
    intervals = {
        r: {"measure": v, "measure_ci_low": v - half, "measure_ci_high": v + half} for r, v in human.items()
    }
    settings = {"level": 0.95, "n_boot": 1000 if with_intervals else 0}
    return FDVariantsReport({"FD@10": fd}, "nDCG@10", human, intervals, [], settings)


def test_without_intervals_the_title_names_none():
    fig = bootstrap_figure(_report(with_intervals=False))
    title = fig._suptitle.get_text()
    assert "bootstrap" not in title.replace("--bootstrap", "") and "jackknife" not in title
    assert "no intervals" in title
    assert not any(c.get_segments() for ax in fig.axes for c in ax.collections)  # indeed no lines
    assert titles_outside(fig) == []
    plt.close(fig)


def test_with_intervals_the_title_says_how_each_was_made_and_fits():
    fig = bootstrap_figure(_report(with_intervals=True))
    title = " ".join(fig._suptitle.get_text().split("\n"))
    assert "percentile bootstrap, 1000 resamples" in title and "delete-one-topic jackknife" in title
    assert all(any(c.get_segments() for c in ax.collections) for ax in fig.axes)  # lines in each panel
    assert titles_outside(fig) == []
    plt.close(fig)
