"""The Evaluator node: our executor with the spec's request as its flag, and the compile-time EvalConfig."""

from __future__ import annotations

import json

from tfx.types import Channel, standard_artifacts

from components.evaluator.component import make_evaluator, preview_eval_config
from components.evaluator.eval_config import EvaluationRequest
from components.evaluator.executor import Executor


def _request(**kwargs) -> EvaluationRequest:
    values = {"label_key": "species", "task": "classification", "metrics": ("accuracy", "macro_auc")}
    return EvaluationRequest(**{**values, **kwargs})


def test_evaluator_runs_our_executor_with_the_request_flag():
    request = _request(thresholds={"macro_auc": {"min": 0.9}}, classes=("Adelie", "Chinstrap", "Gentoo"))

    node = make_evaluator(
        Channel(type=standard_artifacts.Examples),
        Channel(type=standard_artifacts.Model),
        Channel(type=standard_artifacts.Model),
        request,
    )

    assert node.id == "Evaluator"
    assert node.executor_spec.executor_class is Executor
    assert EvaluationRequest.from_flags(node.executor_spec.extra_flags) == request
    config = json.loads(node.exec_properties["eval_config"])
    assert config["model_specs"][0]["prediction_key"] == "scores"


def test_preview_without_known_classes_holds_the_model_spec_only():
    # `macro_auc` needs the number of classes, which only the model tells here.
    config = preview_eval_config(_request())

    assert not config.metrics_specs
    assert config.model_specs[0].label_key == "species"
