"""After `compile --target airflow`: register the DAG with Airflow, or say exactly how.

`airflow dags next-execution NAME` reads the DAG's row in Airflow's database,
which only exists once the DAG folder has been parsed into it (by the
scheduler, or by `airflow dags reserialize`). When the `airflow` command on
PATH has the output folder as its `dags_folder`, `register_dag` runs
`airflow dags reserialize` and then `next-execution` itself, so the schedule
is visible right after compiling. Otherwise it returns the exact commands.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import shutil
import subprocess

__all__ = ["Registration", "register_dag", "AIRFLOW_TIMEOUT_S"]

# `reserialize` parses the whole DAG folder; Airflow's own default import timeout is 30 s a file.
AIRFLOW_TIMEOUT_S = 300


@dataclasses.dataclass
class Registration:
    """What `register_dag` did: `registered` is True when Airflow knows the DAG; `lines` say what to do next."""

    registered: bool
    lines: list[str]


def _airflow(airflow: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [airflow, *args], capture_output=True, text=True, timeout=AIRFLOW_TIMEOUT_S, stdin=subprocess.DEVNULL
    )


def _tail(done: subprocess.CompletedProcess, lines: int = 6) -> str:
    return "\n".join((done.stderr or done.stdout).strip().splitlines()[-lines:])


def _steps(dag_file: str, dag_id: str, copy: bool) -> list[str]:
    steps = []
    if copy:
        steps.append(f'cp {shlex.quote(dag_file)} "$(airflow config get-value core dags_folder)"/')
    steps += ["airflow dags reserialize", f"airflow dags next-execution {dag_id}"]
    return [f"    {step}" for step in steps]


def register_dag(dag_file: str, dag_id: str) -> Registration:
    """Makes Airflow read `dag_file` now when it is in the `dags_folder` of the `airflow` on PATH.

    Args:
        dag_file: The DAG file `compile --target airflow` wrote.
        dag_id: The DAG's id (the pipeline name).

    Returns:
        Whether the DAG is registered, and the lines to show: the next run, or the commands that register it.
    """
    airflow = shutil.which("airflow")
    if airflow is None:
        return Registration(
            False,
            [
                "Airflow knows this DAG once its dags_folder is parsed (by the scheduler, within "
                "`dag_dir_list_interval`). No `airflow` command is on PATH here; where Airflow runs:",
                *_steps(dag_file, dag_id, copy=True),
            ],
        )
    found = _airflow(airflow, "config", "get-value", "core", "dags_folder")
    if found.returncode != 0:
        return Registration(
            False,
            [f"`{airflow} config get-value core dags_folder` failed:", _tail(found), *_steps(dag_file, dag_id, True)],
        )
    dags_folder = found.stdout.strip().splitlines()[-1] if found.stdout.strip() else ""
    if os.path.realpath(dags_folder) != os.path.realpath(os.path.dirname(dag_file)):
        return Registration(
            False,
            [
                f"{dag_file} is not in Airflow's dags_folder ({dags_folder}). Compile with `--output {dags_folder}`, "
                "or copy it there; then:",
                *_steps(dag_file, dag_id, copy=True),
            ],
        )
    reserialized = _airflow(airflow, "dags", "reserialize")
    if reserialized.returncode != 0:
        return Registration(
            False,
            [
                "`airflow dags reserialize` failed (a new AIRFLOW_HOME needs `airflow db migrate` first):",
                _tail(reserialized),
                "Fix that, then:",
                *_steps(dag_file, dag_id, copy=False),
            ],
        )
    shown = _airflow(airflow, "dags", "next-execution", dag_id)
    if shown.returncode != 0:
        return Registration(
            False,
            [
                f"Airflow parsed {dags_folder} but `airflow dags next-execution {dag_id}` failed; "
                "`airflow dags list-import-errors` shows why:",
                _tail(shown),
            ],
        )
    next_run = shown.stdout.strip().splitlines()[-1] if shown.stdout.strip() else "None"
    lines = [f"Registered with Airflow (`{airflow} dags reserialize`)."]
    lines.append(f"Next run (`airflow dags next-execution {dag_id}`): {next_run}")
    if "PAUSED" in shown.stderr:
        lines.append(f"The DAG is paused (Airflow's default for new DAGs): `airflow dags unpause {dag_id}` starts it.")
    return Registration(True, lines)
