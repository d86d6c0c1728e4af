"""A classifier's calibration for the report: predicted probability against the observed rate, and the ECE.

The Evaluator adds TFMA's `CalibrationPlot` for a binary label
(`components.evaluator.report_plots.CLASS_CALIBRATION`: ten buckets of the
positive class's probability); a plot binarized per class (`class_id` sub
key) is read as that class against the rest. Per bucket TFMA keeps the rows, the summed
labels and the summed predictions; the expected calibration error is the
row-weighted mean gap between a bucket's mean prediction and its mean label:

    ECE = sum over buckets of rows_b / rows * |mean prediction_b - mean label_b|

0 is perfectly calibrated: among rows scored about 0.7, about 70% are positive.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from components.evaluator.report_plots import CLASS_CALIBRATION
from pipelines.report.eval_plots import ResidualBucket

__all__ = ["CalibrationCurve", "calibration_curves", "expected_calibration_error"]


@dataclasses.dataclass
class CalibrationCurve:
    """One class's calibration: its name ('' for a binary label's positive class), buckets and ECE."""

    name: str
    buckets: list[ResidualBucket]
    ece: float | None


def expected_calibration_error(buckets: Sequence[ResidualBucket]) -> float | None:
    """The row-weighted mean |mean prediction - mean label| over the buckets, or None without rows."""
    total = sum(b.count for b in buckets)
    if not total:
        return None
    value = sum(b.count * abs(b.residual) for b in buckets) / total
    return value if math.isfinite(value) else None


def calibration_curves(evaluation_uri: str, classes: Sequence[str] = ()) -> list[CalibrationCurve]:
    """The candidate's calibration per class on the whole eval split; [] when the Evaluator drew none.

    Args:
        evaluation_uri: the Evaluator's `evaluation` artifact folder.
        classes: the label's classes in index order, to name a multi-class label's plots.
    """
    import tensorflow_model_analysis as tfma

    curves = []
    for plots in tfma.load_plots(evaluation_uri):
        if plots.slice_key.single_slice_keys:
            continue
        for entry in plots.plot_keys_and_values:
            key = entry.key
            if key.name != CLASS_CALIBRATION or key.model_name not in ("", "candidate"):
                continue
            class_id = key.sub_key.class_id.value if key.sub_key.HasField("class_id") else None
            name = "" if class_id is None else (classes[class_id] if class_id < len(classes) else str(class_id))
            buckets = [
                ResidualBucket(
                    max(b.lower_threshold_inclusive, 0.0),
                    min(b.upper_threshold_exclusive, 1.0),
                    b.num_weighted_examples.value,
                    b.total_weighted_label.value / b.num_weighted_examples.value,
                    b.total_weighted_refined_prediction.value / b.num_weighted_examples.value,
                )
                for b in entry.value.calibration_histogram_buckets.buckets
                if b.num_weighted_examples.value > 0
            ]
            curves.append(CalibrationCurve(name, buckets, expected_calibration_error(buckets)))
    return sorted(curves, key=lambda c: classes.index(c.name) if c.name in classes else -1)
