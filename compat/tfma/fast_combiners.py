"""TFMA's binary-classification combiners with a fast path for a plain 0/1 label and one score.

What: TFMA computes BinaryAccuracy, Precision, Recall and the confusion
matrix from a binary confusion-matrix combiner, and AUC and calibration plots
from a calibration-histogram combiner. Both read every example through
`metric_util.to_label_prediction_example_weight`, a general function (model
and output lookups, sub keys, top k, class weights, label vocabularies,
fractional labels) that is the largest part of the Evaluator's time on
large data. `FastCombiners`, mixed into a TFMA metric
class, swaps those combiners for subclasses whose `add_input` reads the label
and the score directly when the case is the plain one, and calls TFMA's
`add_input` otherwise:
- the combiner: no output name, no sub key or only a `class_id` one (a
  multi-class metric binarized per class), no aggregation, no class
  weights, not example-weighted, no example ids, TFMA's own extraction
  function (one model, or a candidate and its baseline, each read under its
  own name);
- the example: a numeric label of one value that is 0 or 1 (any finite value
  where the histogram does not split fractional labels), a score of one
  finite number (under the model spec's `prediction_key` when the model's
  outputs are a dict); with a `class_id`, a label of one whole number that
  is a class index and a score vector of one finite number per class, read
  as TFMA's `select_class_id` reads a sparse label: (label == class_id,
  score[class_id]). Batches with a `class_id` take TFMA's path per example
  (the Evaluator batches no binarized metrics).
With `batched=True` each input is a whole batch: the combiners count a
batch's labels and scores with NumPy, TFMA's arithmetic per bucket and
threshold, and split a batch TFMA's path must read into its examples. The
accumulators, keys, derived metrics and outputs are TFMA's own, so the
results are the same numbers (the calibration plot's sums of scores are added
in another order, so they equal TFMA's to rounding).

NaN scores: TFMA's histogram `_bucket_index` fails on one (`int(nan)`),
stopping AUC and calibration plots. The fast histogram combiner puts it in
bucket 0, below every bucket (TFMA's threshold matrices too count NaN as
below every threshold); that bucket's score sum is then NaN, which the report
leaves out. One log line per process.

Why private: both combiners are private classes, and the fast path adds to
their accumulators with TFMA's private `_ThresholdEntry`, `_merge_entry` and
`_bucket_index`, reading the combiners' private settings; TFMA has no public
hook for a faster extraction.

Shape check (`shape_problem`): those classes and functions exist, and a
combiner holds the settings read here. Fallback: where the classes or
functions differ, `available()` is False and the caller keeps TFMA's own
metric classes; where one combiner's settings differ, it adds every example
through TFMA's own `add_input` (the same numbers, slower).
"""

from __future__ import annotations

import logging
import math
from typing import Any, Optional

import numpy as np
from tensorflow_model_analysis.contrib.aggregates import binary_confusion_matrices as matrix_aggregates
from tensorflow_model_analysis.metrics import (
    binary_confusion_matrices,
    calibration_histogram,
    metric_types,
    metric_util,
)
from tensorflow_model_analysis.utils import util as tfma_util

import compat

__all__ = ["ENTRY", "FastCombiners", "available", "plain_label_and_score", "plain_labels_and_scores", "shape_problem"]

ENTRY = "compat.tfma.fast_combiners"

_NUMERIC_KINDS = frozenset("biuf")
_log = logging.getLogger(__name__)
_nan_logged = False

# TFMA's private combiners (None where this TFMA lacks one: the shape check then fails).
_MATRIX_COMBINER = getattr(binary_confusion_matrices, "_BinaryConfusionMatrixCombiner", None)
_HISTOGRAM_COMBINER = getattr(calibration_histogram, "_CalibrationHistogramCombiner", None)

# What the fast path reads of each combiner (`_binary_confusion_matrices` also for its own names below).
_COMBINER_SETTINGS = ("_key", "_eval_config", "_aggregation_type", "_class_weights", "_example_weighted")
_MATRIX_SETTINGS = ("_extract_label_prediction_and_weight", "_example_id_key", "_binary_confusion_matrices")
_MATRICES_SETTINGS = ("_thresholds", "_enable_fractional_labels", "_merge_entry")
_HISTOGRAM_SETTINGS = ("_num_buckets", "_left", "_range", "_fractional_labels", "_prediction_based_bucketing")


def shape_problem(combiner: Any = None) -> Optional[str]:
    """What differs from the pinned TFMA in the names the fast combiners use (None: nothing).

    Args:
        combiner: one of TFMA's combiners to check the settings of, or None for the module-level names only.
    """
    if _MATRIX_COMBINER is None or _HISTOGRAM_COMBINER is None:
        return "TFMA has no _BinaryConfusionMatrixCombiner or _CalibrationHistogramCombiner"
    for owner, names in (
        (matrix_aggregates, ("_ThresholdEntry", "Matrix")),
        (calibration_histogram, ("Bucket",)),
        (tfma_util, ("split_extracts",)),
        (_HISTOGRAM_COMBINER, ("_bucket_index",)),
    ):
        missing = [name for name in names if not hasattr(owner, name)]
        if missing:
            return f"{owner.__name__} has no {', '.join(missing)}"
    if combiner is None:
        return None
    settings = _COMBINER_SETTINGS + (
        _MATRIX_SETTINGS if isinstance(combiner, _MATRIX_COMBINER) else _HISTOGRAM_SETTINGS
    )
    missing = [name for name in settings if not hasattr(combiner, name)]
    if not missing and isinstance(combiner, _MATRIX_COMBINER):
        missing = [name for name in _MATRICES_SETTINGS if not hasattr(combiner._binary_confusion_matrices, name)]
    return f"{type(combiner).__name__} has no {', '.join(missing)}" if missing else None


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


def _label_and_prediction(element: Any, prediction_key: str, model_name: str) -> Optional[tuple[Any, Any]]:
    """The label and the prediction TFMA reads for the model (by name) and prediction key, or None."""
    prediction, label = element.prediction, element.label
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
    return label, prediction


def _class_label_and_score(label: Any, prediction: Any, class_id: int) -> Optional[tuple[float, float]]:
    """(1.0 if the sparse label is `class_id` else 0.0, that class's score), or None where TFMA must read it."""
    if type(prediction) is not np.ndarray or prediction.ndim != 1 or prediction.dtype.kind not in _NUMERIC_KINDS:
        return None
    index, classes = _one_number(label), prediction.size  # one score: TFMA reads the label as dense, not an index
    if index is None or classes < 2 or not (index.is_integer() and 0 <= index < classes and 0 <= class_id < classes):
        return None
    score = float(prediction[class_id])
    return (1.0 if index == class_id else 0.0, score) if math.isfinite(score) else None


def plain_label_and_score(
    element: Any, prediction_key: str, zero_or_one: bool, model_name: str = "", class_id: Optional[int] = None
) -> Optional[tuple[float, float]]:
    """(label, score) of one example in the plain case, or None where TFMA's general path must read it.

    Args:
      element: TFMA's `StandardMetricInputs` of one example.
      prediction_key: the model spec's prediction key ('' when unset).
      zero_or_one: require the label to be exactly 0 or 1 (TFMA splits any other label into weighted halves).
      model_name: the model's name when the EvalConfig has several (a candidate and its baseline), else ''.
      class_id: the combiner's `class_id` sub key: the label is a class index, the prediction a score per class.
    """
    found = _label_and_prediction(element, prediction_key, model_name)
    if found is None:
        return None
    if class_id is not None:
        return _class_label_and_score(found[0], found[1], class_id)
    score = _one_number(found[1])
    if score is None:
        return None
    label = _one_number(found[0])
    if label is None or (zero_or_one and label not in (0.0, 1.0)):
        return None
    return label, score


def plain_labels_and_scores(
    element: Any, prediction_key: str, zero_or_one: bool, model_name: str = ""
) -> Optional[tuple[np.ndarray, np.ndarray]]:
    """A batch's labels and scores as two float arrays of one value per example, or None (TFMA's path reads it).

    The batch holds one numeric label and one finite score per example (shape
    [n] or [n, 1]); TFMA flattens such arrays into the same (label, score) pairs.
    """
    found = _label_and_prediction(element, prediction_key, model_name)
    if found is None:
        return None
    label, prediction = found
    arrays = []
    for value in (label, prediction):
        if type(value) is not np.ndarray or value.dtype.kind not in _NUMERIC_KINDS or value.ndim not in (1, 2):
            return None
        if value.ndim == 2 and value.shape[1] != 1:
            return None
        arrays.append(value.reshape(-1).astype(np.float64))
    labels, scores = arrays
    if labels.size != scores.size or not (np.isfinite(labels).all() and np.isfinite(scores).all()):
        return None
    if zero_or_one and not ((labels == 0.0) | (labels == 1.0)).all():
        return None
    return labels, scores


def _plain_combiner(combiner: Any) -> Optional[tuple[str, str]]:
    """(model name, prediction key) when the combiner's settings are the plain case (module docstring), else None."""
    key = combiner._key
    if key.output_name or key.example_weighted or (key.sub_key is not None and _class_id(key) is None):
        return None
    if combiner._aggregation_type is not None or combiner._class_weights or combiner._example_weighted:
        return None
    spec = _model_spec(combiner._eval_config, key.model_name)
    return None if spec is None else (key.model_name, spec.prediction_key)


def _class_id(key: Any) -> Optional[int]:
    """The `class_id` of a key whose sub key holds only that (TFMA's binarization per class), else None."""
    sub_key = key.sub_key
    if sub_key is None or sub_key.k is not None or sub_key.top_k is not None:
        return None
    return sub_key.class_id


class _FastCombiner:
    """Shared by the fast combiners: which path reads an element, and TFMA's path for a whole batch.

    A subclass says whether labels must be 0 or 1 (`_zero_or_one`) and adds one
    plain example (`_add_one`) or a plain batch (`_add_batch`) as TFMA would.
    """

    _plain: Optional[tuple[str, str]] = None
    _batched = False

    def add_input(self, accumulator, element):
        if self._plain is None:
            return self._general(accumulator, element)
        model_name, prediction_key = self._plain
        zero_or_one = self._zero_or_one()
        class_id = _class_id(self._key)
        if self._batched and class_id is not None:
            return self._general(accumulator, element)
        if self._batched:
            arrays = plain_labels_and_scores(element, prediction_key, zero_or_one, model_name=model_name)
            return self._general(accumulator, element) if arrays is None else self._add_batch(accumulator, *arrays)
        pair = plain_label_and_score(element, prediction_key, zero_or_one, model_name=model_name, class_id=class_id)
        return super().add_input(accumulator, element) if pair is None else self._add_one(accumulator, *pair)

    def _general(self, accumulator, element):
        """TFMA's own `add_input`, once per example of a batch when the metrics get batches."""
        if not self._batched:
            return super().add_input(accumulator, element)
        for example in tfma_util.split_extracts(element):
            accumulator = super().add_input(accumulator, metric_types.StandardMetricInputs(example))
        return accumulator


class _FastBinaryConfusionMatrixCombiner(_FastCombiner, _MATRIX_COMBINER or object):
    """TFMA's confusion-matrix combiner; `add_input` reads a plain example (or batch) directly."""

    def plain_case(self) -> Optional[tuple[str, str]]:
        if self._extract_label_prediction_and_weight is not metric_util.to_label_prediction_example_weight:
            return None
        return None if self._example_id_key else _plain_combiner(self)

    def _zero_or_one(self) -> bool:
        return True

    def _add_one(self, accumulator, label: float, score: float):
        return self._binary_confusion_matrices.add_input(
            accumulator=accumulator, labels=[label], predictions=[score], example_weights=[1.0], example_id=None
        )

    def _add_batch(self, accumulator, labels: np.ndarray, scores: np.ndarray):
        """What TFMA's `add_input` sums example by example (weights 1.0), counted per threshold at once."""
        matrices = self._binary_confusion_matrices
        for threshold in matrices._thresholds:
            positive = labels == 1.0 if matrices._enable_fractional_labels else labels > threshold
            predicted = scores > threshold
            counts = matrix_aggregates.Matrix(
                tp=float(np.count_nonzero(positive & predicted)),
                tn=float(np.count_nonzero(~positive & ~predicted)),
                fp=float(np.count_nonzero(~positive & predicted)),
                fn=float(np.count_nonzero(positive & ~predicted)),
            )
            entry = matrix_aggregates._ThresholdEntry(counts, [], [], [], [])
            accumulator[threshold] = matrices._merge_entry(accumulator, threshold, entry)
        return accumulator


class _FastCalibrationHistogramCombiner(_FastCombiner, _HISTOGRAM_COMBINER or object):
    """TFMA's calibration-histogram combiner; `add_input` reads a plain example (or batch) directly."""

    def plain_case(self) -> Optional[tuple[str, str]]:
        return _plain_combiner(self)

    def _zero_or_one(self) -> bool:
        return self._fractional_labels  # TFMA splits any other label into weighted halves only then

    def _bucket_index(self, prediction: float) -> int:
        """TFMA's bucket of `prediction`, and bucket 0 (below every bucket) for NaN, where TFMA's fails."""
        if math.isnan(prediction):
            _log_nan_score(self._key.name)
            return 0
        return super()._bucket_index(prediction)

    def _add_one(self, accumulator, label: float, score: float):
        index = self._bucket_index(score if self._prediction_based_bucketing else label)
        bucket = accumulator.get(index)
        if bucket is None:
            accumulator[index] = calibration_histogram.Bucket(index, label, score, 1.0)
        else:
            bucket.weighted_labels += label
            bucket.weighted_predictions += score
            bucket.weighted_examples += 1.0
        return accumulator

    def _add_batch(self, accumulator, labels: np.ndarray, scores: np.ndarray):
        """TFMA's buckets (`_bucket_index`, same arithmetic) filled with a batch's sums per bucket."""
        position = (scores if self._prediction_based_bucketing else labels) - self._left
        index = position / self._range * self._num_buckets + 1
        last = self._num_buckets + 1
        index = np.where(index < 0, 0, np.where(index >= last, last, np.floor(index))).astype(np.int64)
        ids, inverse = np.unique(index, return_inverse=True)
        label_sums = np.bincount(inverse, weights=labels)
        score_sums = np.bincount(inverse, weights=scores)
        counts = np.bincount(inverse)
        for at, bucket_id in enumerate(ids.tolist()):
            bucket = accumulator.get(bucket_id)
            if bucket is None:
                accumulator[bucket_id] = calibration_histogram.Bucket(
                    bucket_id, float(label_sums[at]), float(score_sums[at]), float(counts[at])
                )
            else:
                bucket.weighted_labels += float(label_sums[at])
                bucket.weighted_predictions += float(score_sums[at])
                bucket.weighted_examples += float(counts[at])
        return accumulator


def _log_nan_score(histogram: str) -> None:
    global _nan_logged
    if not _nan_logged:
        _nan_logged = True
        _log.warning("NaN scores: counted below every bucket of the calibration histogram %s", histogram)


_FAST_COMBINERS = {
    base: fast
    for base, fast in (
        (_MATRIX_COMBINER, _FastBinaryConfusionMatrixCombiner),
        (_HISTOGRAM_COMBINER, _FastCalibrationHistogramCombiner),
    )
    if base is not None
}


def _with_fast_combiner(computation: Any, batched: bool) -> Any:
    fast = _FAST_COMBINERS.get(type(getattr(computation, "combiner", None)))
    if fast is None or not isinstance(computation, metric_types.MetricComputation):
        return computation
    combiner = fast.__new__(fast)
    combiner.__dict__.update(computation.combiner.__dict__)
    # (model name, prediction key) when the settings are plain; None: TFMA's own `add_input` (per example of a batch)
    plain = compat.check_shape(ENTRY, lambda: shape_problem(computation.combiner))
    combiner._plain = combiner.plain_case() if plain else None
    combiner._batched = batched
    return metric_types.MetricComputation(computation.keys, computation.preprocessors, combiner)


class FastCombiners:
    """Mixin for a TFMA metric class: its computations use the fast combiners (see the module docstring).

    `batched=True` (a key of the metric's config) says each input is a whole
    batch (the Evaluator then skips TFMA's split into examples). Where the
    shape check fails, the computations are TFMA's own, after one log line.

    Example:
        class FastAUC(FastCombiners, tfma.metrics.AUC): ...
    """

    def __init__(self, *args: Any, batched: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.batched = batched

    def computations(self, *args: Any, **kwargs: Any) -> list:
        return [_with_fast_combiner(c, self.batched) for c in super().computations(*args, **kwargs)]


def available() -> bool:
    """Whether this TFMA has the fast combiners' private names (else one log line; use TFMA's own metrics)."""
    return compat.check_shape(ENTRY, shape_problem)
