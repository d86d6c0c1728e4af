"""TFMA's binary-classification metrics with a fast path for a plain 0/1 label and one score.

BinaryAccuracy, Precision, Recall, AUC, ConfusionMatrixAtThresholds and
CalibrationPlot read every example through TFMA's general extraction
function, the largest part of the Evaluator's time on large data. Here each
is TFMA's own class with its combiners swapped for the
fast ones in `compat.tfma.fast_combiners` (TFMA's private combiners
subclassed; that module says what the plain case is and why it needs TFMA's
internals). The accumulators, keys, derived metrics and outputs are TFMA's
own, so the results are the same numbers
(`tests/components/evaluator/test_fast_metrics.py` compares them with TFMA's
classes).

`use_fast_metrics(eval_config)` points the metrics of an EvalConfig at these
classes; the Evaluator executor calls it before TFMA runs. When every metric
is one of them (or TFMA's ExampleCount), with one output, no example weights,
and the slices are the overall one and `evaluation.slices`' SQL slices, it
also marks them `batched`: the Evaluator then leaves out TFMA's split of each
batch into examples (`extractors.custom_extractors` hands each slice its rows
of a batch instead) and the combiners count a batch's labels and scores with
NumPy, TFMA's arithmetic per bucket and threshold; `FastExampleCount` counts a
batch's rows. A batch that TFMA's path must read is split into its examples
for it. The calibration plot's sums of scores are added in another order, so
they equal TFMA's to rounding; every other number is the same. Where the
installed TFMA is not the shape `compat.tfma` was written for, the metrics
stay TFMA's own.
"""

from __future__ import annotations

import json
from typing import Any, Optional

import apache_beam as beam
import numpy as np
import tensorflow_model_analysis as tfma
from tensorflow_model_analysis.metrics import calibration_plot, confusion_matrix_metrics, metric_types

from compat.tfma import fast_combiners
from compat.tfma.fast_combiners import FastCombiners

__all__ = [
    "FAST_CLASSES",
    "FastAUC",
    "FastBinaryAccuracy",
    "FastCalibrationPlot",
    "FastConfusionMatrixAtThresholds",
    "FastExampleCount",
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


def _batch_rows(value: Any) -> int:
    """The examples in a label (or prediction) of a batch: its first dimension; a dict: its first value's."""
    while isinstance(value, dict) and value:
        value = next(iter(value.values()))
    return int(value.shape[0]) if isinstance(value, np.ndarray) and value.ndim else 1


class _RowCountCombiner(beam.CombineFn):
    """TFMA's unweighted example count: one per input, or a batch's rows when the inputs are batches."""

    def __init__(self, keys: list, batched: bool) -> None:
        self._keys = keys
        self._batched = batched

    def create_accumulator(self) -> float:
        return 0.0

    def add_input(self, accumulator: float, element: metric_types.StandardMetricInputs) -> float:
        return accumulator + (_batch_rows(element.label) if self._batched else 1.0)

    def merge_accumulators(self, accumulators) -> float:
        return float(sum(accumulators))

    def extract_output(self, accumulator: float) -> dict:
        return {key: accumulator for key in self._keys}


def _row_count_computations(
    name: str = "example_count",
    model_names: Optional[list[str]] = None,
    output_names: Optional[list[str]] = None,
    sub_keys: Optional[list] = None,
    example_weighted: bool = False,
    batched: bool = False,
) -> list:
    """TFMA's `example_count` computations (the same keys) with `_RowCountCombiner`."""
    computations = []
    for model_name in model_names or [""]:
        for output_name in output_names or [""]:
            keys = [
                metric_types.MetricKey(
                    name=name,
                    model_name=model_name,
                    output_name=output_name,
                    sub_key=sub_key,
                    example_weighted=example_weighted,
                )
                for sub_key in sub_keys or [None]
            ]
            computations.append(metric_types.MetricComputation(keys, None, _RowCountCombiner(keys, batched)))
    return computations


class FastExampleCount(metric_types.Metric):
    """TFMA's ExampleCount for unweighted metrics that may take whole batches (`batched`: count their rows)."""

    def __init__(self, name: str = "example_count", batched: bool = False) -> None:
        super().__init__(_row_count_computations, name=name, batched=batched)

    @property
    def compute_confidence_interval(self) -> bool:
        return False  # as TFMA's ExampleCount: a count has no sampling uncertainty


_FAST_NAMES = frozenset(cls.__name__ for cls in FAST_CLASSES.values())
_COUNT = "ExampleCount"


def slices_fit_batches(eval_config: tfma.EvalConfig) -> bool:
    """Whether every slice is the overall one or a SQL slice (`slice_keys_sql` only), the slices batches can take."""
    if eval_config.cross_slicing_specs:
        return False
    return all(not (spec.feature_keys or spec.feature_values) for spec in eval_config.slicing_specs)


def _batches_fit(eval_config: tfma.EvalConfig) -> bool:
    """Whether the metrics can take whole batches: each fast or a count, one output, unweighted, SQL slices only."""
    if not slices_fit_batches(eval_config):
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
        if any(name for name in spec.output_names):
            return False
        if any(m.class_name not in _FAST_NAMES and (m.class_name, m.module) != (_COUNT, "") for m in spec.metrics):
            return False
    return any(spec.metrics for spec in eval_config.metrics_specs)


def use_fast_metrics(eval_config: tfma.EvalConfig) -> tfma.EvalConfig:
    """Points every TFMA metric of `eval_config` that has a fast class here at it (in place); returns the config.

    When every metric then is one of them or TFMA's ExampleCount (which becomes
    `FastExampleCount`), with one output, no weights and SQL slices only
    (`slices_fit_batches`), each also gets `"batched": true`: the metrics take
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
                if metric.class_name == _COUNT:
                    metric.class_name, metric.module = FastExampleCount.__name__, __name__
                metric.config = json.dumps({**json.loads(metric.config or "{}"), "batched": True})
    return eval_config


def batched_metrics(eval_config: tfma.EvalConfig) -> bool:
    """Whether `use_fast_metrics` set every metric of `eval_config` to take whole batches."""
    metrics = [m for spec in eval_config.metrics_specs for m in spec.metrics]
    return bool(metrics) and all(
        m.module == __name__ and json.loads(m.config or "{}").get("batched") is True for m in metrics
    )
