"""End to end: a spec whose `data.path` holds `{SPAN}`, run by the CLI as a schedule would run it.

One module fixture, five CLI calls on one root, `data.window: 2`: two spans at first (span 1 ingested
alone, the pipeline trained on spans 1 and 2, evaluated on span 2); again with nothing new (one line, exit 0, no execution); span 3 arrives (only span 3
is read; Transform and the Trainer read spans 2 and 3); span 1 is re-delivered and backfilled with `--span 1` (ExampleGen and StatisticsGen only);
`--span 9` names no span; a span 4 whose `payment_type` drifted past `data.checks.drift` from span 3 stops
the run at DataGate, nothing pushed. Asserted from ML Metadata: each span is one ExampleGen execution whose
Examples carry the `span` property, and no span is read twice.
"""

from __future__ import annotations

import os

import pytest
from mlmd_queries import executions_after, max_execution_id, store_for
from taxi_fixtures import run_cli, taxi_spec, write_spec

pytestmark = pytest.mark.e2e


def write_span(data_dir, number: int, header: str, rows: list[str]) -> None:
    folder = data_dir / f"span-{number}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "part.csv").write_text(header + "".join(rows), encoding="utf-8")


def example_spans(metadata: str, after_id: int = 0, until_id: int | None = None) -> list[int]:
    """The `span` of each Examples artifact ExampleGen published in executions after `after_id` (up to
    `until_id`), in order."""
    store = store_for(metadata)
    context = store.get_context_by_type_and_name("node", "spans_e2e.ExampleGen")
    spans = []
    for execution in sorted(store.get_executions_by_context(context.id), key=lambda e: e.id):
        if execution.id <= after_id or (until_id is not None and execution.id > until_id):
            continue
        events = store.get_events_by_execution_ids([execution.id])
        for artifact in store.get_artifacts_by_id([e.artifact_id for e in events]):
            spans.append(artifact.custom_properties["span"].int_value)
    return spans


def input_spans(metadata: str, node: str, after_id: int, until_id: int) -> list[int]:
    """The `span` property of the Examples that `node`'s one execution in (after_id, until_id] read, sorted."""
    store = store_for(metadata)
    context = store.get_context_by_type_and_name("node", f"spans_e2e.{node}")
    (execution,) = [e for e in store.get_executions_by_context(context.id) if after_id < e.id <= until_id]
    events = [e for e in store.get_events_by_execution_ids([execution.id]) if e.type == e.INPUT]
    artifacts = store.get_artifacts_by_id([e.artifact_id for e in events])
    return sorted(a.properties["span"].int_value for a in artifacts if a.type == "Examples")


def nodes_between(metadata: str, after_id: int, until_id: int) -> set[str]:
    """The node ids of the executions in (after_id, until_id]."""
    store = store_for(metadata)
    return {
        context.name.split(".", 1)[1]
        for execution in store.get_executions()
        if after_id < execution.id <= until_id
        for context in store.get_contexts_by_execution(execution.id)
        if context.type == "node"
    }


@pytest.fixture(scope="module")
def runs(taxi_sample_csv, tmp_path_factory):
    root = tmp_path_factory.mktemp("spans_e2e")
    header, *rows = open(taxi_sample_csv, encoding="utf-8").readlines()
    data = root / "data"
    write_span(data, 1, header, rows[0::3])
    write_span(data, 2, header, rows[1::3])
    spec = taxi_spec("data/span-{SPAN}/*.csv", str(root / "run"), pipeline={"name": "spans_e2e"})
    spec["data"]["window"] = 2
    spec["data"]["checks"] = {"drift": 0.3}
    spec["training"].update(train_steps=50, eval_steps=5)
    spec_file = write_spec(root / "spec.yaml", spec)
    metadata = str(root / "run" / "metadata.sqlite")
    result = {"first": run_cli(spec_file)}
    marks = {"first": max_execution_id(metadata)}
    result["nothing_new"] = run_cli(spec_file)
    marks["nothing_new"] = max_execution_id(metadata)
    write_span(data, 3, header, rows[2::3])
    result["new_span"] = run_cli(spec_file)
    marks["new_span"] = max_execution_id(metadata)
    write_span(data, 1, header, rows[0::6])  # span 1 re-delivered
    result["backfill"] = run_cli(spec_file, "--span", "1")
    marks["backfill"] = max_execution_id(metadata)
    result["unknown_span"] = run_cli(spec_file, "--span", "9")
    marks["unknown_span"] = max_execution_id(metadata)
    cash = header.split(",").index("payment_type")
    drifted = [",".join(c if i != cash else "Cash" for i, c in enumerate(row.split(","))) for row in rows[2::3]]
    write_span(data, 4, header, drifted)
    result["drifted"] = run_cli(spec_file)
    return {"result": result, "marks": marks, "metadata": metadata, "spec_file": spec_file}


def test_a_first_run_ingests_every_span_and_trains_on_the_newest(runs):
    first = runs["result"]["first"]
    assert first.returncode == 0, first.stdout + first.stderr
    assert "Ingesting span 1 (1 file(s))." in first.stdout
    assert "; span 2, root" in first.stdout
    assert example_spans(runs["metadata"], 0, runs["marks"]["first"]) == [1, 2]
    assert executions_after(runs["metadata"], 0)["Pusher"] == "COMPLETE"
    first_mark = runs["marks"]["first"]
    assert input_spans(runs["metadata"], "Transform", 0, first_mark) == [1, 2]
    assert input_spans(runs["metadata"], "Trainer", 0, first_mark) == [1, 2]
    assert input_spans(runs["metadata"], "Evaluator", 0, first_mark) == [2]


def test_a_run_with_no_new_span_does_nothing_and_says_so_in_one_line(runs):
    done = runs["result"]["nothing_new"]
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("No new span to train on since run "), done.stdout
    assert "the newest, span 2, is ingested; nothing to do." in lines[0]
    assert runs["marks"]["nothing_new"] == runs["marks"]["first"]


def test_a_new_span_is_the_only_one_read(runs):
    done = runs["result"]["new_span"]
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Ingesting" not in done.stdout
    marks = runs["marks"]
    assert example_spans(runs["metadata"], marks["nothing_new"], marks["new_span"]) == [3]
    states = executions_after(runs["metadata"], marks["nothing_new"])
    assert states["ExampleGen"] == "COMPLETE" and states["Trainer"] == "COMPLETE"
    assert input_spans(runs["metadata"], "Trainer", marks["nothing_new"], marks["new_span"]) == [2, 3]
    assert input_spans(runs["metadata"], "Evaluator", marks["nothing_new"], marks["new_span"]) == [3]


def test_a_backfill_ingests_that_span_alone(runs):
    done = runs["result"]["backfill"]
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Backfilled span 1: later windows read it." in done.stdout
    marks = runs["marks"]
    assert example_spans(runs["metadata"], marks["new_span"], marks["backfill"]) == [1]
    assert nodes_between(runs["metadata"], marks["new_span"], marks["backfill"]) == {"ExampleGen", "StatisticsGen"}


def test_a_backfill_of_a_span_that_is_not_there_names_the_spans_there_are(runs):
    done = runs["result"]["unknown_span"]
    assert done.returncode == 2
    assert "--span 9: data/span-{SPAN}/*.csv has no such span" in done.stderr
    assert "(newest: 1, 2, 3)" in done.stderr
    assert runs["marks"]["unknown_span"] == runs["marks"]["backfill"]  # nothing ran
    assert os.path.isfile(runs["spec_file"])


def test_a_span_that_drifted_from_the_previous_one_stops_the_run_before_training(runs):
    done = runs["result"]["drifted"]
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Run failed at DataGate" in done.stderr
    assert "feature `payment_type`: drift between span 4 and span 3 (train) is above the limit" in done.stderr
    assert "The Linfty distance between current and previous is" in done.stderr
    states = executions_after(runs["metadata"], runs["marks"]["unknown_span"])
    assert states["DataGate"] == "FAILED"
    assert "Trainer" not in states and "Pusher" not in states
