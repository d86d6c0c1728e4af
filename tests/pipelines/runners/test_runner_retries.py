"""Retries, time limits and resuming after a failure, on real TFX and ML Metadata (SQLite).

A three-step pipeline of Python-function components (Produce -> Flaky ->
Consume) keeps these fast; `Flaky` fails while a counter file says so.
"""

# No `from __future__ import annotations`: TFX reads these components' type hints at import.

import os
import time

import pytest
from tfx.dsl.component.experimental.annotations import InputArtifact, OutputArtifact, Parameter
from tfx.dsl.component.experimental.decorators import component
from tfx.orchestration import metadata, pipeline
from tfx.types.standard_artifacts import Examples

from pipelines.outcome.fingerprint import max_execution_id
from pipelines.runners.local import ComponentFailed, run_pipeline
from pipelines.runners.retry import ComponentTimeout, RetryPolicy, retrying
from pipelines.targets.mlmd_states import states_after as executions_after


@component
def Produce(out: OutputArtifact[Examples]):  # noqa: N802 - a component class name
    with open(os.path.join(out.uri, "data.txt"), "w") as handle:
        handle.write("rows")


@component
def Flaky(  # noqa: N802
    data: InputArtifact[Examples],
    out: OutputArtifact[Examples],
    failures_file: Parameter[str],
    sleep_seconds: Parameter[float] = 0.0,
):
    """Fails while `failures_file` holds a number above 0, counting it down."""
    remaining = int(open(failures_file).read())
    if remaining > 0:
        with open(failures_file, "w") as handle:
            handle.write(str(remaining - 1))
        raise RuntimeError(f"planned failure, {remaining - 1} left")
    time.sleep(sleep_seconds)
    with open(os.path.join(out.uri, "data.txt"), "w") as handle:
        handle.write(open(os.path.join(data.uri, "data.txt")).read())


@component
def Consume(data: InputArtifact[Examples], out: OutputArtifact[Examples]):  # noqa: N802
    with open(os.path.join(out.uri, "data.txt"), "w") as handle:
        handle.write("done")


def small_pipeline(root, failures: int, sleep_seconds: float = 0.0):
    failures_file = root / "failures.txt"
    failures_file.write_text(str(failures))
    produce = Produce().with_id("Produce")
    flaky = Flaky(data=produce.outputs["out"], failures_file=str(failures_file), sleep_seconds=sleep_seconds)
    consume = Consume(data=flaky.outputs["out"]).with_id("Consume")
    return pipeline.Pipeline(
        pipeline_name="retry_probe",
        pipeline_root=str(root / "artifacts"),
        components=[produce, flaky.with_id("Flaky"), consume],
        enable_cache=True,
        metadata_connection_config=metadata.sqlite_metadata_connection_config(str(root / "metadata.sqlite")),
    )


class Recorder:
    def __init__(self):
        self.retries = []

    def on_retry(self, *, component_id, attempt, error, **_):
        self.retries.append((component_id, attempt, str(error)))


def test_a_failed_component_is_retried_until_it_succeeds(tmp_path):
    recorder = Recorder()
    result = run_pipeline(
        small_pipeline(tmp_path, failures=2),
        str(tmp_path / "run.log"),
        hooks=[recorder],
        policies={"Flaky": RetryPolicy(retries=2)},
    )

    assert [c.status for c in result.components] == ["executed", "executed", "executed"]
    assert [(c, a) for c, a, _ in recorder.retries] == [("Flaky", 1), ("Flaky", 2)]
    assert "planned failure" in recorder.retries[0][2]
    assert _flaky_states(tmp_path)[-1] == "COMPLETE"
    assert (tmp_path / "failures.txt").read_text() == "0"  # it really ran three times


def test_retries_run_out_and_the_run_fails_at_that_component(tmp_path):
    with pytest.raises(ComponentFailed) as caught:
        run_pipeline(
            small_pipeline(tmp_path, failures=3),
            str(tmp_path / "run.log"),
            policies={"Flaky": RetryPolicy(retries=1)},
        )
    assert caught.value.component_id == "Flaky"
    assert _flaky_states(tmp_path)[-1] == "FAILED"
    assert (tmp_path / "failures.txt").read_text() == "1"  # two attempts, no third


def test_a_component_past_its_time_limit_is_stopped(tmp_path):
    started = time.perf_counter()
    with pytest.raises(ComponentFailed) as caught:
        run_pipeline(
            small_pipeline(tmp_path, failures=0, sleep_seconds=60.0),
            str(tmp_path / "run.log"),
            policies={"Flaky": RetryPolicy(timeout_seconds=1)},
        )
    assert time.perf_counter() - started < 30
    assert isinstance(caught.value.__cause__, ComponentTimeout)
    assert "Flaky ran longer than its time limit. Expected at most 1s." in str(caught.value)


def test_a_rerun_resumes_at_the_failed_component_with_the_rest_from_cache(tmp_path):
    metadata_path = str(tmp_path / "metadata.sqlite")
    with pytest.raises(ComponentFailed):
        run_pipeline(small_pipeline(tmp_path, failures=1), str(tmp_path / "run1.log"))
    first = executions_after(metadata_path, 0)
    assert first == {"Produce": "COMPLETE", "Flaky": "FAILED"}
    before = max_execution_id(metadata_path)

    # Same pipeline, run again: the failure is used up now.
    (tmp_path / "failures.txt").write_text("0")
    run_pipeline(small_pipeline(tmp_path, failures=0), str(tmp_path / "run2.log"))

    assert executions_after(metadata_path, before) == {"Produce": "CACHED", "Flaky": "COMPLETE", "Consume": "COMPLETE"}


def _failing(times: int, error: BaseException):
    calls = []

    def launch():
        calls.append(len(calls) + 1)
        if len(calls) <= times:
            raise error
        return "launched"

    return launch, calls


def test_retries_wait_with_a_doubling_capped_backoff():
    launch, calls = _failing(4, RuntimeError("planned"))
    waits, retried = [], []
    policy = RetryPolicy(retries=4, backoff_seconds=1, max_backoff_seconds=3)
    retrier = retrying(policy, before_retry=lambda attempt, error: retried.append((attempt, str(error))))

    assert retrier.copy(sleep=waits.append)(launch) == "launched"
    assert calls == [1, 2, 3, 4, 5]
    assert waits == [1, 2, 3, 3]
    assert retried == [(1, "planned"), (2, "planned"), (3, "planned"), (4, "planned")]


def test_the_last_error_is_raised_when_retries_run_out():
    launch, calls = _failing(5, RuntimeError("planned"))
    with pytest.raises(RuntimeError, match="planned"):
        retrying(RetryPolicy(retries=2, backoff_seconds=0))(launch)
    assert calls == [1, 2, 3]


@pytest.mark.parametrize("error", [KeyboardInterrupt(), SystemExit(1)], ids=["ctrl-c", "exit"])
def test_an_interrupt_is_never_retried(error):
    launch, calls = _failing(1, error)
    with pytest.raises(type(error)):
        retrying(RetryPolicy(retries=3, backoff_seconds=0))(launch)
    assert calls == [1]


def _flaky_states(root) -> list[str]:
    from ml_metadata import metadata_store
    from ml_metadata.proto import metadata_store_pb2

    config = metadata_store_pb2.ConnectionConfig()
    config.sqlite.filename_uri = str(root / "metadata.sqlite")
    store = metadata_store.MetadataStore(config)
    states = []
    for execution in sorted(store.get_executions(), key=lambda e: e.id):
        names = [c.name for c in store.get_contexts_by_execution(execution.id) if c.type == "node"]
        if names == ["retry_probe.Flaky"]:
            states.append(metadata_store_pb2.Execution.State.Name(execution.last_known_state))
    return states
