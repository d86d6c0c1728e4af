"""After `compile --target airflow`: when Airflow cannot register the DAG, the exact commands that do.

Driven with the REAL `airflow` command of .venv-airflow (a temporary AIRFLOW_HOME). The case where it
registers, and `airflow dags next-execution` works right after compile, is in test_target_airflow.py.
"""

from __future__ import annotations

import os

import pytest
from airflow_home import AIRFLOW

from pipelines.targets.airflow_register import register_dag

AIRFLOW_BIN = os.path.dirname(AIRFLOW)


@pytest.fixture
def dag_file(tmp_path):
    path = tmp_path / "out" / "chicago_taxi_dag.py"
    path.parent.mkdir()
    path.write_text("# not parsed by these tests\n")
    return str(path)


@pytest.fixture
def airflow_env(tmp_path, monkeypatch):
    if not os.path.exists(os.path.join(AIRFLOW_BIN, "airflow")):
        pytest.skip(f"no Airflow in {AIRFLOW_BIN}: `make extras` creates it")
    home = tmp_path / "airflow_home"
    monkeypatch.setenv("PATH", f"{AIRFLOW_BIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("AIRFLOW_HOME", str(home))
    monkeypatch.setenv("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN", f"sqlite:///{home}/airflow.db")
    monkeypatch.setenv("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
    monkeypatch.delenv("AIRFLOW__CORE__DAGS_FOLDER", raising=False)
    return home


def test_without_airflow_on_path_it_prints_the_commands(dag_file, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))

    registration = register_dag(dag_file, "chicago_taxi")

    assert not registration.registered
    assert "No `airflow` command is on PATH" in registration.lines[0]
    assert registration.lines[1:] == [
        f'    cp {dag_file} "$(airflow config get-value core dags_folder)"/',
        "    airflow dags reserialize",
        "    airflow dags next-execution chicago_taxi",
    ]


def test_output_outside_the_dags_folder_names_both_folders(dag_file, airflow_env):
    registration = register_dag(dag_file, "chicago_taxi")

    assert not registration.registered
    assert registration.lines[0] == (
        f"{dag_file} is not in Airflow's dags_folder ({airflow_env / 'dags'}). "
        f"Compile with `--output {airflow_env / 'dags'}`, or copy it there; then:"
    )
    assert registration.lines[-1] == "    airflow dags next-execution chicago_taxi"


def test_an_unmigrated_database_is_named_with_the_fix(dag_file, airflow_env, monkeypatch):
    monkeypatch.setenv("AIRFLOW__CORE__DAGS_FOLDER", os.path.dirname(dag_file))

    registration = register_dag(dag_file, "chicago_taxi")

    assert not registration.registered
    assert registration.lines[0].startswith("`airflow dags reserialize` failed (a new AIRFLOW_HOME needs `airflow db")
    assert "initialize the database" in registration.lines[1]
    assert registration.lines[-2:] == ["    airflow dags reserialize", "    airflow dags next-execution chicago_taxi"]
