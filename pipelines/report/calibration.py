"""A classifier's calibration for the report: predicted probability against the observed rate, and the ECE.

The Evaluator adds TFMA's `CalibrationPlot` for a binary label
(`components.evaluator.report_plots.CLASS_CALIBRATION`: ten buckets of the
positive class's probability); a plot binarized per class (`class_id` sub
key) is read as that class against the rest. Per bucket TFMA keeps the rows, the summed
labels and the summed predictions; the expected calibration error is the
row-weighted mean gap between a bucket's mean prediction and its mean label:

    ECE = sum over buckets of rows_b / rows * |mean prediction_b - mean label_b|

0 is perfectly calibrated: among rows scored about 0.7, about 70% are positive.

A multi-class label gets one curve per class (that class against the rest) and one
ECE over the label, `class_weighted_ece`: each class's ECE weighted by its eval rows
(a class's rows are the summed labels of its curve). Rows whose score was NaN are in a
bucket whose summed score is NaN (`compat.tfma.fast_combiners`): that bucket is left
out of the curve and its rows counted in `left_out`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from components.evaluator.report_plots import CLASS_CALIBRATION
from pipelines.report.eval_plots import ResidualBucket, finite_sums

__all__ = ["CalibrationCurve", "calibration_curves", "class_weighted_ece", "expected_calibration_error"]


@dataclasses.dataclass
class CalibrationCurve:
    """One class's calibration: its name ('' for a binary label's positive class), buckets and ECE.

    `left_out` counts the rows of buckets left out because their summed score or label is not finite.
    """

    name: str
    buckets: list[ResidualBucket]
    ece: float | None
    left_out: float = 0.0

    @property
    def positives(self) -> float:
        """The curve's rows of its class: the summed labels over its buckets."""
        return sum(b.count * b.mean_label for b in self.buckets)


def expected_calibration_error(buckets: Sequence[ResidualBucket]) -> float | None:
    """The row-weighted mean |mean prediction - mean label| over the buckets, or None without rows."""
    total = sum(b.count for b in buckets)
    if not total:
        return None
    value = sum(b.count * abs(b.residual) for b in buckets) / total
    return value if math.isfinite(value) else None


def class_weighted_ece(curves: Sequence[CalibrationCurve]) -> float | None:
    """A multi-class label's ECE: the classes' ECEs weighted by each class's eval rows; None for one curve.

    None also when a class has no ECE or no class has rows.
    """
    if len(curves) < 2 or any(c.ece is None for c in curves):
        return None
    total = sum(c.positives for c in curves)
    if not total:
        return None
    value = sum(c.positives * c.ece for c in curves) / total
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
            histogram = [
                b for b in entry.value.calibration_histogram_buckets.buckets if b.num_weighted_examples.value > 0
            ]
            buckets = [
                ResidualBucket(
                    max(b.lower_threshold_inclusive, 0.0),
                    min(b.upper_threshold_exclusive, 1.0),
                    b.num_weighted_examples.value,
                    b.total_weighted_label.value / b.num_weighted_examples.value,
                    b.total_weighted_refined_prediction.value / b.num_weighted_examples.value,
                )
                for b in histogram
                if finite_sums(b)
            ]
            left_out = sum(b.num_weighted_examples.value for b in histogram if not finite_sums(b))
            curves.append(CalibrationCurve(name, buckets, expected_calibration_error(buckets), left_out))
    return sorted(curves, key=lambda c: classes.index(c.name) if c.name in classes else -1)
