"""A real Airflow 2 (`.venv-airflow`) with its home in a temporary folder, for the Airflow target's tests."""

from __future__ import annotations

import os

from taxi_fixtures import REPO

AIRFLOW_VENV = os.environ.get("AIRFLOW_VENV", os.path.join(REPO, ".venv-airflow"))
AIRFLOW = os.path.join(AIRFLOW_VENV, "bin", "airflow")
AIRFLOW_PYTHON = os.path.join(AIRFLOW_VENV, "bin", "python")


def airflow_env(home) -> dict[str, str]:
    """The environment of an Airflow whose home, DAGs folder and SQLite database are under `home`."""
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    env.update(
        PATH=f"{os.path.dirname(AIRFLOW)}{os.pathsep}{os.environ['PATH']}",
        AIRFLOW_HOME=str(home),
        AIRFLOW__CORE__DAGS_FOLDER=str(home / "dags"),
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
        AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=f"sqlite:///{home}/airflow.db",
        AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT="300",
        AIRFLOW__CORE__DAG_FILE_PROCESSOR_TIMEOUT="300",
    )
    env.pop("PYTHONPATH", None)
    return env
