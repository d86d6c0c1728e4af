"""The blessing verdict and its reasons, written next to the blessing.

Every verdict names why: the thresholds that failed (value against bound),
the trivial baseline a spec without thresholds was held to, or a metric that
came out NaN. `verdict.json` in the blessing folder holds
`{"blessed": bool, "reasons": [str, ...]}`; the run summary prints it.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any, Optional

from components.evaluator.eval_config import Baseline
from components.evaluator.slice_results import slice_key_name

__all__ = [
    "VERDICT_FILE",
    "candidate_metrics",
    "confusion_matrix",
    "explain",
    "read_verdict",
    "write_verdict",
    "describe_failure",
]

VERDICT_FILE = "verdict.json"


def candidate_metrics(evaluation_uri: str) -> dict[str, float]:
    """Spec metric name -> the candidate's value on the whole eval split.

    Per-class metrics are named `<metric>@<class>`; aggregated ones (`macro_auc`) by their own name.
    """
    import tensorflow_model_analysis as tfma

    result: dict[str, float] = {}
    for metrics in tfma.load_metrics(evaluation_uri):
        if metrics.slice_key.single_slice_keys:
            continue
        for entry in metrics.metric_keys_and_values:
            key = entry.key
            if key.model_name not in ("", "candidate") or key.is_diff:
                continue
            if key.HasField("sub_key") and "@" not in key.name:
                continue
            if entry.value.HasField("double_value"):
                result[key.name] = entry.value.double_value.value
    return result


def confusion_matrix(evaluation_uri: str, num_classes: int) -> Optional[list[list[int]]]:
    """The `confusion_matrix` plot as rows (actual class) of counts per predicted class, or None without one.

    Args:
      evaluation_uri: the Evaluator's `evaluation` artifact folder.
      num_classes: the label's number of classes (the matrix is num_classes x num_classes).
    """
    import tensorflow_model_analysis as tfma

    for plots in tfma.load_plots(evaluation_uri):
        if plots.slice_key.single_slice_keys:
            continue
        for entry in plots.plot_keys_and_values:
            if entry.key.name != "confusion_matrix" or entry.key.model_name not in ("", "candidate"):
                continue
            matrices = entry.value.multi_class_confusion_matrix_at_thresholds.matrices
            if not matrices:
                continue
            rows = [[0] * num_classes for _ in range(num_classes)]
            for cell in matrices[0].entries:
                if 0 <= cell.actual_class_id < num_classes and 0 <= cell.predicted_class_id < num_classes:
                    rows[cell.actual_class_id][cell.predicted_class_id] = int(round(cell.num_weighted_examples))
            return rows
    return None


def describe_failure(failure, slice_key=None) -> str:
    """One failed TFMA threshold (`MetricValidationResult.failures[i]`) as a sentence.

    On a slice (`slice_key` of `metric_validations_per_slice`) the sentence names it:
    `accuracy on payment_type=Cash is 0.7100, below the minimum 0.8000`.
    """
    name = failure.metric_key.name
    value = failure.metric_value.double_value.value
    threshold = failure.metric_threshold
    where = slice_key_name(slice_key) if slice_key is not None else ""
    if where:
        name = f"{name} on {where}"
    if failure.metric_key.is_diff:
        allowed = threshold.change_threshold.absolute.value
        against = "the last blessed model on the same slice" if where else "the last blessed model"
        return f"{name} changed by {value:+.4f} against {against}; allowed at worst {allowed:+.4f} (max_regression)"
    bounds = threshold.value_threshold
    verb = f"{name} is {value:.4f}," if where else f"{name} = {value:.4f} is"
    if bounds.HasField("lower_bound") and not value >= bounds.lower_bound.value:
        return f"{verb} below the minimum {bounds.lower_bound.value:.4f}"
    if bounds.HasField("upper_bound") and not value <= bounds.upper_bound.value:
        return f"{verb} above the maximum {bounds.upper_bound.value:.4f}"
    return f"{name} = {value:.4f} fails its threshold ({failure.message or 'no detail from TFMA'})"


def _non_finite(metrics: dict[str, float], gated: frozenset[str]) -> list[str]:
    """Reasons for non-finite metrics that void a blessing.

    A per-class metric that is not gated may be NaN legitimately (precision of
    a class the model never predicts); any other NaN or inf means the labels or
    the scores were not finite, and no threshold on it can be trusted.
    """
    return [
        f"{name} is {value} on the eval split: the labels or the model's scores are not finite "
        "(NaN/inf cells in the data?). Expected a finite value. Fix or drop those cells and rerun"
        for name, value in sorted(metrics.items())
        if not math.isfinite(value) and ("@" not in name or name in gated)
    ]


def explain(
    validation, metrics: dict[str, float], baseline: Optional[Baseline], gated: frozenset[str] = frozenset()
) -> tuple[bool, list[str]]:
    """The verdict and its reasons.

    Args:
      validation: TFMA's `ValidationResult`, or None when TFMA validated nothing (no thresholds at all).
      metrics: the candidate's metrics (`candidate_metrics`).
      baseline: the trivial baseline used as the threshold when the spec declares none.
      gated: the metric names a threshold applies to.

    Returns:
      (blessed, reasons): never an empty list of reasons.
    """
    non_finite = _non_finite(metrics, gated)
    if validation is None:
        return False, non_finite or [
            "no thresholds were checked: the evaluation had nothing to gate on. "
            "Add `evaluation.thresholds` (e.g. `accuracy: {min: 0.8}`)"
        ]
    failures = [
        describe_failure(f, per_slice.slice_key)
        for per_slice in validation.metric_validations_per_slice
        for f in per_slice.failures
    ]
    blessed = bool(validation.validation_ok) and not non_finite
    if baseline is not None:
        value = metrics.get(baseline.metric)
        shown = f"{value:.4f}" if value is not None else "missing"
        verb = "beat" if blessed else "did not beat"
        note = f": {baseline.note}" if baseline.note else ""
        reasons = [
            f"no thresholds declared: {baseline.metric} {shown} {verb} the {baseline.name} "
            f"{baseline.value:.4f} on the eval split{note}"
        ]
        return blessed, reasons + non_finite
    reasons = failures + non_finite
    if not validation.validation_ok and not reasons:
        missing = [str(s) for s in validation.missing_slices]
        reasons.append(
            "TFMA did not validate the model"
            + (f" (slices with no examples: {missing})" if missing else "")
            + "; see the Evaluator's log"
        )
    if blessed:
        reasons = ["all thresholds met"]
    return blessed, reasons


def write_verdict(blessing_uri: str, blessed: bool, reasons: list[str], extra: Optional[dict[str, Any]] = None) -> None:
    """Writes `verdict.json` into the blessing folder."""
    with open(os.path.join(blessing_uri, VERDICT_FILE), "w", encoding="utf-8") as handle:
        json.dump({"blessed": blessed, "reasons": reasons, **(extra or {})}, handle, indent=1)


def read_verdict(blessing_uri: str) -> Optional[dict[str, Any]]:
    """The verdict written by `write_verdict`, or None for a blessing made without it."""
    path = os.path.join(blessing_uri, VERDICT_FILE)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)
