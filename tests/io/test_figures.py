"""`reljudge.io.figures.fit_titles`: a title wider than its figure or its panel is wrapped until
it fits, as the renderer measures it; a title that fits is left as it is."""

from __future__ import annotations

import pytest

from _figures import titles_outside

pytest.importorskip("matplotlib")

from reljudge.io.figures import fit_titles, pyplot  # noqa: E402

plt = pyplot()  # pyplot's import (about a second) paid once, when the module is collected

LONG = "per-prompt agreement with humans (dashed: the model's mean over a prompt group) " * 2


@pytest.mark.slow  # four layouts of a two-panel figure: about a second on a loaded machine
def test_a_title_wider_than_the_figure_is_wrapped_to_fit():
    fig, axes = plt.subplots(1, 2, figsize=(5, 3))
    fig.suptitle(LONG, fontsize=11)
    for ax in axes:
        ax.set_title("a panel title far longer than the panel under it is wide", fontsize=10)
    assert titles_outside(fig)  # as drawn before: cut off at the figure's edges
    fit_titles(fig)
    assert titles_outside(fig) == []
    renderer = fig.canvas.get_renderer()
    left, right = (ax.title.get_window_extent(renderer) for ax in axes)
    assert not left.overlaps(right)  # neither runs into its neighbour
    assert fig._suptitle.get_text().replace("\n", " ") == LONG.strip()  # wrapped, not cut
    plt.close(fig)


def test_titles_that_fit_are_left_alone():
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.set_title("short")
    fig.suptitle("a short figure title")
    fit_titles(fig)
    assert ax.get_title() == "short" and fig._suptitle.get_text() == "a short figure title"
    plt.close(fig)


def test_a_title_over_a_single_panel_may_use_the_figures_width():
    """A heat map's panel is narrower than its title, but nothing is beside it: one line."""
    fig, ax = plt.subplots(figsize=(6, 3.6))
    image = ax.imshow([[0.1, 0.2]], vmin=-1, vmax=1)
    fig.colorbar(image, ax=ax, label="scale")
    ax.set_title("dl19-sample binary: kappa by prompt and model", fontsize=10)
    fit_titles(fig)
    assert "\n" not in ax.get_title() and titles_outside(fig) == []
    plt.close(fig)
