"""After a run is killed, the next run marks its executions failed in ML Metadata and removes its leftovers."""

from __future__ import annotations

import collections
import csv
import os
import signal
import subprocess
import sys
import time

import pytest
from taxi_fixtures import REPO, taxi_spec, write_spec

from pipelines.load import load_spec
from pipelines.runners.recovery import KILLED_REASON, recover_killed_run, remove_staging


def _store(path: str):
    from ml_metadata.metadata_store import metadata_store
    from ml_metadata.proto import metadata_store_pb2

    config = metadata_store_pb2.ConnectionConfig()
    config.sqlite.filename_uri = path
    config.sqlite.connection_mode = metadata_store_pb2.SqliteMetadataSourceConfig.READWRITE_OPENCREATE
    return metadata_store.MetadataStore(config)


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_recovery_fails_running_executions_and_removes_only_their_leftovers(tmp_path, taxi_sample_csv):
    from ml_metadata.proto import metadata_store_pb2

    resolved = load_spec(write_spec(tmp_path / "spec.yaml", taxi_spec(taxi_sample_csv, str(tmp_path / "root"))))
    os.makedirs(resolved.root)
    store = _store(resolved.metadata_path)
    type_id = store.put_execution_type(metadata_store_pb2.ExecutionType(name="Trainer"))
    running, complete = store.put_executions(
        [
            metadata_store_pb2.Execution(type_id=type_id, last_known_state=metadata_store_pb2.Execution.RUNNING),
            metadata_store_pb2.Execution(type_id=type_id, last_known_state=metadata_store_pb2.Execution.COMPLETE),
        ]
    )
    node = os.path.join(resolved.artifact_root, "Trainer")
    partial = [
        os.path.join(node, "model", str(running)),
        os.path.join(node, ".system", "executor_execution", str(running)),
    ]
    finished = os.path.join(node, "model", str(complete))
    model_dir = os.path.join(resolved.serving_dir, resolved.model_name)
    dead_staging = os.path.join(model_dir, f".tmp-1795338268-{_dead_pid()}")
    live_staging = os.path.join(model_dir, f".tmp-1795338269-{os.getpid()}")
    version = os.path.join(model_dir, "1795338200")
    for folder in [*partial, finished, dead_staging, live_staging, version]:
        os.makedirs(folder)
    half_record = os.path.join(resolved.root, "last_run.json.tmp-4242")
    open(half_record, "w").close()

    recovered = recover_killed_run(resolved)

    [failed, kept] = _store(resolved.metadata_path).get_executions_by_id([running, complete])
    assert failed.last_known_state == metadata_store_pb2.Execution.FAILED
    assert failed.custom_properties["failure_reason"].string_value == KILLED_REASON
    assert kept.last_known_state == metadata_store_pb2.Execution.COMPLETE
    assert recovered.failed_executions == [running]
    assert sorted(recovered.removed) == sorted([*partial, dead_staging, half_record])
    assert not any(os.path.exists(path) for path in recovered.removed)
    assert all(os.path.isdir(path) for path in (finished, live_staging, version))
    assert recovered.describe().startswith(
        f"Recovered from a killed run: marked 1 execution(s) failed in ML Metadata (ids {running})"
    )


def test_a_staging_folder_whose_pid_was_reused_is_removed(tmp_path):
    """A live pid whose process started after the folder was made is not the Pusher that made it."""
    model_dir = tmp_path / "serving" / "model"
    model_dir.mkdir(parents=True)
    reused = model_dir / ".tmp-1795338268-PID"
    ours = model_dir / f".tmp-1795338269-{os.getpid()}"
    ours.mkdir()
    hour_ago = time.time() - 3600
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])  # started after the folders
    try:
        reused = reused.with_name(f".tmp-1795338268-{process.pid}")
        reused.mkdir()
        os.utime(reused, (hour_ago, hour_ago))
        left_by_it = model_dir / f".tmp-1795338270-{process.pid}"
        left_by_it.mkdir()  # made after the process started: it may be its own

        removed = remove_staging(str(model_dir))
    finally:
        process.kill()
        process.wait()

    assert removed == [str(reused)]
    assert ours.is_dir() and left_by_it.is_dir() and not reused.exists()


def test_recovery_on_a_clean_root_does_nothing(tmp_path, taxi_sample_csv):
    resolved = load_spec(write_spec(tmp_path / "spec.yaml", taxi_spec(taxi_sample_csv, str(tmp_path / "root"))))

    recovered = recover_killed_run(resolved)

    assert not recovered
    assert not os.path.exists(resolved.root)


def _start_run(spec_file: str, output) -> subprocess.Popen:
    """Starts `run_local.py SPEC`, its stdout and stderr going to the files `output.out` / `output.err`."""
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    with open(f"{output}.out", "w") as out, open(f"{output}.err", "w") as err:
        return subprocess.Popen(
            [sys.executable, os.path.join(REPO, "pipelines", "run_local.py"), spec_file],
            env=env,
            stdout=out,
            stderr=err,
        )


def _output(output) -> tuple[str, str]:
    with open(f"{output}.out", encoding="utf-8") as out, open(f"{output}.err", encoding="utf-8") as err:
        return out.read(), err.read()


def _wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.1)


def _common_values_only(source: str, target) -> str:
    """The rows of `source` whose text columns hold values seen at least 20 times, so that the
    eval split has no value the schema (inferred from train) lacks."""
    with open(source, newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header, rows = next(reader), list(reader)
    text_columns = [header.index(name) for name in ("company", "payment_type")]
    counts = [collections.Counter(row[i] for row in rows) for i in text_columns]
    kept = [row for row in rows if all(count[row[i]] >= 20 for i, count in zip(text_columns, counts))]
    with open(target, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([header, *kept])
    return str(target)


@pytest.fixture(scope="module")
def killed_then_rerun(tmp_path_factory, taxi_sample_csv):
    """Two runs started together (one must refuse), the winner SIGKILLed in the Trainer, then a third run."""
    folder = tmp_path_factory.mktemp("killed_run")
    root = folder / "root"
    spec = taxi_spec(_common_values_only(taxi_sample_csv, folder / "taxi.csv"), str(root))
    spec_file = write_spec(folder / "spec.yaml", spec)
    first, second = _start_run(spec_file, folder / "first"), _start_run(spec_file, folder / "second")
    trainer = root / "artifacts" / "Trainer"
    try:
        _wait_for(lambda: first.poll() is not None or second.poll() is not None, 120, "one run to refuse")
        loser, winner = (first, second) if first.poll() is not None else (second, first)
        loser_out, loser_err = _output(folder / ("first" if loser is first else "second"))
        _wait_for(lambda: (trainer / "model_run").is_dir() or winner.poll() is not None, 300, "the Trainer to start")
        assert winner.poll() is None, "the run finished before it could be killed"
        winner.send_signal(signal.SIGKILL)
        winner.wait()
    finally:
        for process in (first, second):
            if process.poll() is None:
                process.kill()
                process.wait()
    killed_outputs = sorted(str(path) for path in trainer.glob("*/*") if path.name.isdigit())
    third = subprocess.run(
        [sys.executable, os.path.join(REPO, "pipelines", "run_local.py"), spec_file],
        env=dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    return {
        "root": root,
        "loser": (loser.returncode, loser_out, loser_err),
        "winner_pid": winner.pid,
        "killed_outputs": killed_outputs,
        "third": third,
        "serving": root / "serving" / spec["push"]["model_name"],
    }


@pytest.mark.e2e
def test_of_two_runs_started_together_one_refuses_naming_the_other(killed_then_rerun):
    code, out, err = killed_then_rerun["loser"]

    assert code == 1, err
    [line] = [text for text in err.splitlines() if text.startswith("error: ")]
    assert f"pid {killed_then_rerun['winner_pid']} on " in line
    assert "another run is using the pipeline root" in line
    assert "Traceback" not in err


@pytest.mark.e2e
def test_the_run_after_a_kill_fails_its_executions_cleans_up_and_succeeds(killed_then_rerun):
    from ml_metadata.proto import metadata_store_pb2

    third = killed_then_rerun["third"]
    assert third.returncode == 0, third.stdout + third.stderr
    assert "Recovered from a killed run: marked 1 execution(s) failed in ML Metadata" in third.stdout
    assert "custom_executor_spec" not in third.stdout + third.stderr
    assert "Traceback" not in third.stdout + third.stderr
    executions = _store(str(killed_then_rerun["root"] / "metadata.sqlite")).get_executions()
    assert not [e for e in executions if e.last_known_state == metadata_store_pb2.Execution.RUNNING]
    killed = [e for e in executions if e.custom_properties["failure_reason"].string_value == KILLED_REASON]
    assert len(killed) == 1
    partial = [path for path in killed_then_rerun["killed_outputs"] if path.endswith(f"/{killed[0].id}")]
    assert partial  # the killed Trainer had made its output folders...
    assert not [path for path in partial if os.path.exists(path)]  # ...and the next run removed them
    versions = [name for name in os.listdir(killed_then_rerun["serving"]) if not name.startswith(".")]
    assert len(versions) == 1  # one push, from the third run
    assert not [name for name in os.listdir(killed_then_rerun["serving"]) if name.startswith(".tmp-")]
