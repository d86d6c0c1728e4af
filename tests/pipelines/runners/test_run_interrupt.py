"""Ctrl-C and SIGTERM in the middle of a component: exit 130 / 143, one line, the report, and the next run resumes.

Each test starts `python -m pipelines run SPEC` as a user does (its own session, as a terminal gives it a process
group), waits in the run's log until StatisticsGen's execution is registered in ML Metadata (its Beam pipeline then
runs for seconds), sends the signal, and runs the spec again.
"""

from __future__ import annotations

import glob
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from taxi_fixtures import REPO, taxi_spec, write_spec

from pipelines.runners.recovery import KILLED_REASON

pytestmark = pytest.mark.e2e

COMPONENT = "StatisticsGen"
ENV = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3", PYTHONUNBUFFERED="1")


def start_run(spec_file: str, folder) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "pipelines", "run", spec_file],
        cwd=REPO,
        env=ENV,
        stdout=open(folder / "stdout.txt", "w"),  # noqa: SIM115 - closed with the process
        stderr=open(folder / "stderr.txt", "w"),  # noqa: SIM115
        start_new_session=True,
    )


def wait_until_executing(process: subprocess.Popen, root: str, component: str) -> None:
    """Waits (up to 10 minutes) until the run's log says `component`'s execution was registered and is running."""
    pattern = re.compile(rf"Component {component} is running.*?Going to run a new execution", re.S)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        assert process.poll() is None, "the run ended before the component started"
        logs = glob.glob(os.path.join(root, "logs", "run-*.log"))
        if logs and pattern.search(open(max(logs, key=os.path.getmtime), encoding="utf-8", errors="replace").read()):
            return
        time.sleep(0.2)
    raise AssertionError(f"{component} did not start within 10 minutes")


def group_is_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


def execution_states(metadata_path: str) -> list[tuple[str, str, str]]:
    """(type name, state, failure reason) of every execution in the ML Metadata store."""
    from ml_metadata.metadata_store import metadata_store
    from ml_metadata.proto import metadata_store_pb2

    config = metadata_store_pb2.ConnectionConfig()
    config.sqlite.filename_uri = metadata_path
    store = metadata_store.MetadataStore(config)
    types = {t.id: t.name for t in store.get_execution_types()}
    return [
        (
            types[e.type_id],
            metadata_store_pb2.Execution.State.Name(e.last_known_state),
            e.custom_properties["failure_reason"].string_value if "failure_reason" in e.custom_properties else "",
        )
        for e in store.get_executions()
    ]


@pytest.mark.parametrize(
    ("name", "send", "code"),
    [
        ("SIGINT", lambda process: os.killpg(process.pid, signal.SIGINT), 130),  # a terminal's Ctrl-C: the group
        ("SIGTERM", lambda process: os.kill(process.pid, signal.SIGTERM), 143),  # docker stop: the process
    ],
)
def test_an_interrupted_run_ends_cleanly_and_the_next_run_resumes(taxi_sample_csv, tmp_path, name, send, code):
    root = str(tmp_path / "root")
    spec_file = write_spec(tmp_path / "spec.yaml", taxi_spec(taxi_sample_csv, root))
    process = start_run(spec_file, tmp_path)
    try:
        wait_until_executing(process, root, COMPONENT)
        send(process)
        returncode = process.wait(timeout=600)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    stdout = (tmp_path / "stdout.txt").read_text()
    stderr = (tmp_path / "stderr.txt").read_text()

    assert returncode == code, stdout + stderr
    (line,) = [text for text in stderr.splitlines() if text.strip()]
    assert line.startswith(f"error: interrupted ({name}) while {COMPONENT} was running.")
    assert f"run `python -m pipelines run {spec_file}` again to resume" in line
    assert "Traceback" not in stdout + stderr
    assert group_is_gone(process.pid), "a process of the run outlived it"
    (report,) = re.findall(r"^Report: (.+)$", stdout, re.M)
    html = open(report, encoding="utf-8").read()
    assert f"Interrupted ({name}) while {COMPONENT} was running." in html
    assert f'data-component="{COMPONENT}" data-status="interrupted"' in html
    assert ("StatisticsGen", "RUNNING") in [
        (t.rsplit(".", 1)[-1], s) for t, s, _ in execution_states(f"{root}/metadata.sqlite")
    ]

    again = subprocess.run(
        [sys.executable, "-m", "pipelines", "run", spec_file],
        cwd=REPO,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=1200,
    )

    assert again.returncode == 0, again.stdout + again.stderr
    assert "Recovered from a killed run: marked 1 execution(s) failed in ML Metadata" in again.stdout
    assert re.search(r"\] ExampleGen\s+cached", again.stdout)
    assert re.search(rf"\] {COMPONENT}\s+executed", again.stdout)
    states = execution_states(f"{root}/metadata.sqlite")
    assert [(t.rsplit(".", 1)[-1], s) for t, s, reason in states if reason == KILLED_REASON] == [
        ("StatisticsGen", "FAILED")
    ]
