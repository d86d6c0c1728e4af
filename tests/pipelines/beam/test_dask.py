"""`orchestrator.beam: {runner: dask, address: ...}`: the spec, the components' Beam arguments, the scheduler
check, and the taxi sample run end to end on a real dask.distributed cluster (`dask scheduler` and two
`dask worker` processes on 127.0.0.1), asserted from ML Metadata, the written examples and the scheduler's
task stream."""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import time

import pytest
from ports import free_port
from taxi_fixtures import REPO, run_cli, taxi_spec, write_spec

from pipelines.beam.dask import RUNNER, DaskUnavailable, check_scheduler, component_beam_args
from pipelines.load import load_spec
from pipelines.spec import SpecError
from pipelines.targets.mlmd_states import states_after

distributed = pytest.importorskip("distributed")


@pytest.fixture(autouse=True)
def _dask_scratch_space_in_tmp(tmp_path):
    """Dask's scratch space (`dask-scratch-space/`) under the test's folder, not the system's temporary one."""
    import dask

    with dask.config.set({"temporary-directory": str(tmp_path)}):
        yield


def _load(tmp_path, taxi_sample_csv, orchestrator: dict):
    spec = taxi_spec(taxi_sample_csv, str(tmp_path / "run"), orchestrator=orchestrator)
    return load_spec(write_spec(tmp_path / "spec.yaml", spec), cwd=str(tmp_path))


def test_a_dask_runner_section_gives_dask_runner_args(tmp_path, taxi_sample_csv):
    beam = {"runner": "dask", "address": "127.0.0.1:8786"}
    resolved = _load(tmp_path, taxi_sample_csv, {"beam": beam, "beam_args": ["--dask_npartitions=4"]})

    args = component_beam_args(resolved.spec.orchestrator)

    assert args[:2] == (f"--runner={RUNNER}", "--dask_client_address=127.0.0.1:8786")
    assert f"--setup_file={os.path.join(REPO, 'setup.py')}" in args
    assert args[-1] == "--dask_npartitions=4"


@pytest.mark.parametrize(
    "orchestrator, path, expected",
    [
        ({"beam": {"runner": "flink"}}, "orchestrator.beam.runner", "expected one of `dask`. Received: `flink`"),
        ({"beam": {"address": "127.0.0.1:8786"}}, "orchestrator.beam.runner", "`runner` is required"),
        ({"beam": {"runner": "dask", "adress": "h:1"}}, "orchestrator.beam.adress", "Did you mean `address`?"),
        (
            {"beam": {"runner": "dask", "address": "127.0.0.1"}},
            "orchestrator.beam",
            "`address` must be the Dask scheduler's HOST:PORT. Expected a host and a port from 1 to 65535. "
            "Received: address='127.0.0.1'.",
        ),
        ({"beam": {"runner": "dask", "address": "127.0.0.1:99999"}}, "orchestrator.beam", "address='127.0.0.1:99999'"),
        ({"beam": {"runner": "dask", "address": "http://h:8786"}}, "orchestrator.beam", "address='http://h:8786'"),
        (
            {"beam": {"runner": "dask"}, "beam_args": ["--runner=FlinkRunner"]},
            "orchestrator.beam_args",
            "`beam_args` names a runner and `beam` chooses one too. Expected one of them. Received: "
            "'--runner=FlinkRunner' and `beam: {runner: dask}`. Remove the `--runner` flag, or remove `beam`.",
        ),
        (
            {"beam": {"runner": "dask"}, "target": "airflow"},
            "orchestrator.beam",
            "runs on the local and beam targets only. Expected target local or beam. Received: target='airflow'.",
        ),
    ],
)
def test_bad_beam_sections_are_named_with_their_fix(tmp_path, taxi_sample_csv, orchestrator, path, expected):
    with pytest.raises(SpecError) as caught:
        _load(tmp_path, taxi_sample_csv, orchestrator)
    messages = {problem.path: problem.message for problem in caught.value.problems}
    assert path in messages, messages
    assert expected in messages[path]


def test_no_scheduler_at_the_address_is_one_line_with_how_to_start_one():
    address = f"127.0.0.1:{free_port()}"
    with pytest.raises(DaskUnavailable) as caught:
        check_scheduler(address, timeout=2)
    message = str(caught.value)
    assert f"no Dask scheduler answers at {address} (orchestrator.beam.address)" in message
    assert f"`dask scheduler --host HOST --port PORT` and workers with `dask worker {address}`" in message
    assert "\n" not in message


def test_a_scheduler_without_workers_says_to_start_them():
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None) as cluster:
        address = cluster.scheduler_address.removeprefix("tcp://")
        with pytest.raises(DaskUnavailable) as caught:
            check_scheduler(address)
    assert f"the Dask scheduler at {address} has no workers." in str(caught.value)
    assert f"`dask worker {address} --nthreads 1`" in str(caught.value)


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL: a dask process can outlive a SIGTERM for a while."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    """`dask scheduler` and two `dask worker --nthreads 1` processes on 127.0.0.1; yields (address, log dir)."""
    logs = tmp_path_factory.mktemp("dask_logs")
    address = f"127.0.0.1:{free_port()}"
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    env["PYTHONPATH"] = os.pathsep.join([REPO, env.get("PYTHONPATH", "")])
    env["DASK_TEMPORARY_DIRECTORY"] = str(logs)
    dask = os.path.join(os.path.dirname(sys.executable), "dask")
    # Workers: one thread each, their dashboard on 127.0.0.1.
    worker = [dask, "worker", address, "--nthreads", "1", "--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0"]
    commands = [
        [dask, "scheduler", "--host", "127.0.0.1", "--port", address.split(":")[1], "--no-dashboard"],
        worker,
        worker,
    ]
    processes, log_files = [], []
    try:
        for i, command in enumerate(commands):
            log_files.append(open(logs / f"{command[1]}-{i}.log", "w", encoding="utf-8"))  # noqa: SIM115
            processes.append(
                subprocess.Popen(command, stdout=log_files[-1], stderr=subprocess.STDOUT, env=env, cwd=logs)
            )
            if i == 0:
                time.sleep(2)
        with distributed.Client(address, timeout=60, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=120)
            client.get_task_stream()  # installs the scheduler's task-stream plugin before the run
        yield address, logs
    finally:
        for process in reversed(processes):
            _stop(process)
        for log_file in log_files:
            log_file.close()


@pytest.fixture(scope="module")
def dask_run(dask_cluster, taxi_sample_csv, tmp_path_factory):
    """The taxi sample through `run` (local target) with `orchestrator.beam: {runner: dask}`."""
    address, _ = dask_cluster
    folder = tmp_path_factory.mktemp("dask_run")
    spec = taxi_spec(
        taxi_sample_csv, str(folder / "run"), orchestrator={"beam": {"runner": "dask", "address": address}}
    )
    spec["training"].update(train_steps=50, eval_steps=5)
    started = time.time()
    completed = run_cli(write_spec(folder / "spec.yaml", spec))
    with distributed.Client(address, timeout=30, set_as_default=False) as client:
        tasks = client.get_task_stream(start=started)
    return completed, folder / "run", tasks


@pytest.mark.e2e
def test_the_pipeline_runs_to_a_pushed_model_on_the_dask_cluster(dask_run):
    completed, root, _ = dask_run
    assert completed.returncode == 0, completed.stdout + completed.stderr
    states = states_after(str(root / "metadata.sqlite"), 0)
    assert set(states.values()) == {"COMPLETE"}, states
    assert {"ExampleGen", "StatisticsGen", "Transform", "Evaluator", "Pusher"} <= set(states)
    assert os.listdir(root / "serving" / "chicago_taxi")


@pytest.mark.e2e
def test_the_beam_work_ran_on_the_dask_workers(dask_run):
    _, _, tasks = dask_run
    bundles = [task for task in tasks if "_run_bundle" in str(task["key"])]
    assert bundles, f"no Beam bundle ran on the cluster; task keys: {[t['key'] for t in tasks][:20]}"
    workers = {task["worker"] for task in bundles}
    assert workers and all(w.startswith("tcp://127.0.0.1:") for w in workers)


@pytest.mark.e2e
def test_examplegen_on_dask_writes_every_row_once_and_no_temporary_folders(dask_run, taxi_sample_csv):
    import tensorflow as tf

    _, root, _ = dask_run
    split_files = glob.glob(str(root / "artifacts" / "ExampleGen" / "examples" / "*" / "Split-*" / "*"))
    assert split_files and all(os.path.isfile(f) for f in split_files), split_files
    rows = sum(1 for f in split_files for _ in tf.data.TFRecordDataset(f, compression_type="GZIP"))
    with open(taxi_sample_csv, encoding="utf-8") as handle:
        assert rows == sum(1 for _ in handle) - 1
    assert not glob.glob(str(root / "artifacts" / "**" / "beam-temp-*"), recursive=True)


@pytest.mark.e2e
def test_every_beam_component_compiles_onto_the_dask_cluster(dask_cluster, taxi_sample_csv, tmp_path):
    from pipelines.compiler import compile_pipeline

    address, _ = dask_cluster
    resolved = _load(tmp_path, taxi_sample_csv, {"beam": {"runner": "dask", "address": address}})

    pipeline = compile_pipeline(resolved)

    beam_components = {c.id: c for c in pipeline.components if hasattr(c, "with_beam_pipeline_args")}
    assert set(beam_components) == {"ExampleGen", "StatisticsGen", "Transform", "Evaluator"}
    for component in beam_components.values():
        runners = [a for a in component.executor_spec.beam_pipeline_args if a.startswith("--runner=")]
        assert runners[-1:] == [f"--runner={RUNNER}"], (component.id, runners)
        assert f"--dask_client_address={address}" in component.executor_spec.beam_pipeline_args


def test_compiling_contacts_no_scheduler(tmp_path, taxi_sample_csv):
    from pipelines.compiler import compile_pipeline

    address = f"127.0.0.1:{free_port()}"  # nothing listens there: a contact would raise DaskUnavailable
    resolved = _load(tmp_path, taxi_sample_csv, {"beam": {"runner": "dask", "address": address}})

    pipeline = compile_pipeline(resolved)

    example_gen = next(c for c in pipeline.components if c.id == "ExampleGen")
    assert f"--dask_client_address={address}" in example_gen.executor_spec.beam_pipeline_args


def test_run_with_no_scheduler_is_one_error_line(tmp_path, taxi_sample_csv):
    port = free_port()
    spec = taxi_spec(
        taxi_sample_csv,
        str(tmp_path / "run"),
        orchestrator={"beam": {"runner": "dask", "address": f"127.0.0.1:{port}"}},
    )
    path = write_spec(tmp_path / "spec.yaml", spec)
    completed = subprocess.run(
        [sys.executable, "-m", "pipelines", "run", str(path)], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert completed.returncode == 1
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1, completed.stderr
    assert lines[0].startswith(
        f"error: {path}: no Dask scheduler answers at 127.0.0.1:{port} (orchestrator.beam.address)."
    )
    assert "Traceback" not in completed.stderr
