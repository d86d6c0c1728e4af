"""Evaluator: TFMA metrics of the candidate (and the baseline), the spec's thresholds, the blessing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipelines.builtins.record import Builtin, Compilation
from pipelines.graph.model import Port
from pipelines.spec import metrics as metric_table

if TYPE_CHECKING:
    from components.transform.config import TransformConfig
    from pipelines.spec.resolved import ResolvedSpec

__all__ = ["BUILTIN", "evaluation_request"]


def _thresholds(resolved: ResolvedSpec) -> dict:
    result = {}
    for name, gate in resolved.spec.evaluation.thresholds.items():
        higher = gate.higher_is_better
        if higher is None:
            higher = metric_table.higher_is_better(name)
        result[name] = {
            "min": gate.min,
            "max": gate.max,
            "max_regression": gate.max_regression,
            "higher_is_better": higher,
            "classes": [str(c) for c in gate.classes] if gate.classes else None,
            "per_slice": gate.per_slice,
            "min_examples": gate.slice_min_examples,
        }
    return result


def evaluation_request(resolved: ResolvedSpec, config: TransformConfig):
    """The spec's evaluation section as the Evaluator executor reads it (`EvaluationRequest`).

    Args:
      resolved: the checked spec.
      config: its `transform_config`, whose classes (in index order) the label was compiled with.
    """
    from components.evaluator.eval_config import EvaluationRequest  # TFMA: only when a pipeline is built

    spec = resolved.spec
    return EvaluationRequest(
        label_key=spec.label.name,
        task=spec.label.task,
        metrics=tuple(spec.evaluation.metrics),
        thresholds=_thresholds(resolved),
        top_k=spec.evaluation.top_k,
        classes=tuple(config.class_names) or None,
        sample_rows=spec.evaluation.sample_rows,
        slices=tuple(tuple(columns) for columns in spec.evaluation.slices),
        slice_buckets=spec.evaluation.slice_buckets,
        user_model=spec.training.module_file is not None,
        fairness=_fairness(spec.evaluation.fairness),
        confidence=spec.evaluation.confidence,
    )


def _fairness(fairness) -> dict | None:
    if fairness is None:
        return None
    return {
        "thresholds": [float(cut) for cut in fairness.thresholds],
        "max_gap": {name: float(gap) for name, gap in fairness.max_gap.items()},
        "min_examples": fairness.min_examples,
    }


def _build(compilation: Compilation, inputs: dict):
    from components.evaluator.component import make_evaluator  # TFX: only when a pipeline is built

    # Our executor fits the EvalConfig to the model's classes and records the verdict's reasons.
    return make_evaluator(**inputs, request=evaluation_request(compilation.resolved, compilation.config))


BUILTIN = Builtin(
    id="Evaluator",
    configured_by="evaluation",
    inputs={
        "examples": Port("Examples"),
        "model": Port("Model", True),
        "baseline_model": Port("Model", True),
        "schema": Port("Schema", True),
    },
    outputs={"evaluation": "ModelEvaluation", "blessing": "ModelBlessing"},
    wiring=lambda spec: {
        "examples": "ExampleGen.examples",
        "model": "Trainer.model",
        "baseline_model": "BaselineResolver.model",
    },
    build=_build,
)
