"""End to end: the commands of docs/spans.md's walk-through, on `pipelines/examples/taxi_spans.yaml`.

One module fixture, the doc's steps in its order on one root (the example's spec with fewer training
steps): spans 1-3 (2013-2015) are written and run; a second run finds nothing new; span 4 (2016)
arrives and is the only span read (Transform too: the analysis of spans 2-3 comes from the first run's
analyzer cache); span 1 is re-delivered and backfilled with `--span 1`; `--span 9`
names the spans there are; a drifted span 5 stops the run at DataGate; `predict` scores span 4 with the
blessed model; `runs` lists the six runs. The commands are the doc's own (checked
against its bash blocks), run on a copy of the spec. Each step's console lines that the doc quotes are
asserted, and from ML Metadata which spans each step read.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

import pytest
import yaml
from example_runs import EXAMPLES
from mlmd_queries import executions_after, max_execution_id, nodes_between, store_for
from taxi_fixtures import REPO, write_spec

pytestmark = pytest.mark.e2e

SCRIPT = os.path.join(EXAMPLES, "data", "write_taxi_spans.py")


def command(*args: str, cwd: str) -> subprocess.CompletedProcess:
    """`python ARGS` in `cwd`, as the doc runs it (`-m pipelines ...` or the span script)."""
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (REPO, env.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=900)


def spans_read(metadata: str, node: str, after_id: int, until_id: int) -> list[list[int]]:
    """Per execution of `node` in (after_id, until_id]: the sorted `span`s of the Examples it read or wrote."""
    store = store_for(metadata)
    context = store.get_context_by_type_and_name("node", f"taxi_spans.{node}")
    found = []
    for execution in sorted(store.get_executions_by_context(context.id), key=lambda e: e.id):
        if not after_id < execution.id <= until_id:
            continue
        events = store.get_events_by_execution_ids([execution.id])
        artifacts = store.get_artifacts_by_id([e.artifact_id for e in events])
        found.append(sorted(a.properties["span"].int_value for a in artifacts if a.type == "Examples"))
    return found


SPEC = "pipelines/examples/taxi_spans.yaml"
WRITE = ".venv/bin/python pipelines/examples/data/write_taxi_spans.py"
RUN = f".venv/bin/python -m pipelines run {SPEC}"
SPANS_DIR = "pipelines/examples/data/taxi_spans"
SPAN_4 = f"{SPANS_DIR}/span-4/data.csv"
# (step, command as docs/spans.md shows it), in the doc's order
WALK = [
    ("first", f"{WRITE} 2013 2014 2015"),
    ("first", f".venv/bin/python -m pipelines validate {SPEC}"),
    ("first", RUN),
    ("nothing_new", RUN),
    ("new_span", f"{WRITE} 2016"),
    ("new_span", RUN),
    ("backfill", f"{WRITE} 2013"),
    ("backfill", f"{RUN} --span 1"),
    ("unknown_span", f"{RUN} --span 9"),
    ("drifted", f"{WRITE} --drifted"),
    ("drifted", RUN),
    (
        "predict",
        f".venv/bin/python -m pipelines predict {SPEC} {SPAN_4} --output span4_scores.csv --keep trip_start_timestamp",
    ),
    ("history", f".venv/bin/python -m pipelines runs {SPEC}"),
]


def doc_commands() -> list[str]:
    """The command lines in docs/spans.md's bash blocks, in order."""
    with open(os.path.join(REPO, "docs", "spans.md"), encoding="utf-8") as handle:
        blocks = re.findall(r"```bash\n(.*?)```", handle.read(), flags=re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def walkthrough(tmp_path_factory):
    folder = tmp_path_factory.mktemp("spans_walkthrough")
    with open(os.path.join(REPO, SPEC), encoding="utf-8") as handle:
        spec = yaml.safe_load(handle)
    spec["pipeline"]["root"] = str(folder / "runs" / "taxi_spans")
    spec["training"].update(train_steps=50, eval_steps=5)
    spec_file = write_spec(folder / "taxi_spans.yaml", spec)  # data.path as shipped: data/taxi_spans/... beside it
    out = str(folder / "data" / "taxi_spans")
    metadata = os.path.join(spec["pipeline"]["root"], "metadata.sqlite")
    steps: dict[str, list[subprocess.CompletedProcess]] = {}
    marks = {"start": 0}
    for name, line in WALK:  # the doc's command, on the copy of the spec and with the spans written beside it
        args = shlex.split(line)[1:]
        if args[0] == WRITE.split()[1]:
            args = [SCRIPT, *args[1:], "--out", out]
        args = [spec_file if arg == SPEC else arg.replace(SPANS_DIR, out) for arg in args]
        done = command(*args, cwd=str(folder))
        steps.setdefault(name, []).append(done)
        with open(folder / "console.txt", "a", encoding="utf-8") as console:  # to read after a failure
            console.write(f"$ {line}\n{done.stdout}{done.stderr}\n")
        marks[name] = max_execution_id(metadata) if os.path.isfile(metadata) else 0
    return {"steps": steps, "marks": marks, "metadata": metadata, "folder": folder}


def test_the_doc_shows_the_commands_this_test_runs():
    assert doc_commands() == [line for _, line in WALK]


def _ok(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    return done.stdout


def test_first_run_writes_three_spans_ingests_two_alone_and_trains_on_all_three(walkthrough):
    write, validate, run = walkthrough["steps"]["first"]
    assert "span 3 (2015): 4636 rows -> " in _ok(write)
    assert "Spans: 3 span(s), newest span 3, oldest span 1; no gaps." in _ok(validate)
    stdout = _ok(run)
    assert "Ingesting span 1 (1 file(s))." in stdout and "Ingesting span 2 (1 file(s))." in stdout
    assert "; span 3, root " in stdout
    metadata, mark = walkthrough["metadata"], walkthrough["marks"]["first"]
    assert spans_read(metadata, "ExampleGen", 0, mark) == [[1], [2], [3]]
    assert spans_read(metadata, "Trainer", 0, mark) == [[1, 2, 3]]
    assert spans_read(metadata, "Evaluator", 0, mark) == [[3]]
    assert executions_after(metadata, 0)["Pusher"] == "COMPLETE"


def test_a_second_run_with_no_new_span_prints_one_line(walkthrough):
    (run,) = walkthrough["steps"]["nothing_new"]
    lines = _ok(run).strip().splitlines()
    assert len(lines) == 1 and "the newest, span 3, is ingested; nothing to do." in lines[0], run.stdout
    assert walkthrough["marks"]["nothing_new"] == walkthrough["marks"]["first"]


def test_span_4_arrives_and_is_the_only_span_read(walkthrough):
    write, run = walkthrough["steps"]["new_span"]
    assert "span 4 (2016): 833 rows -> " in _ok(write)
    stdout = _ok(run)
    assert "Ingesting" not in stdout and "; span 4, root " in stdout
    metadata, marks = walkthrough["metadata"], walkthrough["marks"]
    assert spans_read(metadata, "ExampleGen", marks["nothing_new"], marks["new_span"]) == [[4]]
    assert spans_read(metadata, "Trainer", marks["nothing_new"], marks["new_span"]) == [[2, 3, 4]]
    assert spans_read(metadata, "Evaluator", marks["nothing_new"], marks["new_span"]) == [[4]]
    assert executions_after(metadata, marks["nothing_new"])["Pusher"] == "COMPLETE"


def transform_reads(metadata: str, done: subprocess.CompletedProcess) -> list[int]:
    """The spans whose examples a run's Transform read, from the run's log (`Full log: ...`), sorted."""
    log_file = re.search(r"Full log: (\S+)", done.stdout).group(1)
    with open(log_file, encoding="utf-8") as handle:
        read = re.findall(r"Transform reads (\S+)/Split-train/", handle.read())
    spans = {a.uri: a.properties["span"].int_value for a in store_for(metadata).get_artifacts_by_type("Examples")}
    return sorted(spans[uri] for uri in read)


def test_span_4_s_transform_reads_span_4_alone_and_the_analysis_of_spans_2_3_from_the_cache(walkthrough):
    metadata, marks = walkthrough["metadata"], walkthrough["marks"]
    first, new_span = walkthrough["steps"]["first"][-1], walkthrough["steps"]["new_span"][-1]  # the two runs
    assert transform_reads(metadata, first) == [1, 2, 3]
    assert transform_reads(metadata, new_span) == [4]
    # The cache it read is the one the first run's Transform wrote (over spans 1-3).
    store = store_for(metadata)
    context = store.get_context_by_type_and_name("node", "taxi_spans.Transform")
    first_run, new_run = sorted(store.get_executions_by_context(context.id), key=lambda e: e.id)[:2]
    assert first_run.id <= marks["first"] < new_run.id <= marks["new_span"]
    caches = {a.id: a for a in store.get_artifacts_by_type("TransformCache")}
    events = store.get_events_by_execution_ids([first_run.id, new_run.id])
    written = [e.artifact_id for e in events if e.execution_id == first_run.id and e.artifact_id in caches]
    read = [
        e.artifact_id for e in events if e.execution_id == new_run.id and e.type == e.INPUT and e.artifact_id in caches
    ]
    assert read == written and caches[read[0]].custom_properties["span"].int_value == 3


def test_a_redelivered_span_1_is_backfilled_alone(walkthrough):
    write, run = walkthrough["steps"]["backfill"]
    assert "span 1 (2013): 4388 rows -> " in _ok(write)
    assert "Backfilled span 1: later windows read it." in _ok(run)
    metadata, marks = walkthrough["metadata"], walkthrough["marks"]
    assert spans_read(metadata, "ExampleGen", marks["new_span"], marks["backfill"]) == [[1]]
    assert nodes_between(metadata, marks["new_span"], marks["backfill"]) == {"ExampleGen", "StatisticsGen"}


def test_a_span_that_is_not_there_is_named_with_the_spans_there_are(walkthrough):
    (run,) = walkthrough["steps"]["unknown_span"]
    assert run.returncode == 2, run.stdout + run.stderr
    assert "--span 9: data/taxi_spans/span-{SPAN}/data.csv has no such span" in run.stderr
    assert "(newest: 1, 2, 3, 4)" in run.stderr
    assert walkthrough["marks"]["unknown_span"] == walkthrough["marks"]["backfill"]  # nothing ran


def test_a_drifted_span_5_stops_the_run_at_data_gate(walkthrough):
    write, run = walkthrough["steps"]["drifted"]
    assert "span 5 (drifted: 2016's rows, payment_type Mobile): 833 rows -> " in _ok(write)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Run failed at DataGate" in run.stderr
    assert "feature `payment_type`: drift between span 5 and span 4 (train) is above the limit" in run.stderr
    states = executions_after(walkthrough["metadata"], walkthrough["marks"]["backfill"])
    assert states["DataGate"] == "FAILED" and "Trainer" not in states and "Pusher" not in states


def test_the_history_lists_every_run_newest_first(walkthrough):
    (history,) = walkthrough["steps"]["history"]
    lines = _ok(history).strip().splitlines()
    assert lines[0].split()[:7] == ["RUN", "TOOK", "STATUS", "INGESTED", "TRAINED", "ON", "COMPONENTS"]
    rows = [line.split() for line in lines[1:]]  # run, took, status, ingested, trained on, components...
    assert [row[2] for row in rows] == ["failed", "succeeded", "succeeded", "succeeded", "succeeded", "succeeded"], (
        history.stdout
    )
    assert [row[3:7] for row in rows] == [
        ["5", "-", "6", "ran,"],  # the drifted span, stopped at DataGate
        ["1", "-", "2", "ran"],  # the backfill
        ["4", "2-4", "12", "ran"],
        ["3", "1-3", "12", "ran"],
        ["2", "-", "2", "ran"],
        ["1", "-", "2", "ran"],
    ], history.stdout


def test_predict_scores_span_4_with_the_blessed_model_one_row_per_input_row(walkthrough):
    import pandas as pd

    (run,) = walkthrough["steps"]["predict"]
    assert "Scored 833 rows of " in _ok(run), run.stdout
    scores = pd.read_csv(walkthrough["folder"] / "span4_scores.csv")
    rows = pd.read_csv(walkthrough["folder"] / "data" / "taxi_spans" / "span-4" / "data.csv")
    assert len(scores) == len(rows) == 833
    assert list(scores["trip_start_timestamp"]) == list(rows["trip_start_timestamp"])
    assert {"label", "probability"} <= set(scores.columns)
    assert scores["probability"].between(0, 1).all()
