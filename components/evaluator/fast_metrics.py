"""TFMA's binary-classification metrics with a per-example fast path for a plain 0/1 label and one score.

TFMA computes BinaryAccuracy, Precision, Recall and the report's confusion
matrix from a binary confusion-matrix combiner, and AUC and calibration plots
from a calibration-histogram combiner. Both combiners read every example
through `metric_util.to_label_prediction_example_weight`, a general function
(model and output lookups, sub keys, top k, class weights, label vocabularies,
fractional labels) that was about half of the Evaluator's time on the taxi
data (py-spy, x100, 2026-11-26).

Here each such metric is TFMA's own class with its combiners swapped for
subclasses whose `add_input` reads the label and the score directly when the
case is the plain one, and calls TFMA's `add_input` otherwise:
- the combiner: no output name, no sub key, no aggregation, no class
  weights, not example-weighted, no example ids, TFMA's own extraction
  function (one model, or a candidate and its baseline, each read under its
  own name);
- the example: a numeric label of one value that is 0 or 1 (any finite value
  where the histogram does not split fractional labels), a score of one
  finite number (under the model spec's `prediction_key` when the model's
  outputs are a dict).
The accumulators, keys, derived metrics and outputs are TFMA's own, so the
results are the same numbers (`tests/components/evaluator/test_fast_metrics.py`
compares them with TFMA's classes).

`use_fast_metrics(eval_config)` points the metrics of an EvalConfig at these
classes; the Evaluator executor calls it before TFMA runs.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
import tensorflow_model_analysis as tfma
from tensorflow_model_analysis.metrics import (
    binary_confusion_matrices,
    calibration_histogram,
    calibration_plot,
    confusion_matrix_metrics,
    metric_types,
    metric_util,
)

__all__ = [
    "FAST_CLASSES",
    "FastAUC",
    "FastBinaryAccuracy",
    "FastCalibrationPlot",
    "FastConfusionMatrixAtThresholds",
    "FastPrecision",
    "FastRecall",
    "plain_label_and_score",
    "use_fast_metrics",
]

_NUMERIC_KINDS = frozenset("biuf")


def _model_spec(eval_config: Any, model_name: str) -> Optional[Any]:
    """The model spec TFMA reads for `model_name` ('' names the only model), or None."""
    specs = list(eval_config.model_specs) if eval_config is not None else []
    for spec in specs:
        if (spec.name if len(specs) > 1 else "") == model_name:
            return spec
    return None


def _one_number(value: Any) -> Optional[float]:
    """The single finite number `value` holds (a numeric ndarray of one item), or None."""
    if type(value) is not np.ndarray or value.size != 1 or value.dtype.kind not in _NUMERIC_KINDS:
        return None
    number = float(value.item())
    return number if math.isfinite(number) else None


def plain_label_and_score(
    element: Any, prediction_key: str, zero_or_one: bool, model_name: str = ""
) -> Optional[tuple[float, float]]:
    """(label, score) of one example in the plain case, or None where TFMA's general path must read it.

    Args:
      element: TFMA's `StandardMetricInputs` of one example.
      prediction_key: the model spec's prediction key ('' when unset).
      zero_or_one: require the label to be exactly 0 or 1 (TFMA splits any other label into weighted halves).
      model_name: the model's name when the EvalConfig has several (a candidate and its baseline), else ''.
    """
    prediction = element.prediction
    label = element.label
    if model_name:
        if not isinstance(prediction, dict) or model_name not in prediction:
            return None
        prediction = prediction[model_name]
        if isinstance(label, dict):
            label = label.get(model_name)
    if isinstance(prediction, dict):
        if not prediction_key or prediction_key not in prediction:
            return None
        prediction = prediction[prediction_key]
    score = _one_number(prediction)
    if score is None:
        return None
    label = _one_number(label)
    if label is None or (zero_or_one and label not in (0.0, 1.0)):
        return None
    return label, score


def _plain_combiner(combiner: Any) -> Optional[tuple[str, str]]:
    """(model name, prediction key) when the combiner's settings are the plain case (module docstring), else None."""
    key = combiner._key
    if key.output_name or key.sub_key is not None or key.example_weighted:
        return None
    if combiner._aggregation_type is not None or combiner._class_weights or combiner._example_weighted:
        return None
    spec = _model_spec(combiner._eval_config, key.model_name)
    return None if spec is None else (key.model_name, spec.prediction_key)


class _FastBinaryConfusionMatrixCombiner(binary_confusion_matrices._BinaryConfusionMatrixCombiner):
    """TFMA's confusion-matrix combiner; `add_input` reads a plain example directly."""

    def plain_case(self) -> Optional[tuple[str, str]]:
        if self._extract_label_prediction_and_weight is not metric_util.to_label_prediction_example_weight:
            return None
        return None if self._example_id_key else _plain_combiner(self)

    def add_input(self, accumulator, element):
        pair = None
        if self._plain is not None:
            model_name, prediction_key = self._plain
            pair = plain_label_and_score(element, prediction_key, zero_or_one=True, model_name=model_name)
        if pair is None:
            return super().add_input(accumulator, element)
        label, score = pair
        return self._binary_confusion_matrices.add_input(
            accumulator=accumulator, labels=[label], predictions=[score], example_weights=[1.0], example_id=None
        )


class _FastCalibrationHistogramCombiner(calibration_histogram._CalibrationHistogramCombiner):
    """TFMA's calibration-histogram combiner; `add_input` reads a plain example directly."""

    def plain_case(self) -> Optional[tuple[str, str]]:
        return _plain_combiner(self)

    def add_input(self, accumulator, element):
        pair = None
        if self._plain is not None:
            model_name, prediction_key = self._plain
            pair = plain_label_and_score(
                element, prediction_key, zero_or_one=self._fractional_labels, model_name=model_name
            )
        if pair is None:
            return super().add_input(accumulator, element)
        label, score = pair
        index = self._bucket_index(score if self._prediction_based_bucketing else label)
        bucket = accumulator.get(index)
        if bucket is None:
            accumulator[index] = calibration_histogram.Bucket(index, label, score, 1.0)
        else:
            bucket.weighted_labels += label
            bucket.weighted_predictions += score
            bucket.weighted_examples += 1.0
        return accumulator


_FAST_COMBINERS = {
    binary_confusion_matrices._BinaryConfusionMatrixCombiner: _FastBinaryConfusionMatrixCombiner,
    calibration_histogram._CalibrationHistogramCombiner: _FastCalibrationHistogramCombiner,
}


def _with_fast_combiner(computation: Any) -> Any:
    fast = _FAST_COMBINERS.get(type(getattr(computation, "combiner", None)))
    if fast is None or not isinstance(computation, metric_types.MetricComputation):
        return computation
    combiner = fast.__new__(fast)
    combiner.__dict__.update(computation.combiner.__dict__)
    combiner._plain = combiner.plain_case()  # (model name, prediction key) when the settings are plain, else None
    return metric_types.MetricComputation(computation.keys, computation.preprocessors, combiner)


class _FastCombiners:
    """Mixin for a TFMA metric class: its computations use the fast combiners."""

    def computations(self, *args: Any, **kwargs: Any) -> list:
        return [_with_fast_combiner(c) for c in super().computations(*args, **kwargs)]


class FastBinaryAccuracy(_FastCombiners, confusion_matrix_metrics.BinaryAccuracy):
    """TFMA's BinaryAccuracy with the fast combiner."""


class FastPrecision(_FastCombiners, confusion_matrix_metrics.Precision):
    """TFMA's Precision with the fast combiner."""


class FastRecall(_FastCombiners, confusion_matrix_metrics.Recall):
    """TFMA's Recall with the fast combiner."""


class FastAUC(_FastCombiners, confusion_matrix_metrics.AUC):
    """TFMA's AUC with the fast combiner."""


class FastConfusionMatrixAtThresholds(_FastCombiners, confusion_matrix_metrics.ConfusionMatrixAtThresholds):
    """TFMA's ConfusionMatrixAtThresholds with the fast combiner."""


class FastCalibrationPlot(_FastCombiners, calibration_plot.CalibrationPlot):
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


def use_fast_metrics(eval_config: tfma.EvalConfig) -> tfma.EvalConfig:
    """Points every TFMA metric of `eval_config` that has a fast class here at it (in place); returns the config."""
    for spec in eval_config.metrics_specs:
        for metric in spec.metrics:
            if metric.class_name in FAST_CLASSES and not metric.module:
                metric.class_name = FAST_CLASSES[metric.class_name].__name__
                metric.module = __name__
    return eval_config
