"""End to end on a REAL Airflow 2 (.venv-airflow, SQLite in a temporary AIRFLOW_HOME): a `{SPAN}` spec's DAG
takes the newest span on each scheduled run.

Two `airflow dags test` runs of one compiled DAG: the first with span 1; span 2 arrives; the second ingests
span 2 only, and DataGate compares it with span 1 (`data.checks.drift`). Asserted from ML Metadata (TFX's
Airflow launcher records the `span` of each Examples artifact), the pushed models, and `runs` / `runs show`,
which read the Airflow launcher's `run` contexts. These are the suite's only DAG runs (test_target_airflow.py
checks the compiled DAG without running it): the spec sits in a folder named with a Jinja template
(`{{ ds }}`), so the tasks must get its path unrendered, and every component must complete.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from airflow_home import AIRFLOW, airflow_env
from taxi_fixtures import REPO, taxi_spec, write_spec

from pipelines.outcome.metadata_file import open_metadata

pytestmark = pytest.mark.e2e

DAG_ID = "spans_airflow"

if not os.path.exists(AIRFLOW):
    pytest.skip(f"no Airflow at {AIRFLOW}: `make test` (or `make extras`) creates it", allow_module_level=True)


def spans_by_execution(metadata: str, execution_type: str, outputs: bool) -> list[list[int]]:
    """Per execution of `execution_type` (oldest first): the spans of the Examples/statistics it wrote or read."""
    from ml_metadata.proto import metadata_store_pb2

    event = metadata_store_pb2.Event
    wanted = (event.OUTPUT, event.DECLARED_OUTPUT) if outputs else (event.INPUT, event.DECLARED_INPUT)
    store = open_metadata(metadata)
    result = []
    for execution in sorted(store.get_executions(), key=lambda e: e.id):
        if not execution.type.endswith(execution_type):
            continue
        events = [e for e in store.get_events_by_execution_ids([execution.id]) if e.type in wanted]
        artifacts = store.get_artifacts_by_id([e.artifact_id for e in events])
        spans = []
        for artifact in artifacts:
            if artifact.type in ("Examples", "ExampleStatistics"):
                properties = artifact.properties if "span" in artifact.properties else artifact.custom_properties
                spans.append(properties["span"].int_value)
        result.append(sorted(spans))
    return result


@pytest.fixture(scope="module")
def dag_runs(taxi_sample_csv, tmp_path_factory):
    home = tmp_path_factory.mktemp("airflow_spans")
    header, *rows = open(taxi_sample_csv, encoding="utf-8").readlines()
    (home / "data" / "span-1").mkdir(parents=True)
    (home / "data" / "span-1" / "part.csv").write_text(header + "".join(rows[0::2]), encoding="utf-8")
    spec = taxi_spec(str(home / "data") + "/span-{SPAN}/*.csv", str(home / "run"), pipeline={"name": DAG_ID})
    spec["orchestrator"] = {"target": "airflow", "schedule": "0 * * * *", "airflow": {"start_date": "2024-01-01"}}
    spec["data"]["checks"] = {"drift": 0.3}
    spec["training"].update(train_steps=50, eval_steps=5)
    (home / "spec {{ ds }}").mkdir()  # a Jinja template in the path: the tasks must get it unrendered
    spec_file = write_spec(home / "spec {{ ds }}" / "spec.yaml", spec)
    env = airflow_env(home)

    def airflow(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([AIRFLOW, *args], env=env, cwd=str(home), capture_output=True, text=True, timeout=900)

    migrated = airflow("db", "migrate")
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    compile_cmd = [sys.executable, "-m", "pipelines", "compile", spec_file, "--target", "airflow"]
    compiled = subprocess.run(
        [*compile_cmd, "--output", str(home / "dags")], cwd=REPO, env=env, capture_output=True, text=True, timeout=600
    )
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    first = airflow("dags", "test", DAG_ID, "2024-01-02")
    assert first.returncode == 0, (first.stdout + first.stderr)[-4000:]
    (home / "data" / "span-2").mkdir()
    (home / "data" / "span-2" / "part.csv").write_text(header + "".join(rows[1::2]), encoding="utf-8")
    second = airflow("dags", "test", DAG_ID, "2024-01-03")
    assert second.returncode == 0, (second.stdout + second.stderr)[-4000:]
    runs = [sys.executable, "-m", "pipelines", "runs", spec_file]
    listed = subprocess.run(runs, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    shown = subprocess.run([*runs, "show", "latest"], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    return {"home": home, "metadata": str(home / "run" / "metadata.sqlite"), "runs": listed, "show": shown}


def test_each_dag_run_ingests_the_newest_span(dag_runs):
    assert spans_by_execution(dag_runs["metadata"], "ExampleGen", outputs=True) == [[1], [2]]
    # The whole pipeline ran on the new span: its statistics, and the Trainer's examples.
    assert spans_by_execution(dag_runs["metadata"], "StatisticsGen", outputs=True) == [[1], [2]]
    assert spans_by_execution(dag_runs["metadata"], "Trainer", outputs=False) == [[1], [2]]


def test_datagate_compares_the_new_span_with_the_previous_one(dag_runs):
    # First run: no previous span; second run: span 2's statistics and, resolved across runs, span 1's.
    assert spans_by_execution(dag_runs["metadata"], "DataGate", outputs=False) == [[1], [1, 2]]


def test_the_runs_trained_evaluated_and_pushed(dag_runs):
    from pipelines.targets.mlmd_states import states_after

    states = states_after(dag_runs["metadata"], 0)
    expected = ["ExampleGen", "StatisticsGen", "SchemaGen", "ExampleValidator", "DataGate", "Transform", "Trainer"]
    expected += ["Evaluator", "Pusher"]
    assert {c: states.get(c) for c in expected} == {c: "COMPLETE" for c in expected}, states
    assert len(spans_by_execution(dag_runs["metadata"], "Evaluator", outputs=False)) == 2
    assert os.listdir(dag_runs["home"] / "run" / "serving" / "chicago_taxi")


def test_runs_lists_the_dag_runs_with_their_spans(dag_runs):
    listed = dag_runs["runs"]
    assert listed.returncode == 0, listed.stderr
    header, *lines = listed.stdout.strip().splitlines()
    assert header.split()[3:6] == ["INGESTED", "TRAINED", "ON"]
    # Newest first; Airflow's run ids (`manual__<logical date>`) and the spans each run read.
    cells = [line.split()[:5] for line in lines]
    assert [cell[0].startswith("manual__2024-01-0") for cell in cells] == [True, True]
    assert [cell[2:5] for cell in cells] == [["succeeded", "2", "2"], ["succeeded", "1", "1"]]
    shown = dag_runs["show"]
    assert shown.returncode == 0, shown.stderr
    assert "Spans: ingested 2; trained on 2" in shown.stdout
    drift = shown.stdout[shown.stdout.index("Drift between spans:") :].splitlines()
    assert drift[2].split()[:3] == ["1", "->", "2"] and drift[2].split()[-2:] == ["within", "0.3"]
