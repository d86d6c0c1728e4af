"""End to end: a run SIGKILLed while ExampleGen ingests a new span; the next run resumes that span.

One module fixture: spans 1 and 2 (a third of the taxi sample each) are ingested and trained on
(`data.window: 2`); span 3 (the whole taxi CSV five times, ~75k rows, so that its ExampleGen runs for a
few seconds) arrives, and the run that ingests it is SIGKILLed, with its process group (ExampleGen's
worker processes too), once ML Metadata shows span 3's ExampleGen execution RUNNING. The next run must
mark that execution failed, remove its half-written output, ingest span 3 once, train on spans 2 and 3
and bless; asserted from ML Metadata: one LIVE Examples artifact per span, none of the killed execution.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from mlmd_queries import STATE_NAMES, max_execution_id, store_for
from taxi_fixtures import REPO, TAXI_CSV, run_cli, taxi_spec, write_spec

from pipelines.runners.recovery import KILLED_REASON

pytestmark = pytest.mark.e2e

NAME = "spans_kill"


def write_span(data_dir, number: int, header: str, rows: list[str]) -> None:
    """`data_dir/span-<number>/part.csv`, written under a hidden name and renamed, as a delivery would."""
    folder = data_dir / f"span-{number}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".part.csv.tmp").write_text(header + "".join(rows), encoding="utf-8")
    os.replace(folder / ".part.csv.tmp", folder / "part.csv")


def example_gen_executions(metadata: str) -> list[dict]:
    """ExampleGen's executions, oldest first: id, state, failure reason and its Examples' (span, state) pairs."""
    store = store_for(metadata)
    context = store.get_context_by_type_and_name("node", f"{NAME}.ExampleGen")
    found = []
    for execution in sorted(store.get_executions_by_context(context.id), key=lambda e: e.id):
        events = store.get_events_by_execution_ids([execution.id])
        artifacts = store.get_artifacts_by_id([e.artifact_id for e in events if e.type == e.OUTPUT])
        found.append(
            {
                "id": execution.id,
                "state": STATE_NAMES.get(execution.last_known_state, "?"),
                "reason": execution.custom_properties["failure_reason"].string_value
                if "failure_reason" in execution.custom_properties
                else "",
                "examples": [(a.properties["span"].int_value, a.state) for a in artifacts],
            }
        )
    return found


def live_examples_per_span(metadata: str) -> dict[int, int]:
    """span -> how many distinct LIVE Examples artifacts ExampleGen published for it, over every run (a CACHED
    execution's output is the artifact of the execution it reuses: counted once)."""
    from ml_metadata.proto import metadata_store_pb2

    store = store_for(metadata)
    context = store.get_context_by_type_and_name("node", f"{NAME}.ExampleGen")
    counts: dict[int, int] = {}
    for artifact in store.get_artifacts_by_context(context.id):
        if artifact.type == "Examples" and artifact.state == metadata_store_pb2.Artifact.LIVE:
            span = artifact.properties["span"].int_value
            counts[span] = counts.get(span, 0) + 1
    return counts


def node_executions(metadata: str, node: str, after_id: int, until_id: int | None = None) -> list:
    """`node`'s executions in (after_id, until_id], oldest first."""
    store = store_for(metadata)
    context = store.get_context_by_type_and_name("node", f"{NAME}.{node}")
    executions = store.get_executions_by_context(context.id) if context else []
    return sorted(
        (e for e in executions if e.id > after_id and (until_id is None or e.id <= until_id)), key=lambda e: e.id
    )


def input_spans(metadata: str, node: str, after_id: int, until_id: int | None = None) -> list[int]:
    """The `span` of the Examples that `node`'s one execution in (after_id, until_id] read, sorted."""
    store = store_for(metadata)
    (execution,) = node_executions(metadata, node, after_id, until_id)
    events = [e for e in store.get_events_by_execution_ids([execution.id]) if e.type == e.INPUT]
    artifacts = store.get_artifacts_by_id([e.artifact_id for e in events])
    return sorted(a.properties["span"].int_value for a in artifacts if a.type == "Examples")


def running_execution(metadata: str, node: str, after_id: int) -> int | None:
    """The id of an execution of `node` after `after_id` that ML Metadata shows RUNNING, else None."""
    if not os.path.isfile(metadata):
        return None
    try:
        store = store_for(metadata)
        context = store.get_context_by_type_and_name("node", f"{NAME}.{node}")
        executions = store.get_executions_by_context(context.id) if context else []
    except Exception:  # noqa: BLE001 - the run may be creating the tables right now: ask again
        return None
    running = [e.id for e in executions if e.id > after_id and STATE_NAMES.get(e.last_known_state) == "RUNNING"]
    return min(running, default=None)


def start_run(spec_file: str, output) -> subprocess.Popen:
    """`run_local.py SPEC` in its own process group, stdout and stderr to `output.out` / `output.err`."""
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    with open(f"{output}.out", "w") as out, open(f"{output}.err", "w") as err:
        return subprocess.Popen(
            [sys.executable, os.path.join(REPO, "pipelines", "run_local.py"), spec_file],
            env=env,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )


def kill_while_running(spec_file: str, metadata: str, node: str, after_id: int, output) -> tuple[int, int]:
    """Starts a run, SIGKILLs its process group once `node`'s execution after `after_id` is RUNNING.

    Returns:
        (that execution's id, the run's exit code).
    """
    process = start_run(spec_file, output)
    killed_id = None
    try:
        deadline = time.monotonic() + 300
        while killed_id is None and process.poll() is None and time.monotonic() < deadline:
            killed_id = running_execution(metadata, node, after_id)
            time.sleep(0.05)
        assert killed_id is not None, f"{node} never showed RUNNING before the run ended ({output}.out)"
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return killed_id, process.returncode


@pytest.fixture(scope="module")
def killed_runs(taxi_sample_csv, tmp_path_factory):
    root = tmp_path_factory.mktemp(NAME)
    header, *rows = open(taxi_sample_csv, encoding="utf-8").readlines()
    data = root / "data"
    write_span(data, 1, header, rows[0::3])
    write_span(data, 2, header, rows[1::3])
    spec = taxi_spec("data/span-{SPAN}/*.csv", str(root / "run"), pipeline={"name": NAME})
    spec["data"]["window"] = 2
    spec["training"].update(train_steps=50, eval_steps=5)
    spec_file = write_spec(root / "spec.yaml", spec)
    metadata = str(root / "run" / "metadata.sqlite")
    first = run_cli(spec_file)
    assert first.returncode == 0, first.stdout + first.stderr
    mark = max_execution_id(metadata)

    _, *all_rows = open(TAXI_CSV, encoding="utf-8").readlines()
    write_span(data, 3, header, all_rows * 5)
    killed_id, killed_code = kill_while_running(spec_file, metadata, "ExampleGen", mark, root / "killed")
    killed_state = {e["id"]: e for e in example_gen_executions(metadata)}[killed_id]
    killed_outputs = sorted(str(p) for p in (root / "run" / "artifacts").glob(f"ExampleGen/*/{killed_id}"))
    rerun_mark = max_execution_id(metadata)
    rerun = run_cli(spec_file)

    write_span(data, 4, header, rows[2::3])
    before_span_4 = max_execution_id(metadata)
    transform_id, transform_code = kill_while_running(
        spec_file, metadata, "Transform", before_span_4, root / "killed_in_transform"
    )
    resume_mark = max_execution_id(metadata)
    resume = run_cli(spec_file)
    return {
        "metadata": metadata,
        "mark": mark,
        "rerun_mark": rerun_mark,
        "killed_id": killed_id,
        "killed_state": killed_state,
        "killed_outputs": killed_outputs,
        "killed_code": killed_code,
        "rerun": rerun,
        "before_span_4": before_span_4,
        "transform_id": transform_id,
        "transform_code": transform_code,
        "resume_mark": resume_mark,
        "resume": resume,
    }


def test_the_run_was_killed_while_ingesting_the_new_span(killed_runs):
    assert killed_runs["killed_code"] == -signal.SIGKILL
    assert killed_runs["killed_state"]["state"] == "RUNNING"
    assert killed_runs["killed_state"]["examples"] == []  # nothing of span 3 was published
    assert killed_runs["killed_outputs"], "the killed ExampleGen had not made its output folder"


def test_the_next_run_marks_the_killed_execution_failed_and_removes_its_output(killed_runs):
    rerun = killed_runs["rerun"]
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    killed_id = killed_runs["killed_id"]
    assert "Recovered from a killed run: marked" in rerun.stdout
    assert f"(ids {killed_id}" in rerun.stdout or f", {killed_id}" in rerun.stdout
    (killed,) = [e for e in example_gen_executions(killed_runs["metadata"]) if e["id"] == killed_id]
    assert killed["state"] == "FAILED" and killed["reason"] == KILLED_REASON
    assert not any(os.path.exists(path) for path in killed_runs["killed_outputs"])


def test_the_next_run_ingests_the_killed_span_once_and_no_span_twice(killed_runs):
    metadata = killed_runs["metadata"]
    after_kill = [
        e
        for e in example_gen_executions(metadata)
        if killed_runs["rerun_mark"] < e["id"] <= killed_runs["before_span_4"]
    ]
    assert [(e["state"], [span for span, _ in e["examples"]]) for e in after_kill] == [("COMPLETE", [3])]
    assert live_examples_per_span(metadata) == {1: 1, 2: 1, 3: 1, 4: 1}  # span 4: the Transform stage below


def test_the_next_run_trains_on_the_window_and_blesses(killed_runs):
    assert killed_runs["rerun"].returncode == 0, killed_runs["rerun"].stdout + killed_runs["rerun"].stderr
    metadata, after, until = killed_runs["metadata"], killed_runs["rerun_mark"], killed_runs["before_span_4"]
    assert input_spans(metadata, "Transform", after, until) == [2, 3]
    assert input_spans(metadata, "Trainer", after, until) == [2, 3]
    assert input_spans(metadata, "Evaluator", after, until) == [3]
    assert [STATE_NAMES[e.last_known_state] for e in node_executions(metadata, "Pusher", after, until)] == ["COMPLETE"]
    assert "Model: BLESSED" in killed_runs["rerun"].stdout


def test_a_run_killed_after_ingesting_its_span_trains_on_it_next_time_without_reading_it_again(killed_runs):
    """Span 4's ExampleGen finished, then the run was killed in Transform: the next run finds no new span
    to ingest, but trains on span 4 (ExampleGen's result comes from TFX's cache), so the span is not lost."""
    assert killed_runs["transform_code"] == -signal.SIGKILL
    resume = killed_runs["resume"]
    assert resume.returncode == 0, resume.stdout + resume.stderr
    assert f"(ids {killed_runs['transform_id']})" in resume.stdout
    metadata, killed_at, after = killed_runs["metadata"], killed_runs["before_span_4"], killed_runs["resume_mark"]
    assert [e["examples"][0][0] for e in example_gen_executions(metadata) if killed_at < e["id"] <= after] == [4]
    assert [STATE_NAMES[e.last_known_state] for e in node_executions(metadata, "ExampleGen", after)] == ["CACHED"]
    assert live_examples_per_span(metadata) == {1: 1, 2: 1, 3: 1, 4: 1}
    assert [STATE_NAMES[e.last_known_state] for e in node_executions(metadata, "Transform", killed_at, after)] == [
        "FAILED"
    ]
    assert input_spans(metadata, "Trainer", after) == [3, 4]
    assert input_spans(metadata, "Evaluator", after) == [4]
    assert [STATE_NAMES[e.last_known_state] for e in node_executions(metadata, "Pusher", after)] == ["COMPLETE"]
    assert "Model: BLESSED" in resume.stdout
