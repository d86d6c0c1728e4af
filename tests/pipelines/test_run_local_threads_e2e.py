"""End to end: large data runs Beam on a thread per core, the Evaluator on one.

The taxi sample is small, so the run lowers `IN_PROCESS_MAX_BYTES` to 0
(what data over 64 MiB gets) before calling the CLI as `run_local.py` does. Small data staying on one
thread is checked on the first line of test_run_local_e2e.py's run and by the rule's own tests
(test_beam_args.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from taxi_fixtures import REPO, taxi_spec, write_spec

pytestmark = pytest.mark.e2e

_RUN_AS_LARGE_DATA = """
import sys
import pipelines.beam.args as beam
beam.usable_cores = lambda: 2  # two threads even where the test runs on one core
if sys.argv[2] == "large":
    beam.IN_PROCESS_MAX_BYTES = 0
from pipelines.cli import main
sys.exit(main(["run", sys.argv[1]]))
"""


def _run(spec_file: str, size: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=REPO)
    return subprocess.run(
        [sys.executable, "-c", _RUN_AS_LARGE_DATA, spec_file, size],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=900,
    )


def _metrics(root) -> dict:
    with open(root / "run" / "last_run.json", encoding="utf-8") as handle:
        return json.load(handle)["summary"]["metrics"]


def test_large_data_runs_on_threads_and_blesses_the_model(taxi_sample_csv, tmp_path):
    spec = taxi_spec(taxi_sample_csv, str(tmp_path / "run"))
    completed = _run(write_spec(tmp_path / "spec.yaml", spec), "large")
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    first_line = completed.stdout.splitlines()[0]
    assert first_line.endswith("; Beam on 2 threads (large data; Evaluator on one)"), first_line
    assert "Model: BLESSED" in completed.stdout
    assert set(_metrics(tmp_path)) == {"binary_accuracy", "auc"}
