"""`compile --target airflow`: a REAL Airflow 2 (its own .venv-airflow, SQLite in a temporary
AIRFLOW_HOME) loads the generated DAG, shows the cron with `dags next-execution`, and runs the
pipeline end to end with `airflow dags test`; asserted from ML Metadata and the pushed model.

`make test` builds .venv-airflow (Airflow cannot share .venv: it needs Werkzeug<3).
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys

import pytest
from taxi_fixtures import REPO, taxi_spec, write_spec

from pipelines.targets.mlmd_states import states_after

pytestmark = pytest.mark.e2e

AIRFLOW_VENV = os.environ.get("AIRFLOW_VENV", os.path.join(REPO, ".venv-airflow"))
AIRFLOW = os.path.join(AIRFLOW_VENV, "bin", "airflow")
AIRFLOW_PYTHON = os.path.join(AIRFLOW_VENV, "bin", "python")
CRON = "15 4 * * *"

if not os.path.exists(AIRFLOW):
    pytest.skip(f"no Airflow at {AIRFLOW}: `make test` (or `make extras`) creates it", allow_module_level=True)


@pytest.fixture(scope="module")
def airflow_home(taxi_sample_csv, tmp_path_factory):
    home = tmp_path_factory.mktemp("airflow_home")
    spec = taxi_spec(
        taxi_sample_csv,
        str(home / "run"),
        orchestrator={
            "target": "airflow",
            "schedule": CRON,
            "airflow": {"start_date": "2024-01-01"},
            "components": {"Trainer": {"gpus": 1, "retries": 2, "timeout_seconds": 1800}, "Evaluator": {"retries": 1}},
        },
    )
    spec["training"].update(train_steps=50, eval_steps=5)
    spec_file = write_spec(home / "spec.yaml", spec)
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    compiled = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipelines",
            "compile",
            spec_file,
            "--target",
            "airflow",
            "--output",
            str(home / "dags"),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    assert "warning: orchestrator.components.Trainer: the airflow target cannot honour gpus=1" in compiled.stderr
    env.update(
        AIRFLOW_HOME=str(home),
        AIRFLOW__CORE__DAGS_FOLDER=str(home / "dags"),
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
        AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=f"sqlite:///{home}/airflow.db",
        AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT="300",
        AIRFLOW__CORE__DAG_FILE_PROCESSOR_TIMEOUT="300",
    )
    env.pop("PYTHONPATH", None)

    def airflow(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
        return subprocess.run([AIRFLOW, *args], env=env, cwd=str(home), capture_output=True, text=True, timeout=timeout)

    migrated = airflow("db", "migrate")
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    return {"home": home, "airflow": airflow, "env": env, "compiled": compiled}


def test_generated_dag_file_is_small_and_names_the_spec(airflow_home):
    (dag_file,) = (airflow_home["home"] / "dags").iterdir()
    assert dag_file.name == "chicago_taxi_dag.py"
    text = dag_file.read_text()
    assert "dag = build_dag(" in text and str(airflow_home["home"] / "spec.yaml") in text


def test_airflow_loads_the_dag_with_schedule_retries_and_timeouts(airflow_home):
    probe = (
        "import json; from airflow.models import DagBag\n"
        f"bag = DagBag({str(airflow_home['home'] / 'dags')!r}, include_examples=False)\n"
        "dag = bag.get_dag('chicago_taxi')\n"
        "print(json.dumps({'errors': {k: str(v) for k, v in bag.import_errors.items()}, 'schedule': dag.schedule_interval,"
        " 'tasks': {t.task_id: [t.retries, t.execution_timeout.total_seconds() if t.execution_timeout else None,"
        " sorted(t.upstream_task_ids)] for t in dag.tasks}}))\n"
    )
    done = subprocess.run(
        [AIRFLOW_PYTHON, "-c", probe], env=airflow_home["env"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded["errors"] == {}
    assert loaded["schedule"] == CRON
    tasks = loaded["tasks"]
    assert tasks["Trainer"][:2] == [2, 1800.0]
    assert tasks["Evaluator"][:2] == [1, None]
    assert tasks["Pusher"][0] == 0
    assert "Transform" in tasks["Trainer"][2]


def test_next_execution_follows_the_cron(airflow_home):
    airflow = airflow_home["airflow"]
    reserialized = airflow("dags", "reserialize")
    assert reserialized.returncode == 0, reserialized.stderr
    shown = airflow("dags", "next-execution", "chicago_taxi")
    assert shown.returncode == 0, shown.stderr
    stamp = shown.stdout.strip().splitlines()[-1]
    when = datetime.datetime.fromisoformat(stamp)
    assert (when.hour, when.minute) == (4, 15), stamp


def test_airflow_dags_test_runs_the_pipeline_end_to_end(airflow_home):
    ran = airflow_home["airflow"]("dags", "test", "chicago_taxi", "2024-01-02", timeout=900)
    assert ran.returncode == 0, (ran.stdout + ran.stderr)[-4000:]
    states = states_after(str(airflow_home["home"] / "run" / "metadata.sqlite"), 0)
    expected = ["ExampleGen", "StatisticsGen", "SchemaGen", "ExampleValidator", "DataGate", "Transform", "Trainer"]
    expected += ["Evaluator", "Pusher"]
    assert {c: states.get(c) for c in expected} == {c: "COMPLETE" for c in expected}, states
    assert os.listdir(airflow_home["home"] / "run" / "serving" / "chicago_taxi")
