"""TFMA's binary-classification metrics with a fast path for a plain 0/1 label and one score.

BinaryAccuracy, Precision, Recall, AUC, ConfusionMatrixAtThresholds and
CalibrationPlot read every example through TFMA's general extraction
function, about half of the Evaluator's time on the taxi data (py-spy, x100,
2026-11-26). Here each is TFMA's own class with its combiners swapped for the
fast ones in `compat.tfma.fast_combiners` (TFMA's private combiners
subclassed; that module says what the plain case is and why it needs TFMA's
internals). The accumulators, keys, derived metrics and outputs are TFMA's
own, so the results are the same numbers
(`tests/components/evaluator/test_fast_metrics.py` compares them with TFMA's
classes).

`use_fast_metrics(eval_config)` points the metrics of an EvalConfig at these
classes; the Evaluator executor calls it before TFMA runs. When every metric
is one of them, with one output, no example weights and the overall slice
only, it also marks them `batched`: the Evaluator then leaves out TFMA's
split of each batch into examples (`extractors.custom_extractors`) and the
combiners count a batch's labels and scores with NumPy, TFMA's arithmetic per
bucket and threshold (x100 taxi eval split, one thread: 69.4 -> 39.9 s, the
same metrics). A batch that TFMA's path must read is split into its examples
for it. The calibration plot's sums of scores are added in another order, so
they equal TFMA's to rounding; every other number is the same. Where the
installed TFMA is not the shape `compat.tfma` was written for, the metrics
stay TFMA's own.
"""

from __future__ import annotations

import json

import tensorflow_model_analysis as tfma
from tensorflow_model_analysis.metrics import calibration_plot, confusion_matrix_metrics

from compat.tfma import fast_combiners
from compat.tfma.fast_combiners import FastCombiners
from components.evaluator.eval_config import slices_by_features

__all__ = [
    "FAST_CLASSES",
    "FastAUC",
    "FastBinaryAccuracy",
    "FastCalibrationPlot",
    "FastConfusionMatrixAtThresholds",
    "FastPrecision",
    "FastRecall",
    "batched_metrics",
    "use_fast_metrics",
]


class FastBinaryAccuracy(FastCombiners, confusion_matrix_metrics.BinaryAccuracy):
    """TFMA's BinaryAccuracy with the fast combiner."""


class FastPrecision(FastCombiners, confusion_matrix_metrics.Precision):
    """TFMA's Precision with the fast combiner."""


class FastRecall(FastCombiners, confusion_matrix_metrics.Recall):
    """TFMA's Recall with the fast combiner."""


class FastAUC(FastCombiners, confusion_matrix_metrics.AUC):
    """TFMA's AUC with the fast combiner."""


class FastConfusionMatrixAtThresholds(FastCombiners, confusion_matrix_metrics.ConfusionMatrixAtThresholds):
    """TFMA's ConfusionMatrixAtThresholds with the fast combiner."""


class FastCalibrationPlot(FastCombiners, calibration_plot.CalibrationPlot):
    """TFMA's CalibrationPlot with the fast combiner."""


# TFMA class name -> the class here with the fast combiners.
FAST_CLASSES = {
    cls.__name__.removeprefix("Fast"): cls
    for cls in (
        FastBinaryAccuracy,
        FastPrecision,
        FastRecall,
        FastAUC,
        FastConfusionMatrixAtThresholds,
        FastCalibrationPlot,
    )
}


_FAST_NAMES = frozenset(cls.__name__ for cls in FAST_CLASSES.values())


def _batches_fit(eval_config: tfma.EvalConfig) -> bool:
    """Whether the metrics can take whole batches: every one fast, one output, unweighted, the overall slice only."""
    if slices_by_features(eval_config):
        return False
    options = eval_config.options
    if options.compute_confidence_intervals.value or options.min_slice_size.value > 1:
        return False
    for model in eval_config.model_specs:
        if model.label_keys or model.prediction_keys or model.example_weight_key or model.example_weight_keys:
            return False
    for spec in eval_config.metrics_specs:
        if (
            spec.HasField("binarize")
            or spec.HasField("aggregate")
            or spec.query_key
            or spec.HasField("example_weights")
        ):
            return False
        if any(name for name in spec.output_names) or any(m.class_name not in _FAST_NAMES for m in spec.metrics):
            return False
    return any(spec.metrics for spec in eval_config.metrics_specs)


def use_fast_metrics(eval_config: tfma.EvalConfig) -> tfma.EvalConfig:
    """Points every TFMA metric of `eval_config` that has a fast class here at it (in place); returns the config.

    When every metric then is one of them, with one output, no weights and
    the overall slice only, each also gets `"batched": true`: the metrics take
    whole batches and the Evaluator skips TFMA's split into examples
    (`batched_metrics`). Where this TFMA lacks what the fast combiners use
    (`compat.tfma.fast_combiners.available()`, one log line), the config is
    left as it is.
    """
    if not fast_combiners.available():
        return eval_config
    for spec in eval_config.metrics_specs:
        for metric in spec.metrics:
            if metric.class_name in FAST_CLASSES and not metric.module:
                metric.class_name = FAST_CLASSES[metric.class_name].__name__
                metric.module = __name__
    if _batches_fit(eval_config):
        for spec in eval_config.metrics_specs:
            for metric in spec.metrics:
                metric.config = json.dumps({**json.loads(metric.config or "{}"), "batched": True})
    return eval_config


def batched_metrics(eval_config: tfma.EvalConfig) -> bool:
    """Whether `use_fast_metrics` set every metric of `eval_config` to take whole batches."""
    metrics = [m for spec in eval_config.metrics_specs for m in spec.metrics]
    return bool(metrics) and all(
        m.module == __name__ and json.loads(m.config or "{}").get("batched") is True for m in metrics
    )
