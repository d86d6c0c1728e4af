"""`run --target beam`: TFX's BeamDagRunner runs the taxi sample end to end, the components' Beam
work on the DirectRunner's FnApiRunner with two worker processes; asserted from ML Metadata, the pushed
model and the log (no Prism download attempt, no package built)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from taxi_fixtures import REPO, taxi_spec, write_spec

from pipelines.targets.mlmd_states import states_after

pytestmark = pytest.mark.e2e

MULTI_PROCESSING = ["--runner=DirectRunner", "--direct_running_mode=multi_processing", "--direct_num_workers=2"]


def test_beam_target_runs_the_pipeline_with_direct_runner_multi_processing(taxi_sample_csv, tmp_path):
    spec = taxi_spec(
        taxi_sample_csv,
        str(tmp_path / "run"),
        orchestrator={"beam_args": MULTI_PROCESSING, "components": {"Trainer": {"gpus": 1, "retries": 1}}},
    )
    spec["training"].update(train_steps=50, eval_steps=5)
    spec_file = write_spec(tmp_path / "spec.yaml", spec)
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    completed = subprocess.run(
        [sys.executable, os.path.join(REPO, "pipelines", "run_local.py"), spec_file, "--target", "beam"],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )

    assert completed.returncode == 0, completed.stdout + completed.stderr
    fn_api = ["--runner=apache_beam.runners.portability.fn_api_runner.FnApiRunner", *MULTI_PROCESSING[1:]]
    setup_file = "--setup_file=" + os.path.join(REPO, "setup.py")
    assert "on BeamDagRunner, components' Beam args: " + " ".join([*fn_api, setup_file]) in completed.stdout
    assert (
        "warning: orchestrator.components.Trainer: the beam target cannot honour gpus=1, retries=1" in completed.stderr
    )
    states = states_after(str(tmp_path / "run" / "metadata.sqlite"), 0)
    expected = ["ExampleGen", "StatisticsGen", "SchemaGen", "ExampleValidator", "DataGate", "Transform", "Trainer"]
    assert {c: states.get(c) for c in expected + ["Evaluator", "Pusher"]} == {
        c: "COMPLETE" for c in expected + ["Evaluator", "Pusher"]
    }
    assert os.listdir(tmp_path / "run" / "serving" / "chicago_taxi")
    # Beam's worker processes started: the SDK harness runs in subprocesses only in multi_processing mode.
    log = open(next((tmp_path / "run" / "logs").glob("beam-*.log")), encoding="utf-8").read()
    assert "sdk_worker_main" in log or "SubprocessSdkWorker" in log or "multi_processing" in log
    assert "PrismRunner" not in log and "prism" not in log.lower()
    assert "sdist" not in log and "tfx_ephemeral" not in log
