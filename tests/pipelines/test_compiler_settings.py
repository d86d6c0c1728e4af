"""Spec settings reach the components that use them: the Evaluator's sample and the Deployer's request size."""

from __future__ import annotations

from taxi_fixtures import taxi_spec, write_spec

from components.evaluator.eval_config import EvaluationRequest
from pipelines.api import compile as compile_pipeline
from pipelines.spec import load_spec


def _components(tmp_path, taxi_sample_csv, **sections) -> dict:
    spec = taxi_spec(taxi_sample_csv, str(tmp_path / "root"), **sections)
    return {c.id: c for c in compile_pipeline(load_spec(write_spec(tmp_path / "spec.yaml", spec))).components}


def _evaluation_request(evaluator) -> EvaluationRequest:
    return EvaluationRequest.from_flags(evaluator.executor_spec.extra_flags)


def test_evaluation_sample_rows_reaches_the_evaluator(tmp_path, taxi_sample_csv):
    sampled = _components(tmp_path, taxi_sample_csv, evaluation={"sample_rows": 5000})
    assert _evaluation_request(sampled["Evaluator"]).sample_rows == 5000
    whole = _components(tmp_path, taxi_sample_csv)
    assert _evaluation_request(whole["Evaluator"]).sample_rows is None


def test_deploy_max_request_mb_reaches_the_deployer(tmp_path, taxi_sample_csv):
    declared = _components(tmp_path, taxi_sample_csv, deploy={"enabled": True, "max_request_mb": 24})
    assert declared["Deployer"].exec_properties["max_request_mb"] == 24.0
    default = _components(tmp_path, taxi_sample_csv, deploy={"enabled": True})
    assert default["Deployer"].exec_properties["max_request_mb"] == 0.0  # the server's defaults


def test_data_checks_sample_rate_reaches_statistics_gen(tmp_path, taxi_sample_csv):
    import tensorflow_data_validation as tfdv

    sampled = _components(tmp_path, taxi_sample_csv, data={"checks": {"sample_rate": 0.25}})
    options = tfdv.StatsOptions.from_json(sampled["StatisticsGen"].exec_properties["stats_options_json"])
    assert options.sample_rate == 0.25
    whole = _components(tmp_path, taxi_sample_csv)
    assert whole["StatisticsGen"].exec_properties["stats_options_json"] is None
