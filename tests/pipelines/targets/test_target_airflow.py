"""`compile --target airflow`: a REAL Airflow 2 (its own .venv-airflow, SQLite in a temporary
AIRFLOW_HOME) on PATH. Compiling into its dags folder registers the DAG, so `dags next-execution`
shows the cron right away; the DAG file parses in under 5 s without TensorFlow or TFX; Airflow
loads it with the schedule, retries and timeouts. `airflow dags test` runs a compiled DAG end to end
in test_airflow_spans_e2e.py (two scheduled runs over spans; a spec folder named `{{ ds }}` there too).

The spec sits in a folder named with a Jinja template (`{{ ds }}`): the DAG must name its path
unrendered. `make test` builds .venv-airflow (Airflow cannot share .venv: it needs Werkzeug<3).
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys

import pytest
from airflow_home import AIRFLOW, AIRFLOW_PYTHON, airflow_env
from taxi_fixtures import REPO, taxi_spec, write_spec

pytestmark = pytest.mark.e2e

CRON = "15 4 * * *"
SPEC_FOLDER = "spec {{ ds }}"
PARSE_BUDGET_S = 5.0

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
    (home / SPEC_FOLDER).mkdir()
    spec_file = write_spec(home / SPEC_FOLDER / "spec.yaml", spec)
    env = airflow_env(home)

    def airflow(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
        return subprocess.run([AIRFLOW, *args], env=env, cwd=str(home), capture_output=True, text=True, timeout=timeout)

    migrated = airflow("db", "migrate")
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
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
        timeout=600,
    )
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    assert "warning: orchestrator.components.Trainer: the airflow target cannot honour gpus=1" in compiled.stderr
    return {"home": home, "airflow": airflow, "env": env, "compiled": compiled, "spec_file": spec_file}


def test_generated_dag_file_is_small_and_names_the_spec(airflow_home):
    (dag_file,) = (airflow_home["home"] / "dags").iterdir()
    assert dag_file.name == "chicago_taxi_dag.py"
    text = dag_file.read_text()
    assert "dag = build_dag(SPEC_FILE)" in text and f"SPEC_FILE = {airflow_home['spec_file']!r}" in text


def test_compile_registers_the_dag_and_next_execution_follows_the_cron(airflow_home):
    assert f"Registered with Airflow (`{AIRFLOW} dags reserialize`)." in airflow_home["compiled"].stdout
    # Right after compile, nothing else run: Airflow's database knows the DAG.
    shown = airflow_home["airflow"]("dags", "next-execution", "chicago_taxi")
    assert shown.returncode == 0, shown.stderr
    stamp = shown.stdout.strip().splitlines()[-1]
    when = datetime.datetime.fromisoformat(stamp)
    assert (when.hour, when.minute) == (4, 15), stamp
    assert f"Next run (`airflow dags next-execution chicago_taxi`): {stamp}" in airflow_home["compiled"].stdout


def test_dag_file_parses_under_5_s_without_tensorflow_or_tfx(airflow_home):
    (dag_file,) = (airflow_home["home"] / "dags").iterdir()
    probe = (
        "import json, runpy, sys, time\n"
        "cpu, wall = time.process_time(), time.perf_counter()\n"
        f"dag = runpy.run_path({str(dag_file)!r})['dag']\n"
        "print(json.dumps({'cpu_s': time.process_time() - cpu, 'wall_s': time.perf_counter() - wall,"
        " 'tasks': len(dag.tasks), 'heavy': [m for m in ('tensorflow', 'tfx', 'apache_beam') if m in sys.modules]}))\n"
    )
    done = subprocess.run(
        [AIRFLOW_PYTHON, "-c", probe], env=airflow_home["env"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    parsed = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"DAG file parse, `import airflow` included: {parsed['cpu_s']:.2f} s CPU, {parsed['wall_s']:.2f} s wall")
    assert parsed["heavy"] == [] and parsed["tasks"] == 10, parsed
    # CPU time, not wall time: on this shared 2-core machine the wall time follows other processes' load.
    # Half the budget: still under 5 s of wall time with the core shared with one other process.
    assert parsed["cpu_s"] < PARSE_BUDGET_S / 2, f"parsing took {parsed['cpu_s']:.2f} s of CPU"


def test_airflow_loads_the_dag_with_schedule_retries_and_timeouts(airflow_home):
    probe = (
        "import json; from airflow.models import DagBag\n"
        f"bag = DagBag({str(airflow_home['home'] / 'dags')!r}, include_examples=False)\n"
        "dag = bag.get_dag('chicago_taxi')\n"
        "print(json.dumps({'errors': {k: str(v) for k, v in bag.import_errors.items()}, 'schedule': dag.schedule_interval,"
        " 'import_s': [s.duration.total_seconds() for s in bag.dagbag_stats],"
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
    # Airflow's own limit for one file (`dagbag_import_timeout`, default 30 s), measured by Airflow.
    assert len(loaded["import_s"]) == 1 and loaded["import_s"][0] < 30, loaded["import_s"]
    tasks = loaded["tasks"]
    assert tasks["Trainer"][:2] == [2, 1800.0]
    assert tasks["Evaluator"][:2] == [1, None]
    assert tasks["Pusher"][0] == 0
    assert "Transform" in tasks["Trainer"][2]
    assert tasks["Transform"][2] == ["DataGate", "ExampleGen", "SchemaGen"]
