"""Helpers for tests that run the bundled examples in `pipelines/examples/`.

A plain module (not conftest.py) with a unique name, importable from any test
folder (tests/conftest.py puts tests/ on sys.path).
"""

from __future__ import annotations

import glob
import json
import os

import yaml
from taxi_fixtures import REPO, run_cli, write_spec

EXAMPLES = os.path.join(REPO, "pipelines", "examples")


def example_spec(name: str, root: str, **sections) -> dict:
    """The shipped `<name>.yaml` with its root under `root`, an absolute data path and `sections` merged in."""
    with open(os.path.join(EXAMPLES, f"{name}.yaml"), encoding="utf-8") as handle:
        spec = yaml.safe_load(handle)
    spec["pipeline"]["root"] = root
    if not spec["data"]["path"].startswith("package://"):
        spec["data"]["path"] = os.path.join(EXAMPLES, spec["data"]["path"])
    for section, values in sections.items():
        spec.setdefault(section, {}).update(values)
    return spec


def run_example(tmp_path, spec: dict) -> tuple[dict, str]:
    """Runs `spec` through the CLI with the examples' user modules importable.

    Returns:
      (the run summary recorded in `last_run.json`, the CLI's stdout).
    """
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (EXAMPLES, saved) if p)
    try:
        completed = run_cli(write_spec(tmp_path / "spec.yaml", spec))
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = saved
    assert completed.returncode == 0, completed.stdout + completed.stderr[-3000:]
    with open(os.path.join(spec["pipeline"]["root"], "last_run.json"), encoding="utf-8") as handle:
        return json.load(handle)["summary"], completed.stdout


def exported_model_dir(root: str) -> str:
    """The Trainer's serving model under a pipeline root."""
    (export,) = glob.glob(os.path.join(root, "artifacts", "Trainer", "model", "*", "Format-Serving"))
    return export


def trained_variables(root: str) -> dict[str, tuple]:
    """Variable name -> shape of the model the Trainer exported."""
    import tensorflow as tf

    loaded = tf.saved_model.load(exported_model_dir(root))
    variables = getattr(loaded, "model_variables", None) or loaded.variables
    return {v.name: tuple(v.shape) for v in variables}
