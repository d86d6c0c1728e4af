"""TFX's Evaluator, run by our executor (`executor.py`) with the spec's evaluation request."""

from __future__ import annotations

from typing import Optional

import tensorflow_model_analysis as tfma

from components.evaluator.eval_config import EvaluationRequest, build_eval_config, model_spec

__all__ = ["make_evaluator", "preview_eval_config"]


def preview_eval_config(request: EvaluationRequest) -> tfma.EvalConfig:
    """The EvalConfig as far as the spec tells, before the model's classes are known.

    The executor rebuilds it at run time; this one is what `describe`-style
    tools and the pipeline IR show. When the spec does not declare the
    classes and a metric needs to know how many there are, it holds the
    model spec only.

    Args:
      request: the spec's evaluation request.

    Returns:
      A `tfma.EvalConfig`.
    """
    try:
        return build_eval_config(request, request.classes)
    except ValueError:
        if request.classes:
            raise
        return tfma.EvalConfig(model_specs=[model_spec(request, None)], slicing_specs=[tfma.SlicingSpec()])


def make_evaluator(examples, model, baseline_model, request: EvaluationRequest, component_id: Optional[str] = None):
    """TFX's Evaluator on the `eval` split, with our executor and `request` as its flag.

    Args:
      examples: the ExampleGen `examples` channel.
      model: the candidate `Model` channel.
      baseline_model: the last blessed `Model` channel (change thresholds).
      request: the spec's metrics and thresholds.
      component_id: the node id (default `Evaluator`).

    Returns:
      The `tfx.components.Evaluator` node.
    """
    from tfx.components import Evaluator
    from tfx.dsl.components.base import executor_spec

    from components.evaluator.executor import Executor  # TFMA and Beam: only when the Evaluator is built

    evaluator = Evaluator(
        examples=examples,
        model=model,
        baseline_model=baseline_model,
        eval_config=preview_eval_config(request),
        example_splits=["eval"],
    ).with_id(component_id or "Evaluator")
    spec = executor_spec.BeamExecutorSpec(Executor)
    # The request is part of the executor spec, so TFX's cache key changes with it.
    spec.add_extra_flags([request.to_flag()])
    evaluator.executor_spec = spec
    return evaluator
