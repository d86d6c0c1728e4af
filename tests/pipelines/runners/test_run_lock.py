"""One run at a time per pipeline root, with real processes holding the lock."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys

import pytest
from taxi_fixtures import REPO, run_cli, taxi_spec, write_spec

from pipelines.runners.lock import LOCK_FILE, RootBusy, RunLock

HOLDER = """
import sys, time
from pipelines.runners.lock import RunLock
with RunLock(sys.argv[1]):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
    print("releasing", flush=True)
"""


@pytest.fixture
def holder(tmp_path):
    """Starts a process that holds the lock on a root for `seconds`; returns it once it holds the lock."""
    started = []

    def start(root, seconds: float = 60.0) -> subprocess.Popen:
        process = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(root), str(seconds)],
            cwd=REPO,
            env=dict(os.environ, PYTHONPATH=REPO),
            stdout=subprocess.PIPE,
            text=True,
        )
        started.append(process)
        assert process.stdout.readline().strip() == "held"
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait()


def test_a_second_run_fails_at_once_naming_the_holder(tmp_path, holder):
    process = holder(tmp_path / "root")

    with pytest.raises(RootBusy) as caught:
        with RunLock(str(tmp_path / "root")):
            pytest.fail("took a lock that another process holds")

    message = str(caught.value)
    assert f"another run is using the pipeline root {tmp_path / 'root'}: pid {process.pid} on " in message
    assert caught.value.holder["pid"] == process.pid
    assert f", started {caught.value.holder['started']} (lock file {tmp_path / 'root' / LOCK_FILE})" in message
    assert "pass `--wait SECONDS`" in message


def test_a_waiting_run_starts_once_the_holder_is_done(tmp_path, holder):
    process = holder(tmp_path / "root", seconds=1.0)

    with RunLock(str(tmp_path / "root"), wait_seconds=60):
        # The holder wrote "releasing" just before letting go: it is already there to read, without waiting.
        assert select.select([process.stdout], [], [], 0)[0] == [process.stdout]
        assert process.stdout.readline().strip() == "releasing"
        record = json.loads((tmp_path / "root" / LOCK_FILE).read_text(encoding="utf-8"))
        assert record["pid"] == os.getpid()


def test_a_killed_holder_does_not_block_the_next_run(tmp_path, holder):
    process = holder(tmp_path / "root")
    process.send_signal(signal.SIGKILL)
    process.wait()

    with RunLock(str(tmp_path / "root")):
        assert (tmp_path / "root" / LOCK_FILE).exists()


def test_run_command_exits_1_naming_the_holder_and_runs_nothing(tmp_path, holder, taxi_sample_csv):
    root = tmp_path / "root"
    spec_file = write_spec(tmp_path / "spec.yaml", taxi_spec(taxi_sample_csv, str(root)))
    process = holder(root)

    completed = run_cli(spec_file)

    assert completed.returncode == 1, completed.stderr
    [line] = [text for text in completed.stderr.splitlines() if text.startswith("error: ")]
    assert line.startswith(f"error: another run is using the pipeline root {root}: pid {process.pid} on ")
    assert "Traceback" not in completed.stderr
    assert sorted(os.listdir(root)) == [LOCK_FILE]  # no metadata, no artifacts, no logs


def test_a_run_that_loses_the_race_by_a_moment_still_names_the_holder(tmp_path):
    # The holder takes the lock, then writes its details 0.5 s later (as a run that just won a race does).
    script = f"""
import fcntl, json, os, sys, time
handle = open({str(tmp_path / LOCK_FILE)!r}, "a+")
fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(0.5)
handle.write(json.dumps({{"pid": os.getpid(), "host": "h", "started": "s"}}))
handle.flush()
sys.stdin.readline()
"""
    process = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "locked"
        with pytest.raises(RootBusy) as busy:
            RunLock(str(tmp_path)).__enter__()
        assert f"pid {process.pid} on h" in str(busy.value)
    finally:
        process.communicate("\n", timeout=10)
