"""The Evaluator's report plots, read back from its `evaluation` artifact: a binary confusion matrix, or residuals.

The Evaluator adds them ungated (`components/evaluator/report_plots.py`); this module turns TFMA's
protos into what the page draws: TP/FP/TN/FN with their rates, and per prediction bucket the mean
label against the mean prediction.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from components.evaluator.report_plots import CALIBRATION, CONFUSION_MATRIX

__all__ = ["BinaryConfusion", "ResidualBucket", "binary_confusion", "finite_sums", "mean_residual", "residual_buckets"]


def _rate(part: float, whole: float) -> float | None:
    return part / whole if whole else None


@dataclasses.dataclass(frozen=True)
class BinaryConfusion:
    """A binary label's confusion matrix at one threshold on the predicted probability (counts are weighted)."""

    threshold: float
    true_positives: float
    false_positives: float
    true_negatives: float
    false_negatives: float

    @property
    def rows(self) -> list[list[tuple[float, float | None]]]:
        """Rows actual (negative, positive), columns predicted (negative, positive): (count, share of the row)."""
        negatives = self.true_negatives + self.false_positives
        positives = self.false_negatives + self.true_positives
        return [
            [
                (self.true_negatives, _rate(self.true_negatives, negatives)),
                (self.false_positives, _rate(self.false_positives, negatives)),
            ],
            [
                (self.false_negatives, _rate(self.false_negatives, positives)),
                (self.true_positives, _rate(self.true_positives, positives)),
            ],
        ]

    @property
    def precision(self) -> float | None:
        """Share of predicted positives that are positive."""
        return _rate(self.true_positives, self.true_positives + self.false_positives)


@dataclasses.dataclass(frozen=True)
class ResidualBucket:
    """One bucket of predictions: its bounds, weighted count, and mean label and prediction in it."""

    low: float
    high: float
    count: float
    mean_label: float
    mean_prediction: float

    @property
    def residual(self) -> float:
        """Mean prediction - mean label: above 0 the model over-predicts in this bucket."""
        return self.mean_prediction - self.mean_label


def _overall_slice(entries):
    """The unsliced result of TFMA's `load_metrics` / `load_plots` output."""
    return [entry for entry in entries if not entry.slice_key.single_slice_keys]


def binary_confusion(evaluation_uri: str) -> BinaryConfusion | None:
    """The candidate's binary confusion matrix (`report_confusion_matrix`), or None when the Evaluator made none.

    Args:
        evaluation_uri: the Evaluator's `evaluation` artifact folder.

    Returns:
        The matrix at the report's threshold (0.5).
    """
    import tensorflow_model_analysis as tfma

    for metrics in _overall_slice(tfma.load_metrics(evaluation_uri)):
        for entry in metrics.metric_keys_and_values:
            key = entry.key
            if key.name != CONFUSION_MATRIX or key.model_name not in ("", "candidate") or key.is_diff:
                continue
            matrices = entry.value.confusion_matrix_at_thresholds.matrices
            if matrices:
                m = matrices[0]
                return BinaryConfusion(
                    m.threshold, m.true_positives, m.false_positives, m.true_negatives, m.false_negatives
                )
    return None


def residual_buckets(evaluation_uri: str) -> list[ResidualBucket]:
    """The candidate's non-empty prediction buckets (`report_calibration`), lowest first; [] without the plot.

    A bucket holding NaN predictions (its sums are NaN: `compat.tfma.fast_combiners`) is left out.

    Args:
        evaluation_uri: the Evaluator's `evaluation` artifact folder.

    Returns:
        One bucket per prediction range that holds examples (the outer two are open-ended: -inf / inf).
    """
    import tensorflow_model_analysis as tfma

    for plots in _overall_slice(tfma.load_plots(evaluation_uri)):
        for entry in plots.plot_keys_and_values:
            key = entry.key
            if key.name != CALIBRATION or key.model_name not in ("", "candidate"):
                continue
            return [
                ResidualBucket(
                    b.lower_threshold_inclusive,
                    b.upper_threshold_exclusive,
                    b.num_weighted_examples.value,
                    b.total_weighted_label.value / b.num_weighted_examples.value,
                    b.total_weighted_refined_prediction.value / b.num_weighted_examples.value,
                )
                for b in entry.value.calibration_histogram_buckets.buckets
                if b.num_weighted_examples.value > 0 and finite_sums(b)
            ]
    return []


def finite_sums(bucket) -> bool:
    """Whether a TFMA calibration bucket's summed score and label are finite (NaN scores make them NaN)."""
    return math.isfinite(bucket.total_weighted_refined_prediction.value) and math.isfinite(
        bucket.total_weighted_label.value
    )


def mean_residual(buckets: Sequence[ResidualBucket]) -> float | None:
    """Mean prediction - mean label over every example (the model's bias), or None without buckets."""
    total = sum(b.count for b in buckets)
    if not total:
        return None
    value = sum(b.count * b.residual for b in buckets) / total
    return value if math.isfinite(value) else None
