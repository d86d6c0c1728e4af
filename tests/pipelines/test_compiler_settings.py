"""Spec settings reach the components that use them: samples, the Deployer's request size, Beam plugins."""

from __future__ import annotations

from taxi_fixtures import taxi_spec, write_spec

from components.evaluator.eval_config import EvaluationRequest
from pipelines.api import compile as compile_pipeline
from pipelines.load import load_spec


def _components(tmp_path, taxi_sample_csv, **sections) -> dict:
    return {c.id: c for c in _pipeline(tmp_path, taxi_sample_csv, **sections).components}


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


def test_wordpiece_loads_tensorflow_text_in_beam_workers(tmp_path, taxi_sample_csv):
    wordpiece = _pipeline(
        tmp_path,
        taxi_sample_csv,
        features={"company": {"transform": "text", "sequence_length": 8, "tokenizer": "wordpiece"}},
        model={"type": "text_classifier", "num_layers": 1},
    )
    assert wordpiece.beam_pipeline_args.count("--beam_plugins=tensorflow_text") == 1
    assert not [a for a in _pipeline(tmp_path, taxi_sample_csv).beam_pipeline_args if "beam_plugins" in a]


def test_the_data_files_separator_reaches_example_gen(tmp_path, taxi_sample_csv):
    import csv

    from components.example_gen.csv_executor import read_settings

    tabbed = tmp_path / "taxi.tsv"
    with open(taxi_sample_csv, newline="", encoding="utf-8") as source, open(tabbed, "w", newline="") as target:
        csv.writer(target, delimiter="\t").writerows(csv.reader(source))
    by_name = _components(tmp_path, str(tabbed))["ExampleGen"]
    assert read_settings(by_name.exec_properties).dialect.delimiter == "\t"
    comma = _components(tmp_path, taxi_sample_csv)["ExampleGen"]
    assert read_settings(comma.exec_properties).dialect.delimiter == ","


def _pipeline(tmp_path, taxi_sample_csv, **sections):
    spec = taxi_spec(taxi_sample_csv, str(tmp_path / "root"), **sections)
    return compile_pipeline(load_spec(write_spec(tmp_path / "spec.yaml", spec)))


def test_a_regression_labels_mean_and_spread_reach_the_trainer(tmp_path, taxi_sample_csv):
    import csv
    import json

    import numpy as np

    with open(taxi_sample_csv, newline="", encoding="utf-8") as handle:
        tips = np.array([float(row["tips"]) for row in csv.DictReader(handle)])
    regression = _components(
        tmp_path,
        taxi_sample_csv,
        label={"name": "tip", "column": "tips", "task": "regression", "expression": None},
        evaluation={"metrics": ["mean_absolute_error"], "thresholds": {}},
    )
    mean, std = json.loads(regression["Trainer"].exec_properties["custom_config"])["label_scale"]
    assert abs(mean - tips.mean()) < 1e-9
    assert abs(std - tips.std()) < 1e-9
    classification = _components(tmp_path, taxi_sample_csv)["Trainer"]
    assert "label_scale" not in json.loads(classification.exec_properties["custom_config"])  # its cache key holds
