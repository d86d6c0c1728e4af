"""Helpers shared by tests: the taxi data, a spec writer and the CLI runner.

A plain module (not conftest.py) so tests can import it by a name that is
unique: every conftest.py outside a package is imported as `conftest`.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAXI_CSV = os.path.join(
    os.path.dirname(importlib.util.find_spec("tfx").origin), "examples/chicago_taxi_pipeline/data/simple/data.csv"
)


def taxi_spec(data_path: str, root: str, slices: bool = False, **sections) -> dict:
    """The bundled example's spec, pointed at `data_path`, with fewer steps and a plain gate.

    Args:
      slices: keep the example's `evaluation.slices` (dropped by default: every
        run that keeps them pays for per-slice metrics; test_run_local_e2e and
        test_slices_e2e are the runs that check slices).
    """
    with open(os.path.join(REPO, "pipelines/examples/chicago_taxi.yaml"), encoding="utf-8") as handle:
        spec = yaml.safe_load(handle)
    spec["pipeline"]["root"] = root
    spec["data"]["path"] = data_path
    spec["training"].update(train_steps=200, eval_steps=20, batch_size=64)
    spec["evaluation"]["thresholds"] = {"binary_accuracy": {"min": 0.5}}
    if not slices:
        spec["evaluation"].pop("slices", None)
    for name, value in sections.items():
        if isinstance(value, dict):
            spec.setdefault(name, {}).update(value)
        else:
            spec[name] = value
    return spec


def write_spec(path, spec: dict) -> str:
    with open(path, "w", encoding="utf-8") as handle:
        yaml.safe_dump(spec, handle, sort_keys=False)
    return str(path)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """Runs `python pipelines/run_local.py ARGS` as a user would."""
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run(
        [sys.executable, os.path.join(REPO, "pipelines", "run_local.py"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )


def made_once_per_session(tmp_path_factory, name: str, make: Callable[[Path], dict]) -> dict:
    """`make(folder)`'s JSON-able record, made once per pytest session for every pytest-xdist worker.

    `folder` is `name` under the base temp folder the session's workers share (the session's own without
    xdist). A worker that asks while another makes it waits on an flock for the record instead of making
    it again; what a failed attempt left in the folder is removed before the next one.
    """
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # each worker's base is popen-gwN under the session's folder
        base = base.parent
    folder, record = base / name, base / f"{name}.json"
    with open(base / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not record.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            made = make(folder)
            record.write_text(json.dumps(made), encoding="utf-8")
        return json.loads(record.read_text(encoding="utf-8"))
