"""Figures: the one way reljudge loads matplotlib and writes a figure (every analysis, the sweep
report).

- `pyplot`: ``matplotlib.pyplot`` on the Agg backend, imported when a figure is asked for (the
  extra ``plot``); a missing matplotlib is a `MissingExtraError` naming the extra;
- `fit_titles`: the figure's title and its panels' titles wrapped to the width they have (a title
  wider than its figure is cut off in the file; one wider than its panel runs into the next);
- `save_figure`: a figure written atomically (never half a file), in the format its suffix names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reljudge.errors import MissingExtraError


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend; `MissingExtraError` when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingExtraError(
            "plots need matplotlib; install it with: pip install 'reljudge[plot]'"
        ) from None
    return plt


#: at most this share of the figure's width for its title (a little margin each side)
_TITLE_SHARE = 0.96


def _wrapped(text: str, chars: int) -> str:
    """``text`` with each of its lines wrapped at ``chars`` characters (at least 12)."""
    import textwrap

    return "\n".join("\n".join(textwrap.wrap(line, max(12, chars)) or [""]) for line in text.split("\n"))


def _room(fig: Any, ax: Any, panels: list[Any]) -> float:
    """The width a panel's title may take (pixels): centred on the panel, up to the nearest panel
    beside it in the same row (or the figure's edge) on either side."""
    box = ax.bbox
    left, right = fig.bbox.width * (1 - _TITLE_SHARE) / 2, fig.bbox.width * (1 + _TITLE_SHARE) / 2
    for other in panels:
        if other is ax:
            continue
        ob = other.bbox
        if ob.y1 <= box.y0 or ob.y0 >= box.y1:  # not in the same row
            continue
        if ob.x1 <= box.x0 + 1:
            left = max(left, ob.x1)
        elif ob.x0 >= box.x1 - 1:
            right = min(right, ob.x0)
    centre = (box.x0 + box.x1) / 2
    return max(2 * min(centre - left, right - centre), box.width, 1.0)


def _titles(fig: Any) -> list[tuple[Any, float]]:
    """The figure's title and its panels' titles, each with the width it may take (pixels)."""
    found = []
    suptitle = getattr(fig, "_suptitle", None)
    if suptitle is not None and suptitle.get_text():
        found.append((suptitle, fig.bbox.width * _TITLE_SHARE))
    # the panels a title must not run into (a colour bar's panel has no title above it)
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.axison and ax.get_label() != "<colorbar>"]
    for ax in fig.axes:
        for title in (ax.title, getattr(ax, "_left_title", None), getattr(ax, "_right_title", None)):
            if title is not None and title.get_text() and title.get_visible():
                found.append((title, _room(fig, ax, panels)))
    return found


def fit_titles(fig: Any, *, relayout: bool = True) -> None:
    """Wrap the figure's title (``suptitle``) to the figure's width and each panel's title to its
    panel's width, as the figure's renderer measures them. With ``relayout`` the figure is laid
    out again after each pass (``tight_layout``, unless it has a layout engine of its own such as
    ``layout="constrained"``, which lays it out when drawn). Call it when the panels are drawn,
    just before saving."""
    tight = relayout and fig.get_layout_engine() is None
    original: dict[int, str] = {}
    chars: dict[int, int] = {}
    for _ in range(6):
        if tight:
            fig.tight_layout()
        fig.draw_without_rendering()  # lays the texts out (and runs a layout engine), no pixels
        renderer = fig.canvas.get_renderer()
        changed = False
        for text, room in _titles(fig):
            width = text.get_window_extent(renderer).width
            if width <= room:
                continue
            key = id(text)
            source = original.setdefault(key, text.get_text())
            longest = max(len(line) for line in text.get_text().split("\n"))
            chars[key] = min(chars.get(key, longest), int(longest * room / width)) - 1
            wrapped = _wrapped(source, chars[key])
            if wrapped != text.get_text():
                text.set_text(wrapped)
                changed = True
        if not changed:
            break


def save_figure(fig: Any, path: str | Path, *, dpi: int = 120, tight: bool = True) -> Path:
    """Write ``fig`` to ``path`` atomically, in the format its suffix names (PNG by default)."""
    from reljudge.io.atomic import atomic_write

    path = Path(path)
    with atomic_write(path, mode="wb") as handle:
        fig.savefig(
            handle,
            format=path.suffix.lstrip(".") or "png",
            dpi=dpi,
            bbox_inches="tight" if tight else None,
        )
    return path
