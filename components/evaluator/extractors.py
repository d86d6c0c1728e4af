"""TFMA's own extractors, with each batch cut down to what the metrics read before it is split into examples.

TFMA reads the eval split in batches (features decoded, the `transform_features`
signature run, the model's serving signature run), then splits every batch
into one extract per example (`UnbatchExtractor`) before computing metrics.
That split is Python per example and per value: with every raw feature, every
transformed feature and every serving output (`scores`, `classes`, `label`,
`probability`) in the batch, it was 28% of the Evaluator's time on the taxi
data (py-spy, 150k rows) although the metrics read only the labels, the
weights and one prediction key per model.

`custom_extractors` (TFX's hook of that name) returns TFMA's default
extractors with one more stage right before the split: `trim_extract` drops
the transformed features and the raw input, keeps the raw features only when
a slicing spec needs them, and keeps only each model's `prediction_key` among
its outputs. The labels were taken from the transformed features by then.
It does so only when every metric of the EvalConfig is one this project
configures (`metrics.METRICS`, the report's plots, TFMA's example counts),
none of which reads features or the input, and no metrics spec groups by a
query key; otherwise TFMA's extractors run as they are. When every metric
takes whole batches (`fast_metrics.batched_metrics`: binary metrics, one
output, no weights, the overall slice only) the per-example split is left
out as well.
"""

from __future__ import annotations

from typing import Any

import apache_beam as beam
import tensorflow_model_analysis as tfma
from tensorflow_model_analysis import constants
from tensorflow_model_analysis.extractors import unbatch_extractor

from components.evaluator.eval_config import slices_by_features
from components.evaluator.fast_metrics import FAST_CLASSES, batched_metrics
from components.evaluator.metrics import METRICS

__all__ = ["custom_extractors", "trim_extract", "TRIM_STAGE_NAME", "FUNCTION_PATH"]

TRIM_STAGE_NAME = "TrimToMetricInputs"
# What the Evaluator executor names as TFX's `custom_extractors` function.
FUNCTION_PATH = f"{__name__}.custom_extractors"
_DROPPED = (constants.TRANSFORMED_FEATURES_KEY, constants.INPUT_KEY, constants.ARROW_RECORD_BATCH_KEY)
# Metric classes that read labels, predictions and example weights only.
_OUTPUT_ONLY_METRICS = frozenset(
    {m.binary_class for m in METRICS.values() if m.binary_class}
    | {m.multiclass_class for m in METRICS.values() if m.multiclass_class}
    | {"ConfusionMatrixAtThresholds", "CalibrationPlot", "ExampleCount", "WeightedExampleCount"}
    | {cls.__name__ for cls in FAST_CLASSES.values()}
)


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


def custom_extractors(eval_shared_model, eval_config: tfma.EvalConfig, tensor_adapter_config=None) -> list:
    """TFMA's default extractors with `trim_extract` right before the per-example split."""
    extractors = tfma.default_extractors(
        eval_shared_model=eval_shared_model, eval_config=eval_config, tensor_adapter_config=tensor_adapter_config
    )
    stages = [extractor.stage_name for extractor in extractors]
    if unbatch_extractor.UNBATCH_EXTRACTOR_STAGE_NAME not in stages or not _metrics_read_outputs_only(eval_config):
        return extractors  # not the layout or the metrics this was written for: TFMA's own
    trim = beam.Map(
        trim_extract, prediction_keys=_prediction_keys(eval_config), keep_features=slices_by_features(eval_config)
    )
    at = stages.index(unbatch_extractor.UNBATCH_EXTRACTOR_STAGE_NAME)
    # Metrics that take whole batches (fast_metrics.batched_metrics) get them: no split into examples.
    after = extractors[at + 1 :] if batched_metrics(eval_config) else extractors[at:]
    return extractors[:at] + [tfma.extractors.Extractor(stage_name=TRIM_STAGE_NAME, ptransform=trim)] + after
