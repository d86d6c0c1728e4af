"""A broken `<root>/metadata.sqlite` (junk bytes, truncated) is one `error:` line naming the file and the fix.

Every command that opens a root's ML Metadata is run as a user runs it: `run` (the recovery at its
start opens it first), `runs`, `runs show` and `ui`.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from taxi_fixtures import REPO, taxi_spec, write_spec


def _new_store(path: str) -> None:
    from ml_metadata import metadata_store
    from ml_metadata.proto import metadata_store_pb2

    config = metadata_store_pb2.ConnectionConfig()
    config.sqlite.filename_uri = path
    config.sqlite.connection_mode = metadata_store_pb2.SqliteMetadataSourceConfig.READWRITE_OPENCREATE
    metadata_store.MetadataStore(config)


def _break(path: str, how: str) -> None:
    if how == "junk":
        with open(path, "wb") as handle:
            handle.write(bytes(range(256)) * 20)
    else:  # truncated: the start of a real store, as a full disk or a killed copy leaves it
        _new_store(path)
        with open(path, "r+b") as handle:
            handle.truncate(2000)


def cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run(
        [sys.executable, "-m", "pipelines", *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=300
    )


@pytest.fixture
def broken_root(tmp_path, request, taxi_sample_csv):
    root = tmp_path / "root"
    root.mkdir()
    _break(str(root / "metadata.sqlite"), request.param)
    spec_file = write_spec(tmp_path / "spec.yaml", taxi_spec(taxi_sample_csv, str(root)))
    return str(root), spec_file


def _assert_one_line_naming_the_file_and_the_fix(completed, root: str) -> None:
    assert completed.returncode != 0, completed.stdout
    assert "Traceback" not in completed.stdout + completed.stderr, completed.stderr
    (line,) = completed.stderr.strip().splitlines()
    path = os.path.join(root, "metadata.sqlite")
    assert line.startswith(f"error: {path}: the pipeline root's ML Metadata cannot be read: "), line
    assert f"Move it aside to start a new history (`mv {path} {path}.broken`)" in line
    assert f"the artifacts under {os.path.join(root, 'artifacts')} stay" in line


@pytest.mark.parametrize("broken_root", ["junk", "truncated"], indirect=True)
@pytest.mark.parametrize("command", [["runs", "{spec}"], ["runs", "{root}", "show", "latest"], ["ui", "{root}"]])
def test_history_commands_name_the_broken_file_and_the_fix(broken_root, command):
    root, spec_file = broken_root
    completed = cli(
        *(part.format(root=root, spec=spec_file) for part in command), *(["--port", "0"][: 2 * (command[0] == "ui")])
    )
    _assert_one_line_naming_the_file_and_the_fix(completed, root)


@pytest.mark.parametrize("broken_root", ["junk"], indirect=True)
def test_a_run_names_the_broken_file_and_the_fix_before_running_anything(broken_root):
    root, spec_file = broken_root
    completed = cli("run", spec_file)
    _assert_one_line_naming_the_file_and_the_fix(completed, root)
    assert completed.returncode == 1
    assert not os.path.exists(os.path.join(root, "artifacts"))


def test_an_empty_metadata_file_is_named_too(tmp_path):
    (tmp_path / "metadata.sqlite").write_bytes(b"")
    completed = cli("runs", str(tmp_path))
    _assert_one_line_naming_the_file_and_the_fix(completed, str(tmp_path))
    assert "cannot be read: the file is empty." in completed.stderr
