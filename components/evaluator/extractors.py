"""TFMA's own extractors, with each batch cut down to what the metrics read before it is split into examples.

TFMA reads the eval split in batches (features decoded, the `transform_features`
signature run, the model's serving signature run), then splits every batch
into one extract per example (`UnbatchExtractor`) before computing metrics.
That split is Python per example and per value: with every raw feature, every
transformed feature and every serving output (`scores`, `classes`, `label`,
`probability`) in the batch, it is a large share of the Evaluator's time
although the metrics read only the labels, the weights and one prediction key
per model.

`custom_extractors` (TFX's hook of that name) returns TFMA's default
extractors with one more stage right before the split: `trim_extract` drops
the transformed features and the raw input, keeps the raw features only when
a slicing spec needs them, and keeps only each model's `prediction_key` among
its outputs. The labels were taken from the transformed features by then.
It does so only when every metric of the EvalConfig is one this project
configures (`metrics.METRICS`, the report's plots, TFMA's example counts),
none of which reads features or the input, and no metrics spec groups by a
query key; otherwise TFMA's extractors run as they are. When every metric
takes whole batches (`fast_metrics.batched_metrics`: binary metrics and
example counts, one output, no weights) the per-example split is left out as
well. With SQL slices (`evaluation.slices`) TFMA's per-example split and
slice keys give way to `slice_batch`: each batch goes to the overall slice
whole and to each of its SQL slices as the rows in that slice (TFMA's own
fan-out would give every slice of a batch all of its rows). Those SQL slice
keys themselves come from `slice_keys.fast_slice_keys_stage` (NumPy) instead of
TFMA's ZetaSQL stage, whenever every query is one `slicing.slice_sql` wrote.
"""

from __future__ import annotations

from typing import Any

import apache_beam as beam
import numpy as np
import tensorflow_model_analysis as tfma
from absl import logging
from tensorflow_model_analysis import constants
from tensorflow_model_analysis.api import types
from tensorflow_model_analysis.extractors import slice_key_extractor, unbatch_extractor
from tensorflow_model_analysis.slicer import slicer_lib
from tensorflow_model_analysis.utils import util as tfma_util

from components.evaluator.eval_config import slices_by_features
from components.evaluator.fast_metrics import FAST_CLASSES, FastExampleCount, batched_metrics
from components.evaluator.metrics import METRICS
from components.evaluator.slice_keys import fast_slice_keys_stage

__all__ = [
    "custom_extractors",
    "slice_batch",
    "trim_extract",
    "BATCH_SLICES_STAGE_NAME",
    "TRIM_STAGE_NAME",
    "FUNCTION_PATH",
]

TRIM_STAGE_NAME = "TrimToMetricInputs"
# `slice_batch`'s stage takes the name of TFMA's slice-key stage it replaces: TFMA's evaluators run after that name.
BATCH_SLICES_STAGE_NAME = slice_key_extractor.SLICE_KEY_EXTRACTOR_STAGE_NAME
# What the Evaluator executor names as TFX's `custom_extractors` function.
FUNCTION_PATH = f"{__name__}.custom_extractors"
_DROPPED = (constants.TRANSFORMED_FEATURES_KEY, constants.INPUT_KEY, constants.ARROW_RECORD_BATCH_KEY)
# Metric classes that read labels, predictions and example weights only.
_OUTPUT_ONLY_METRICS = frozenset(
    {m.binary_class for m in METRICS.values() if m.binary_class}
    | {m.multiclass_class for m in METRICS.values() if m.multiclass_class}
    | {"ConfusionMatrixAtThresholds", "CalibrationPlot", "ExampleCount", "WeightedExampleCount"}
    | {cls.__name__ for cls in FAST_CLASSES.values()}
    | {FastExampleCount.__name__}
)
# What a slice's batch leaves out: the features (no metric here reads them) and TFMA's slice keys.
_NOT_SLICED = (constants.FEATURES_KEY, constants.TRANSFORMED_FEATURES_KEY, constants.SLICE_KEY_TYPES_KEY)


def _metrics_read_outputs_only(eval_config: tfma.EvalConfig) -> bool:
    for spec in eval_config.metrics_specs:
        if spec.query_key or any(metric.class_name not in _OUTPUT_ONLY_METRICS for metric in spec.metrics):
            return False
    return True


def _prediction_keys(eval_config: tfma.EvalConfig) -> dict[str, str]:
    """Model name -> the prediction key its metrics read; '' names the only model."""
    specs = list(eval_config.model_specs)
    if len(specs) == 1:
        return {"": specs[0].prediction_key} if specs[0].prediction_key else {}
    return {spec.name: spec.prediction_key for spec in specs if spec.prediction_key}


def _only(outputs: Any, key: str) -> Any:
    if isinstance(outputs, dict) and key in outputs:
        return {key: outputs[key]}
    return outputs  # one output, or a key the model lacks: TFMA says so itself


def trim_extract(extract: dict, prediction_keys: dict[str, str], keep_features: bool) -> dict:
    """`extract` (a batch) without what no metric reads (see the module docstring); the input is not changed."""
    trimmed = {key: value for key, value in extract.items() if key not in _DROPPED}
    if not keep_features:
        trimmed.pop(constants.FEATURES_KEY, None)
    predictions = trimmed.get(constants.PREDICTIONS_KEY)
    if "" in prediction_keys:
        trimmed[constants.PREDICTIONS_KEY] = _only(predictions, prediction_keys[""])
    elif isinstance(predictions, dict) and prediction_keys:
        trimmed[constants.PREDICTIONS_KEY] = {
            model: _only(outputs, prediction_keys[model]) if model in prediction_keys else outputs
            for model, outputs in predictions.items()
        }
    return trimmed


def _rows_of(value: Any, rows: np.ndarray) -> Any:
    """`value` (a batch's array, list or dict of them) at `rows`; TypeError for anything else."""
    if value is None:
        return None
    if isinstance(value, dict):
        return {key: _rows_of(item, rows) for key, item in value.items()}
    if isinstance(value, np.ndarray):
        return value[rows]
    if isinstance(value, list):
        return [value[row] for row in rows.tolist()]
    raise TypeError(type(value).__name__)


def _with_keys(extract: dict, keys: list) -> dict:
    shown = {key: value for key, value in extract.items() if key not in _NOT_SLICED}
    shown[constants.SLICE_KEY_TYPES_KEY] = slicer_lib.slice_keys_to_numpy_array(keys)
    return shown


def slice_batch(extract: dict, overall: bool) -> list[dict]:
    """A batch for the overall slice (when `overall`) and, per SQL slice key of its rows, a batch of those rows.

    Each batch carries one slice key, so TFMA's fan-out gives every slice its own rows.
    A batch holding values that cannot be cut by rows is split into its examples, each with its own keys.
    """
    sql_keys = extract.get(constants.SLICE_KEY_TYPES_KEY)
    rows_by_key: dict = {}
    if isinstance(sql_keys, types.VarLenTensorValue) and sql_keys.values.size:
        for key, row in zip(sql_keys.values.tolist(), sql_keys.indices[:, 0].tolist()):
            rows_by_key.setdefault(key, []).append(row)
    batches = [_with_keys(extract, [()])] if overall else []
    try:
        for key, rows in rows_by_key.items():
            at = np.asarray(rows)
            kept = {k: _rows_of(v, at) for k, v in extract.items() if k not in _NOT_SLICED}
            batches.append(_with_keys(kept, [key]))
    except TypeError as error:
        logging.warning("A batch holds a %s: its slices get its examples one by one (slower, the same numbers)", error)
        examples = tfma_util.split_extracts({k: v for k, v in extract.items() if k not in _NOT_SLICED})
        keys_of = {row: [key for key, rows in rows_by_key.items() if row in rows] for row in range(len(examples))}
        return [_with_keys(example, [()] * overall + keys_of[row]) for row, example in enumerate(examples)]
    return batches


def _slices_batches(eval_config: tfma.EvalConfig) -> tfma.extractors.Extractor:
    """The stage that replaces TFMA's per-example split and slice keys for batches with SQL slices."""
    overall = not eval_config.slicing_specs or any(spec == tfma.SlicingSpec() for spec in eval_config.slicing_specs)
    return tfma.extractors.Extractor(
        stage_name=BATCH_SLICES_STAGE_NAME,
        ptransform="SliceBatches" >> beam.FlatMap(slice_batch, overall=overall),
    )


def custom_extractors(eval_shared_model, eval_config: tfma.EvalConfig, tensor_adapter_config=None) -> list:
    """TFMA's default extractors with `trim_extract` right before the per-example split."""
    extractors = tfma.default_extractors(
        eval_shared_model=eval_shared_model, eval_config=eval_config, tensor_adapter_config=tensor_adapter_config
    )
    fast_keys = fast_slice_keys_stage(eval_config)
    if fast_keys is not None:  # `evaluation.slices`' keys in NumPy instead of ZetaSQL (slice_keys.py)
        extractors = [fast_keys if e.stage_name == fast_keys.stage_name else e for e in extractors]
    stages = [extractor.stage_name for extractor in extractors]
    if unbatch_extractor.UNBATCH_EXTRACTOR_STAGE_NAME not in stages or not _metrics_read_outputs_only(eval_config):
        return extractors  # not the layout or the metrics this was written for: TFMA's own
    trim = beam.Map(
        trim_extract, prediction_keys=_prediction_keys(eval_config), keep_features=slices_by_features(eval_config)
    )
    at = stages.index(unbatch_extractor.UNBATCH_EXTRACTOR_STAGE_NAME)
    # Metrics that take whole batches (fast_metrics.batched_metrics) get them: no split into examples.
    after = extractors[at + 1 :] if batched_metrics(eval_config) else extractors[at:]
    sql = any(spec.slice_keys_sql for spec in eval_config.slicing_specs)
    if after and after[0].stage_name == slice_key_extractor.SLICE_KEY_EXTRACTOR_STAGE_NAME and sql:
        after = [_slices_batches(eval_config), *after[1:]]
    return extractors[:at] + [tfma.extractors.Extractor(stage_name=TRIM_STAGE_NAME, ptransform=trim)] + after
