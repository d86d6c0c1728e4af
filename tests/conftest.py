"""Shared fixtures: the repo path and a sample of the taxi data."""

from __future__ import annotations

import os
import sys

import pytest

os.environ["TF_USE_LEGACY_KERAS"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from taxi_fixtures import REPO, TAXI_CSV  # noqa: E402

if REPO not in sys.path:
    sys.path.insert(0, REPO)


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
