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


def pytest_collection_modifyitems(config, items) -> None:
    """The pipeline-running (`e2e`) modules first, each module's tests kept together and in order.

    `make test` hands whole modules to two pytest-xdist workers in collection order (`--dist loadfile
    --no-loadscope-reorder`; xdist's own reorder puts the modules with most tests first, which left the
    1-3 test modules whose fixtures run pipelines for 60-120 s at the end, one worker idle while the
    other finished them). Longest first, the many short modules even out the end.
    """
    running = {item.nodeid.split("::", 1)[0] for item in items if item.get_closest_marker("e2e")}
    items.sort(key=lambda item: 0 if item.nodeid.split("::", 1)[0] in running else 1)
