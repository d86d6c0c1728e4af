"""`runs SPEC` needs only the spec's root: it lists the history after the spec's data file is gone."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from taxi_fixtures import REPO, taxi_spec, write_spec


def cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run(
        [sys.executable, "-m", "pipelines", *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=300
    )


@pytest.fixture
def spec_without_data(tmp_path):
    """A spec whose data file does not exist, and its root holding an ML Metadata store."""
    from ml_metadata import metadata_store
    from ml_metadata.proto import metadata_store_pb2

    root = tmp_path / "root"
    root.mkdir()
    config = metadata_store_pb2.ConnectionConfig()
    config.sqlite.filename_uri = str(root / "metadata.sqlite")
    config.sqlite.connection_mode = metadata_store_pb2.SqliteMetadataSourceConfig.READWRITE_OPENCREATE
    metadata_store.MetadataStore(config)
    return write_spec(tmp_path / "spec.yaml", taxi_spec(str(tmp_path / "gone.csv"), str(root)))


def test_runs_lists_the_history_of_a_spec_whose_data_is_gone(spec_without_data):
    completed = cli("runs", spec_without_data, "--json")
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout) == []


def test_a_spec_that_does_not_parse_is_still_refused(tmp_path):
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text("pipeline: {name: x, rooot: here}\n", encoding="utf-8")
    completed = cli("runs", str(spec_file))
    assert completed.returncode == 2
    assert "Traceback" not in completed.stderr
    assert "rooot" in completed.stderr and completed.stderr.startswith("error: ")
