"""Checks of a matplotlib figure as drawn (no pixel comparison): the titles that do not fit, the
colour bars' ranges, the texts that overlap; and `captured`, which keeps the figures a plotting
function saves so a test can look at them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def titles(fig: Any) -> list[Any]:
    """The figure's title and its panels' titles (those with text)."""
    found = [getattr(fig, "_suptitle", None)]
    found += [ax.title for ax in fig.axes]
    return [t for t in found if t is not None and t.get_text()]


def drawn(fig: Any) -> Any:
    """The figure drawn on an Agg canvas (a closed figure has lost its own); its renderer."""
    if not hasattr(fig.canvas, "get_renderer"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def titles_outside(fig: Any) -> list[str]:
    """The titles that reach past the figure's edges as drawn (cut off in a file saved as is)."""
    drawn(fig)
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    out = []
    for title in titles(fig):
        ext = title.get_window_extent(renderer)
        if ext.x0 < box.x0 - 0.5 or ext.x1 > box.x1 + 0.5 or ext.y1 > box.y1 + 0.5 or ext.y0 < box.y0 - 0.5:
            out.append(title.get_text())
    return out


def colour_bar_limits(fig: Any) -> list[tuple[float, float, str]]:
    """(low, high, label) of each colour bar of the figure."""
    found = []
    for ax in fig.axes:
        if ax.get_label() == "<colorbar>":
            low, high = sorted(ax.get_ylim())
            found.append((round(low, 6), round(high, 6), ax.get_ylabel()))
    return found


def overlapping(texts: list[Any], renderer: Any) -> list[tuple[str, str]]:
    """Pairs of texts whose boxes overlap as drawn."""
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
    return [
        (a, b) for i, (a, box_a) in enumerate(boxes) for b, box_b in boxes[i + 1 :] if box_a.overlaps(box_b)
    ]


@contextmanager
def captured(monkeypatch: Any) -> Iterator[list[Any]]:
    """The figures saved (``Figure.savefig``, still written) while the block runs."""
    from matplotlib.figure import Figure

    saved: list[Any] = []
    real = Figure.savefig

    def keep(fig: Any, *args: Any, **kwargs: Any) -> Any:
        saved.append(fig)
        return real(fig, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    yield saved
