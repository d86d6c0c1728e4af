"""What the run report draws from the Evaluator: confusion matrix and calibration of a classifier, a regression's buckets.

These are added to the EvalConfig as one more `MetricsSpec` with no threshold, so they gate nothing:
the verdict reads only thresholds and double-valued metrics (`verdict.candidate_metrics`), and
neither is one. Both reuse a pass TFMA already makes over the eval split. A NaN score would stop TFMA's calibration
histogram (`int(nan)`); the histogram combiners of `compat.tfma.fast_combiners` count it below every
bucket instead, and the report leaves that bucket out (`pipelines/report/calibration.py`);
`nan_score_rows` counts those rows for the verdict.

- binary label: `ConfusionMatrixAtThresholds` at 0.5 (TP/FP/TN/FN), named `CONFUSION_MATRIX`, and a
  `CalibrationPlot` of the probability in ten buckets of [0, 1], named `CLASS_CALIBRATION`;
- multi-class (up to `MAX_CALIBRATION_CLASSES` classes): a `CalibrationPlot` per class, that class's
  probability against the rest (TFMA's `binarize` class_ids: sub key `class_id`), also named
  `CLASS_CALIBRATION`; a label with more classes gets none (the report says why). The spec's own
  `confusion_matrix` metric is the table;
- regression: a `CalibrationPlot` over the eval labels' range (per prediction bucket, the total
  label, total prediction and count), named `CALIBRATION`.

    >>> spec = report_metrics_spec("regression", 0, (25.0, 346.0))
    >>> spec.metrics[0].class_name
    'CalibrationPlot'
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # TFMA is imported where a spec is built, so the report can read the names cheaply.
    import tensorflow_model_analysis as tfma

__all__ = [
    "CONFUSION_MATRIX",
    "CALIBRATION",
    "CLASS_CALIBRATION",
    "THRESHOLD",
    "CALIBRATION_BUCKETS",
    "MAX_CALIBRATION_CLASSES",
    "label_range",
    "nan_score_rows",
    "report_metrics_spec",
]

CONFUSION_MATRIX = "report_confusion_matrix"
CALIBRATION = "report_calibration"
CLASS_CALIBRATION = "report_class_calibration"
THRESHOLD = 0.5
CALIBRATION_BUCKETS = 10
# A label with more classes gets no calibration plots: one histogram pass per class, and a page of curves.
MAX_CALIBRATION_CLASSES = 20


def label_range(labels: Sequence[float]) -> Optional[tuple[float, float]]:
    """(lowest, highest) of the eval labels, or None when there are none or they are not finite numbers.

    Args:
      labels: the eval split's transformed labels (`trivial_baseline.read_eval_labels`).

    Returns:
      The range the calibration buckets span; a single value is widened by 0.5 each side.
    """
    import numpy as np

    values = np.asarray(labels, dtype=np.float64).reshape(-1)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None
    low, high = float(values.min()), float(values.max())
    return (low - 0.5, high + 0.5) if low == high else (low, high)


def report_metrics_spec(
    task: str, num_classes: int, labels_span: Optional[tuple[float, float]] = None
) -> Optional[tfma.MetricsSpec]:
    """The report's extra metrics and plots for a label, or None when the label gets none.

    Args:
      task: `classification` or `regression`.
      num_classes: the label's number of classes (`eval_config.num_classes_of`; 0 for regression).
      labels_span: for regression, the eval labels' (lowest, highest) (`label_range`); None: no plot.

    Returns:
      A `tfma.MetricsSpec` without thresholds, or None.
    """
    import tensorflow_model_analysis as tfma

    calibration = {"name": CLASS_CALIBRATION, "num_buckets": CALIBRATION_BUCKETS, "left": 0.0, "right": 1.0}
    if task == "classification" and num_classes <= 2:
        config = {"name": CONFUSION_MATRIX, "thresholds": [THRESHOLD]}
        return tfma.MetricsSpec(
            metrics=[
                tfma.MetricConfig(class_name="ConfusionMatrixAtThresholds", config=json.dumps(config)),
                tfma.MetricConfig(class_name="CalibrationPlot", config=json.dumps(calibration)),
            ]
        )

    if task == "classification" and num_classes <= MAX_CALIBRATION_CLASSES:
        return tfma.MetricsSpec(
            metrics=[tfma.MetricConfig(class_name="CalibrationPlot", config=json.dumps(calibration))],
            binarize=tfma.BinarizationOptions(class_ids={"values": list(range(num_classes))}),
        )
    if task == "regression" and labels_span is not None:
        left, right = labels_span
        config = {"name": CALIBRATION, "num_buckets": CALIBRATION_BUCKETS, "left": left, "right": right}
        return tfma.MetricsSpec(metrics=[tfma.MetricConfig(class_name="CalibrationPlot", config=json.dumps(config))])
    return None


def nan_score_rows(evaluation_uri: str) -> tuple[int, int]:
    """(rows whose score is NaN, rows) of the eval split, read from the report's calibration plots.

    A NaN score lands in a calibration bucket whose summed score is NaN
    (`compat.tfma.fast_combiners`); a multi-class label's count is the largest
    over its classes. (0, 0) when the Evaluator drew no calibration plot.
    """
    import tensorflow_model_analysis as tfma

    nan_rows, rows = 0.0, 0.0
    for plots in tfma.load_plots(evaluation_uri):
        if plots.slice_key.single_slice_keys:
            continue
        for entry in plots.plot_keys_and_values:
            key = entry.key
            if key.name not in (CLASS_CALIBRATION, CALIBRATION) or key.model_name not in ("", "candidate"):
                continue
            buckets = entry.value.calibration_histogram_buckets.buckets
            nan_rows = max(
                nan_rows,
                sum(
                    b.num_weighted_examples.value
                    for b in buckets
                    if math.isnan(b.total_weighted_refined_prediction.value)
                ),
            )
            rows = max(rows, sum(b.num_weighted_examples.value for b in buckets))
    return int(nan_rows), int(rows)
