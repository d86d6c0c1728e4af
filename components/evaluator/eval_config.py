"""Builds TFMA's EvalConfig from the spec's metrics and thresholds."""

from __future__ import annotations

from typing import Any

import tensorflow_model_analysis as tfma

__all__ = ["build_eval_config"]


def build_eval_config(
    label_key: str, prediction_key: str, metrics: dict[str, str], thresholds: dict[str, dict[str, Any]]
) -> tfma.EvalConfig:
    """Args:
    label_key: the transformed label's name (from `transform_features`).
    prediction_key: the serving signature's output to score.
    metrics: spec name -> TFMA/Keras class name.
    thresholds: spec name -> {min, max, max_regression, higher_is_better}.
    """
    configs = []
    for name, class_name in metrics.items():
        config = tfma.MetricConfig(class_name=class_name)
        gate = thresholds.get(name)
        if gate:
            threshold = tfma.MetricThreshold()
            if gate.get("min") is not None or gate.get("max") is not None:
                value = tfma.GenericValueThreshold()
                if gate.get("min") is not None:
                    value.lower_bound.value = gate["min"]
                if gate.get("max") is not None:
                    value.upper_bound.value = gate["max"]
                threshold.value_threshold.CopyFrom(value)
            if gate.get("max_regression") is not None:
                higher = gate["higher_is_better"]
                allowed = gate["max_regression"] + 1e-10
                threshold.change_threshold.CopyFrom(
                    tfma.GenericChangeThreshold(
                        direction=tfma.MetricDirection.HIGHER_IS_BETTER
                        if higher
                        else tfma.MetricDirection.LOWER_IS_BETTER,
                        absolute={"value": -allowed if higher else allowed},
                    )
                )
            config.threshold.CopyFrom(threshold)
        configs.append(config)
    return tfma.EvalConfig(
        model_specs=[
            tfma.ModelSpec(
                signature_name="serving_default",
                label_key=label_key,
                prediction_key=prediction_key,
                preprocessing_function_names=["transform_features"],
                # A fixed batch: Beam's adaptive batching starts at one row
                # per model call, which dominates on small eval splits.
                inference_batch_size=1024,
            )
        ],
        slicing_specs=[tfma.SlicingSpec()],
        metrics_specs=[tfma.MetricsSpec(metrics=configs)],
    )
