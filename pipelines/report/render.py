"""Renders the report's data to one self-contained HTML file (jinja2, autoescaped) and writes it atomically."""

from __future__ import annotations

import datetime
import math
import os
import uuid

from components.evaluator.report_plots import MAX_CALIBRATION_CLASSES
from pipelines.builtins import DATA_GATE
from pipelines.report.calibration import class_weighted_ece
from pipelines.report.charts import curves_svg, drift_bars_svg, histogram_svg, residuals_svg, split_colour
from pipelines.report.collect import ReportData
from pipelines.report.dag import BOX_HEIGHT, BOX_WIDTH
from pipelines.report.eval_plots import mean_residual
from pipelines.report.slices import slices_view

__all__ = ["render", "write_atomically", "TRAINING_KEYS", "TEMPLATES", "TEMPLATE_FILTERS"]

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")

# Training summary keys shown as the throughput table, with their labels.
TRAINING_KEYS = (
    ("train_steps", "train steps"),
    ("seconds", "fit time (s)"),
    ("examples_per_second", "examples/s (steady state)"),
    ("mean_step_seconds", "mean step (s)"),
    ("input_wait_fraction", "input wait (share of step time)"),
    ("global_batch", "global batch"),
    ("replicas", "replicas"),
    ("strategy", "strategy"),
    ("precision_policy", "precision"),
    ("learning_rate", "learning rate"),
    ("peak_gpu_memory_bytes", "peak GPU memory (bytes)"),
    ("accelerator_hours", "accelerator-hours"),
)


def _number(value) -> str:
    """A compact number (`0.8662`, `25,717`, `1.703e+10`); text as it is; `-` for none."""
    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    if 1000 <= abs(value) < 1e7:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def _share(value) -> str:
    """A share as a percentage (`83.3%`); `-` for none (a row with no examples)."""
    return "-" if value is None else f"{100 * value:.1f}%"


# The filters the report's templates use; the UI, which shows the report's slices page, registers them too.
TEMPLATE_FILTERS = {"g": _number, "share": _share}


def _environment():
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters.update(TEMPLATE_FILTERS)
    return environment


def render(data: ReportData) -> str:
    """The report as HTML: charts inline as SVG, every value from the data or spec escaped.

    Args:
        data: what `collect` gathered.

    Returns:
        The HTML text.
    """
    from markupsafe import Markup

    histograms = {
        f.name: Markup(histogram_svg({s: v.histogram for s, v in f.splits.items() if v.histogram}))
        for f in data.features
        if f.numeric and any(v.histogram for v in f.splits.values())
    }
    curves = {metric: Markup(curves_svg(series)) for metric, series in data.curves.items()}
    residuals = (
        Markup(residuals_svg([(b.mean_prediction, b.mean_label, b.count) for b in data.residuals]))
        if data.residuals
        else None
    )
    span_charts = _span_charts(data)
    pushed_version = os.path.basename(os.path.normpath(data.pushed_path)) if data.pushed_path else None
    return (
        _environment()
        .get_template("report.html.j2")
        .render(
            data=data,
            run=data.run,
            dag=data.dag,
            box_width=BOX_WIDTH,
            box_height=BOX_HEIGHT,
            histograms=histograms,
            curves=curves,
            residuals_chart=residuals,
            mean_residual=mean_residual(data.residuals),
            calibration_ece=class_weighted_ece(data.calibration),
            calibration_skipped=(
                MAX_CALIBRATION_CLASSES
                if not data.calibration and len(data.classes) > MAX_CALIBRATION_CLASSES
                else None
            ),
            calibration_charts=[
                (curve, Markup(residuals_svg([(b.mean_prediction, b.mean_label, b.count) for b in curve.buckets])))
                for curve in data.calibration
                if curve.buckets
            ],
            slices_view=slices_view(data.slices, data.thresholds, data.fairness),
            binary_classes=data.classes if len(data.classes) == 2 else ["0", "1"],
            training_keys=TRAINING_KEYS,
            pushed_version=pushed_version,
            gate_passed=any(n.id == DATA_GATE and n.status in ("executed", "cached") for n in data.dag.nodes),
            gate_failed=bool(data.run.failed and data.run.failed[0] == DATA_GATE),
            span_charts=span_charts,
            split_colours={split: split_colour(split, i) for i, split in enumerate(data.splits)},
            written=datetime.datetime.now().isoformat(timespec="seconds"),
        )
    )


def _span_charts(data: ReportData) -> dict:
    """With spans: `metrics` (one line per gated metric, x = newest span trained on) and `drift` (a bar per
    span pair, the limit dashed), each an `<svg>` or None when there is nothing to draw."""
    from markupsafe import Markup

    gated = sorted({name for point in data.span_metrics for name in point.gated})
    names = gated or sorted({name for point in data.span_metrics for name in point.metrics})
    series = {
        name: [(point.span, point.metrics[name]) for point in data.span_metrics if name in point.metrics]
        for name in names
    }
    series = {name: points for name, points in series.items() if points}
    bars = [(f"{d.previous}→{d.span}", d.distance) for d in data.span_drift]
    return {
        "metrics": Markup(curves_svg(series, xlabel="newest span trained on", integer_x=True)) if series else None,
        "drift": Markup(drift_bars_svg(bars, data.drift_limit)) if bars else None,
        "names": list(series),
    }


def write_atomically(path: str, text: str) -> str:
    """Writes `text` to `path` through a temporary file in the same folder and a rename.

    Args:
        path: the file to write (its folder is created).
        text: the content.

    Returns:
        `path`.
    """
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    # A unique name in the same folder (so the rename is atomic), created with the umask's mode as any file.
    temporary = os.path.join(folder, f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
    try:
        with open(temporary, "x", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise
    return path
