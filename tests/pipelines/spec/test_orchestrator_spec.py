"""The `orchestrator:` section: schedules, per-component settings, and their error messages."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pipelines.spec.cron import cron_problem, five_field


@pytest.mark.parametrize(
    "cron",
    [
        "0 3 * * *",
        "*/15 * * * *",
        "30 2 * * 1-5",
        "0 0 1,15 * *",
        "0 9 * jan-mar mon",
        "5 4 * * sun",
        "@daily",
        "@hourly",
    ],
)
def test_valid_cron_expressions_pass(cron):
    assert cron_problem(cron) is None


@pytest.mark.parametrize(
    "cron, expected",
    [
        ("0 25 * * *", "the hour field `25` is outside 0-23"),
        ("60 * * * *", "the minute field `60` is outside 0-59"),
        ("0 3 * *", "a cron expression has 5 fields"),
        ("0 3 * * * *", "this one has 6"),
        ("0 3 0 * *", "the day of month field `0` is outside 1-31"),
        ("0 3 * 13 *", "the month field `13` is outside 1-12"),
        ("0 3 * * 8", "the day of week field `8` is outside 0-7"),
        ("*/0 * * * *", "has a step of 0"),
        ("5-1 * * * *", "runs backwards"),
        ("0 3 ? * *", "is not `*`, a number, a range"),
        ("@fortnightly", "is not a known macro"),
    ],
)
def test_invalid_cron_expressions_say_why(cron, expected):
    assert expected in cron_problem(cron)


@pytest.mark.parametrize("cron", ["0 3 * * *", "*/15 1-5 * * mon-fri", "0 0 1 jan *", "0 25 * * *", "61 * * * *"])
def test_checker_agrees_with_croniter_where_it_is_installed(cron):
    croniter = pytest.importorskip("croniter")
    assert (cron_problem(cron) is None) == croniter.croniter.is_valid(cron)


def test_macros_are_spelled_out_for_engines_that_want_five_fields():
    assert five_field("@daily") == "0 0 * * *"
    assert five_field("0 3 * * *") == "0 3 * * *"


def test_an_invalid_schedule_is_reported_with_path_and_line(make_spec, spec_problems, line_with):
    path = make_spec({"orchestrator": {"target": "airflow", "schedule": "0 25 * * *"}})
    (problem,) = spec_problems(path)
    assert problem.path == "orchestrator.schedule"
    assert problem.line == line_with(path, "schedule:")
    assert problem.message.startswith("invalid cron expression: the hour field `25` is outside 0-23. Expected ")
    assert "Received: '0 25 * * *'" in problem.message


def test_an_unknown_component_gets_a_did_you_mean(make_spec, spec_problems):
    path = make_spec({"orchestrator": {"components": {"Trainr": {"gpus": 1}}}})
    (problem,) = spec_problems(path)
    assert problem.path == "orchestrator.components.Trainr"
    assert "unknown component `Trainr`. Did you mean `Trainer`?" in problem.message


def test_workers_belong_to_the_trainer(make_spec, spec_problems):
    path = make_spec({"orchestrator": {"components": {"Evaluator": {"workers": 2}}}})
    (problem,) = spec_problems(path)
    assert problem.path == "orchestrator.components.Evaluator.workers"
    assert "only the Trainer runs on several workers" in problem.message


@pytest.mark.parametrize(
    "settings, expected",
    [
        ({"memory": "lots"}, "`memory` must be a Kubernetes quantity."),
        ({"accelerator": "NVIDIA_TESLA_T4"}, "`accelerator` needs `gpus`."),
        ({"retries": -1}, "`retries` must be 0 or more."),
        ({"timeout_seconds": 0}, "`timeout_seconds` must be at least 1."),
        ({"cpu": 0}, "`cpu` must be above 0 cores."),
        ({"gpu": 1}, "unknown key `gpu`. Did you mean `gpus`?"),
    ],
)
def test_bad_component_settings(make_spec, spec_problems, settings, expected):
    path = make_spec({"orchestrator": {"components": {"Trainer": settings}}})
    (problem,) = spec_problems(path)
    assert expected in problem.message


def test_an_unknown_target_is_an_error(make_spec, spec_problems):
    (problem,) = spec_problems(make_spec({"orchestrator": {"target": "kubeflw"}}))
    assert problem.path == "orchestrator.target"
    assert "Did you mean `kubeflow`?" in problem.message


def test_cli_validate_exits_2_on_a_bad_schedule_and_writes_nothing(make_spec, repo_dir, tmp_path):
    path = make_spec({"orchestrator": {"schedule": "every day"}})
    before = sorted(os.listdir(tmp_path))
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1")
    result = subprocess.run(
        [sys.executable, "-m", "pipelines", "validate", str(path)],
        cwd=repo_dir,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert f"{path}:" in result.stderr and ": orchestrator.schedule: invalid cron expression" in result.stderr
    assert sorted(os.listdir(tmp_path)) == before


def test_component_memory_converts_to_bytes():
    from pipelines.spec.orchestrator import ComponentRunSpec

    assert ComponentRunSpec(memory="16Gi").memory_bytes == 16 * 2**30
    assert ComponentRunSpec(memory="500M").memory_bytes == 500 * 10**6
