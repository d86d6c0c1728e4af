"""Builds TFMA's EvalConfig from the spec's metrics and thresholds.

The spec's evaluation section travels to the Evaluator as an
`EvaluationRequest`; the executor builds the final EvalConfig from it once
the label's classes are known (from the model's `label_classes` asset), so a
label whose classes the spec does not declare still gets per-class metrics:

    >>> request = EvaluationRequest(label_key="species", task="classification",
    ...     metrics=("accuracy", "precision"), thresholds={"precision": {"min": 0.8, "classes": ["Adelie"]}})
    >>> config = build_eval_config(request, classes=["Adelie", "Chinstrap", "Gentoo"])

Multi-class metrics and their TFMA keys:
- `accuracy`, `top_k_accuracy`, `sparse_categorical_crossentropy`, `confusion_matrix`: one key each.
- `precision`, `recall`: one key per class, named `precision@<class>` (sub_key class_id).
- `macro_auc`, `weighted_auc`: the one aggregated key (the per-class AUCs are not gated).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from typing import Any, Optional

import tensorflow_model_analysis as tfma

from components.evaluator import metrics as metric_table

__all__ = ["EvaluationRequest", "Baseline", "build_eval_config", "model_spec", "num_classes_of", "slices_by_features"]

_FLAG = "--yaml_tfx_evaluation="


@dataclasses.dataclass(frozen=True)
class Baseline:
    """The trivial model a candidate must beat when the spec declares no thresholds.

    Args:
      metric: the spec metric gated (`accuracy`, `binary_accuracy`, `auc` or `mean_squared_error`).
      value: the baseline's score on the eval split (majority-class share, 0.5, or the label variance).
      name: what the baseline is, for the verdict ("majority-class baseline").
      note: said after the verdict, e.g. why no model can beat it.
    """

    metric: str
    value: float
    name: str
    note: str = ""

    def threshold(self) -> dict[str, Any]:
        """The value threshold a candidate must pass: strictly better than the baseline."""
        if metric_table.METRICS[self.metric].higher_is_better:
            return {"min": math.nextafter(self.value, math.inf), "higher_is_better": True}
        return {"max": math.nextafter(self.value, -math.inf), "higher_is_better": False}


@dataclasses.dataclass(frozen=True)
class EvaluationRequest:
    """The spec's `evaluation` section and label, as the Evaluator executor needs them.

    Args:
      label_key: the transformed label's name (from `transform_features`).
      task: `classification` or `regression`.
      metrics: spec metric names (`pipelines.spec.metrics.METRICS`).
      thresholds: spec name -> {min, max, max_regression, higher_is_better, classes}.
      top_k: k of `top_k_accuracy`.
      classes: the classes the spec declares (`label.classes`), or None.
      sample_rows: score a deterministic sample of this many eval rows (`evaluation.sample_rows`); None: all.
      slices: the columns of each slice spec (`evaluation.slices`); `slicing.py` turns them into TFMA's.
      slice_buckets: quantile buckets of a numeric slice column.
      user_model: the model comes from a TFX module file's `run_fn` (`training.module_file`): its ModelSpec is
        fitted to its own signatures (`user_model.py`).
      fairness: `evaluation.fairness` (`thresholds`, `max_gap`, `min_examples`), or None; see `fairness.py`.
      confidence: `evaluation.confidence`, the level of the intervals the gates' bounds must clear, or None.
    """

    label_key: str
    task: str
    metrics: tuple[str, ...]
    thresholds: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    top_k: int = 3
    classes: Optional[tuple[str, ...]] = None
    sample_rows: Optional[int] = None
    slices: tuple[tuple[str, ...], ...] = ()
    slice_buckets: int = 4
    user_model: bool = False
    fairness: Optional[dict[str, Any]] = None
    confidence: Optional[float] = None

    def to_flag(self) -> str:
        """The request as one executor flag (TFX passes `extra_flags` to the executor)."""
        return _FLAG + json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_flags(cls, flags: Sequence[str] | None) -> Optional[EvaluationRequest]:
        """The request among an executor's extra flags, or None when there is none."""
        for flag in reversed(list(flags or ())):
            if flag.startswith(_FLAG):
                data = json.loads(flag[len(_FLAG) :])
                data["metrics"] = tuple(data["metrics"])
                data["classes"] = tuple(data["classes"]) if data.get("classes") is not None else None
                data["slices"] = tuple(tuple(columns) for columns in data.get("slices") or ())
                return cls(**data)
        return None


def num_classes_of(request: EvaluationRequest, classes: Optional[Sequence[str]]) -> int:
    """Classes of the label: 0 for regression; 2 when a classification label's classes are unknown."""
    if request.task == "regression":
        return 0
    return len(classes) if classes else 2


def _value_threshold(gate: dict[str, Any]) -> Optional[tfma.GenericValueThreshold]:
    if gate.get("min") is None and gate.get("max") is None:
        return None
    value = tfma.GenericValueThreshold()
    if gate.get("min") is not None:
        value.lower_bound.value = gate["min"]
    if gate.get("max") is not None:
        value.upper_bound.value = gate["max"]
    return value


def _threshold(gate: dict[str, Any] | None, name: str) -> Optional[tfma.MetricThreshold]:
    if not gate:
        return None
    threshold = tfma.MetricThreshold()
    value = _value_threshold(gate)
    if value is not None:
        threshold.value_threshold.CopyFrom(value)
    if gate.get("max_regression") is not None:
        higher = gate.get("higher_is_better")
        if higher is None:
            higher = metric_table.METRICS[name].higher_is_better
        allowed = gate["max_regression"] + 1e-10
        threshold.change_threshold.CopyFrom(
            tfma.GenericChangeThreshold(
                direction=tfma.MetricDirection.HIGHER_IS_BETTER if higher else tfma.MetricDirection.LOWER_IS_BETTER,
                absolute={"value": -allowed if higher else allowed},
            )
        )
    return threshold


def _metric(class_name: str, name: str, gate: dict[str, Any] | None = None, **kwargs: Any) -> tfma.MetricConfig:
    """A MetricConfig whose TFMA key is the spec's name."""
    config = tfma.MetricConfig(class_name=class_name, config=json.dumps({"name": name, **kwargs}))
    threshold = _threshold(gate, name.split("@")[0])
    if threshold is not None:
        config.threshold.CopyFrom(threshold)
    return config


def _check(request: EvaluationRequest, classes: Optional[Sequence[str]], num_classes: int) -> None:
    for name in request.metrics:
        if name not in metric_table.METRICS:
            raise ValueError(
                f"unknown metric `{name}` in `evaluation.metrics`. Expected one of: "
                f"{', '.join(metric_table.METRICS)}. Fix the name."
            )
        problem = metric_table.class_count_problem(name, num_classes) if request.task == "classification" else None
        if problem:
            raise ValueError(f"evaluation.metrics: {problem}")
    if "confusion_matrix" in request.thresholds:
        raise ValueError(
            "evaluation.thresholds.confusion_matrix: a confusion matrix is a table, not a number, so it cannot "
            "gate the blessing. Remove this threshold and gate `accuracy`, `precision` or `recall` instead."
        )
    for name, gate in request.thresholds.items():
        wanted = gate.get("classes")
        if not wanted:
            continue
        if name not in metric_table.PER_CLASS or num_classes <= 2:
            raise ValueError(
                f"evaluation.thresholds.{name}.classes: only `precision` and `recall` of a label with 3 or more "
                f"classes are per class. Received: `{name}` on a label of {num_classes} classes. Remove `classes`."
            )
        unknown = [c for c in wanted if str(c) not in {str(k) for k in classes or ()}]
        if unknown:
            raise ValueError(
                f"evaluation.thresholds.{name}.classes names classes the label does not have: {unknown}. "
                f"Expected some of: {list(classes or ())}. Fix the class names."
            )


def build_eval_config(
    request: EvaluationRequest, classes: Optional[Sequence[str]] = None, baseline: Optional[Baseline] = None
) -> tfma.EvalConfig:
    """The EvalConfig for a label with `classes` (in class-index order).

    Args:
      request: the spec's metrics and thresholds.
      classes: the label's class names in index order; None: binary (classification) or regression.
      baseline: with no thresholds in the spec, the trivial model to beat; its metric is added if undeclared.

    Returns:
      A `tfma.EvalConfig` for the model's `serving_default` signature, gated by the thresholds.

    Raises:
      ValueError: a metric does not fit the label's number of classes, or a threshold names an unknown class.
    """
    num_classes = num_classes_of(request, classes)
    _check(request, classes, num_classes)
    multiclass = num_classes > 2
    thresholds = dict(request.thresholds)
    metrics = list(request.metrics)
    if baseline is not None:
        thresholds[baseline.metric] = baseline.threshold()
        if baseline.metric not in metrics:
            metrics.append(baseline.metric)

    plain: list[tfma.MetricConfig] = []
    specs: list[tfma.MetricsSpec] = []
    per_class: dict[int, list[tfma.MetricConfig]] = {}
    for name in metrics:
        entry = metric_table.METRICS[name]
        gate = thresholds.get(name)
        if not multiclass:
            plain.append(_metric(entry.binary_class, name, gate))
        elif name in metric_table.PER_CLASS:
            wanted = {str(c) for c in (gate or {}).get("classes") or ()}
            for class_id, class_name in enumerate(classes):
                gated = gate if not wanted or str(class_name) in wanted else None
                per_class.setdefault(class_id, []).append(
                    _metric(entry.multiclass_class, f"{name}@{class_name}", gated)
                )
        elif name in ("macro_auc", "weighted_auc"):
            weights = {i: 1.0 for i in range(num_classes)}
            aggregate = (
                tfma.AggregationOptions(macro_average=True, class_weights=weights)
                if name == "macro_auc"
                else tfma.AggregationOptions(weighted_macro_average=True, class_weights=weights)
            )
            specs.append(tfma.MetricsSpec(metrics=[_metric(entry.multiclass_class, name, gate)], aggregate=aggregate))
        elif name == "top_k_accuracy":
            plain.append(_metric(entry.multiclass_class, name, gate, k=request.top_k))
        else:
            plain.append(_metric(entry.multiclass_class, name, gate))
    for class_id, configs in sorted(per_class.items()):
        specs.append(
            tfma.MetricsSpec(metrics=configs, binarize=tfma.BinarizationOptions(class_ids={"values": [class_id]}))
        )
    return tfma.EvalConfig(
        model_specs=[model_spec(request, classes)],
        slicing_specs=[tfma.SlicingSpec()],
        metrics_specs=[tfma.MetricsSpec(metrics=plain)] + specs,
    )


def model_spec(request: EvaluationRequest, classes: Optional[Sequence[str]]) -> tfma.ModelSpec:
    """The candidate's ModelSpec: binary models are scored on `probability`, multi-class ones on `scores`."""
    if request.task == "regression":
        prediction_key = "prediction"
    else:
        prediction_key = "scores" if num_classes_of(request, classes) > 2 else "probability"
    return tfma.ModelSpec(
        signature_name="serving_default",
        label_key=request.label_key,
        prediction_key=prediction_key,
        preprocessing_function_names=["transform_features"],
        # A fixed batch: Beam's adaptive batching starts at one row
        # per model call, which dominates on small eval splits.
        inference_batch_size=1024,
    )


def slices_by_features(eval_config: tfma.EvalConfig) -> bool:
    """Whether slicing reads the raw features (a feature slice, a SQL slice or a cross slice)."""
    if eval_config.cross_slicing_specs:
        return True
    return any(spec.feature_keys or spec.feature_values or spec.slice_keys_sql for spec in eval_config.slicing_specs)
