"""What the process environment passes on to worker processes (components/common/keras_env.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PARENT = textwrap.dedent(
    """
    import subprocess, sys
    from components.common.keras_env import ensure_legacy_keras

    ensure_legacy_keras()
    child = "import warnings; warnings.warn('from a worker', FutureWarning); print('ran')"
    completed = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True)
    print(completed.stdout.strip(), completed.stderr.strip(), sep="|")
    """
)


def _run_parent(**env: str) -> str:
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    environment.update(env)
    completed = subprocess.run(
        [sys.executable, "-c", PARENT], cwd=REPO, env=environment, capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.strip()


def test_worker_processes_do_not_print_future_warnings():
    assert _run_parent() == "ran|"


def test_a_users_own_warning_settings_reach_the_workers():
    output, errors = _run_parent(PYTHONWARNINGS="default").split("|", 1)
    assert output == "ran"
    assert "FutureWarning: from a worker" in errors
