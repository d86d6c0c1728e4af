"""Small charts as inline SVG, drawn with matplotlib's SVG backend (no network, no JavaScript).

Text stays text (`svg.fonttype: none`): the page's own font draws it, and nothing is fetched.
Names from the data are never drawn inside a chart; the HTML around it shows them, escaped.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

__all__ = ["histogram_svg", "curves_svg", "residuals_svg", "drift_bars_svg", "split_colour", "SPLIT_COLOURS"]

SPLIT_COLOURS = {"train": "#1f77b4", "eval": "#ff7f0e"}
_OTHER_COLOURS = ("#2ca02c", "#d62728", "#9467bd", "#8c564b")
_RC = {"svg.fonttype": "none", "font.size": 8, "svg.hashsalt": None}


def split_colour(name: str, index: int) -> str:
    """The colour of split (or series) `name`, the `index`-th drawn in its chart."""
    return SPLIT_COLOURS.get(name, _OTHER_COLOURS[index % len(_OTHER_COLOURS)])


def _few_ticks(axes) -> None:
    """Four ticks a side at most and no top/right frame: quicker to draw and to read."""
    from matplotlib.ticker import MaxNLocator

    axes.xaxis.set_major_locator(MaxNLocator(4))
    axes.yaxis.set_major_locator(MaxNLocator(4))
    axes.spines[["top", "right"]].set_visible(False)


def _to_svg(figure) -> str:
    """The figure as an `<svg>` element (the XML prolog and DOCTYPE cut off, for inlining in HTML)."""
    buffer = io.StringIO()
    # A fixed layout (`bbox_inches="tight"` would draw twice), and no RDF metadata block.
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def histogram_svg(splits: Mapping[str, Sequence[tuple[float, float, float]]], width: float = 3.6) -> str:
    """One numeric feature's histograms, one colour per split (`SPLIT_COLOURS`), as the share of each split's rows.

    The legend is left to the page (one for all histograms).

    Args:
        splits: split name -> buckets `(low, high, count)` (TFDV's standard histogram).
        width: the figure's width in inches.

    Returns:
        An `<svg>` element.
    """
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(_RC):
        figure = Figure(figsize=(width, 1.6))
        figure.subplots_adjust(left=0.16, right=0.97, top=0.95, bottom=0.17)
        axes = figure.subplots()
        for index, (split, buckets) in enumerate(splits.items()):
            total = sum(count for _, _, count in buckets) or 1.0
            lows = [low for low, _, _ in buckets]
            span = (max(high for _, high, _ in buckets) - min(lows)) if buckets else 0.0
            widths = [(high - low) or (span / 50 or 1.0) for low, high, _ in buckets]
            axes.bar(
                lows,
                [count / total for _, _, count in buckets],
                width=widths,
                align="edge",
                alpha=0.55,
                color=split_colour(split, index),
                label=split,
            )
        axes.ticklabel_format(axis="x", style="sci", scilimits=(-4, 5), useOffset=False)
        _few_ticks(axes)
        return _to_svg(figure)


def curves_svg(
    series: Mapping[str, Sequence[tuple[float, float]]],
    xlabel: str = "step",
    width: float = 4.2,
    integer_x: bool = False,
) -> str:
    """Lines of (x, y) points, one per series, with a marker at each point.

    Args:
        series: label -> points, e.g. `{"train": [(50, 0.55), (100, 0.41)], "validation": [(200, 0.26)]}`.
        xlabel: the x axis's label.
        width: the figure's width in inches.
        integer_x: ticks on whole numbers only (x counts spans, not steps).

    Returns:
        An `<svg>` element.
    """
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(_RC):
        figure = Figure(figsize=(width, 2.2))
        figure.subplots_adjust(left=0.15, right=0.97, top=0.95, bottom=0.2)
        axes = figure.subplots()
        for index, (label, points) in enumerate(series.items()):
            xs = [x for x, _ in points]
            ys = [y for _, y in points]
            axes.plot(xs, ys, marker="o", markersize=3, color=split_colour(label, index), label=label)
        axes.set_xlabel(xlabel)
        axes.legend(frameon=False)
        _few_ticks(axes)
        if integer_x:
            from matplotlib.ticker import MaxNLocator

            axes.xaxis.set_major_locator(MaxNLocator(4, integer=True))
        return _to_svg(figure)


def residuals_svg(points: Sequence[tuple[float, float, float]], width: float = 4.2) -> str:
    """Mean label against mean prediction, one marker per prediction bucket (area by its count), and y = x.

    A marker above the diagonal is a bucket where the model under-predicts; below, it over-predicts.

    Args:
        points: `(mean prediction, mean label, count)` per bucket.
        width: the figure's width in inches.

    Returns:
        An `<svg>` element.
    """
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(_RC):
        figure = Figure(figsize=(width, 2.8))
        figure.subplots_adjust(left=0.15, right=0.97, top=0.95, bottom=0.16)
        axes = figure.subplots()
        values = [v for x, y, _ in points for v in (x, y)]
        low, high = (min(values), max(values)) if values else (0.0, 1.0)
        axes.plot([low, high], [low, high], linestyle="--", linewidth=1, color="#888888", label="label = prediction")
        largest = max((count for _, _, count in points), default=1.0) or 1.0
        axes.scatter(
            [x for x, _, _ in points],
            [y for _, y, _ in points],
            s=[12 + 88 * count / largest for _, _, count in points],
            color=SPLIT_COLOURS["eval"],
            alpha=0.8,
            label="bucket (area: examples)",
        )
        axes.set_xlabel("mean prediction")
        axes.set_ylabel("mean label")
        axes.legend(frameon=False, loc="upper left")
        _few_ticks(axes)
        return _to_svg(figure)


def drift_bars_svg(bars: Sequence[tuple[str, float]], limit: float | None, width: float = 4.2) -> str:
    """One bar per pair of spans (its distance), a dashed line at `limit`; bars above it in red.

    Args:
        bars: `(label, distance)` per span pair, e.g. `[("1→2", 0.04), ("2→3", 0.31)]`; labels are span numbers.
        limit: `data.checks.drift`, or None when it is not set (no line).
        width: the figure's width in inches.

    Returns:
        An `<svg>` element.
    """
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    with matplotlib.rc_context(_RC):
        figure = Figure(figsize=(width, 2.2))
        figure.subplots_adjust(left=0.15, right=0.97, top=0.92, bottom=0.2)
        axes = figure.subplots()
        over = _OTHER_COLOURS[1]
        colours = [over if limit is not None and value > limit else SPLIT_COLOURS["train"] for _, value in bars]
        axes.bar(range(len(bars)), [value for _, value in bars], color=colours, width=0.6)
        axes.set_xticks(range(len(bars)), [label for label, _ in bars])
        if limit is not None:
            axes.axhline(limit, linestyle="--", linewidth=1, color="#888888", label=f"limit {limit:g}")
            axes.legend(frameon=False)
        axes.set_xlabel("previous span → span")
        axes.yaxis.set_major_locator(MaxNLocator(4))
        axes.spines[["top", "right"]].set_visible(False)
        return _to_svg(figure)
