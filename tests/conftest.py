"""Shared fixtures: a sample of the taxi data and a spec writer."""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ["TF_USE_LEGACY_KERAS"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
if REPO not in sys.path:
    sys.path.insert(0, REPO)

TAXI_CSV = os.path.join(
    os.path.dirname(importlib.util.find_spec("tfx").origin), "examples/chicago_taxi_pipeline/data/simple/data.csv"
)


@pytest.fixture(scope="session")
def repo_dir() -> str:
    return REPO


@pytest.fixture(scope="session")
def taxi_sample_csv(tmp_path_factory) -> str:
    """Every 7th row of TFX's taxi CSV (about 2,100 rows), with its header."""
    path = tmp_path_factory.mktemp("taxi_data") / "taxi.csv"
    with open(TAXI_CSV, encoding="utf-8") as source:
        header, *rows = source.readlines()
    path.write_text(header + "".join(rows[::7]), encoding="utf-8")
    return str(path)


def taxi_spec(data_path: str, root: str, **sections) -> dict:
    """The bundled example's spec, pointed at `data_path`, with fewer steps."""
    with open(os.path.join(REPO, "pipelines/examples/chicago_taxi.yaml"), encoding="utf-8") as handle:
        spec = yaml.safe_load(handle)
    spec["pipeline"]["root"] = root
    spec["data"]["path"] = data_path
    # One row in the whole taxi file has a pickup census tract.
    del spec["features"]["pickup_census_tract"]
    spec["training"].update(train_steps=200, eval_steps=20, batch_size=64)
    spec["evaluation"]["thresholds"] = {"binary_accuracy": {"min": 0.5}}
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
