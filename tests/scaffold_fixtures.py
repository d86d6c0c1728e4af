"""Scaffolds a component package with `python -m pipelines new-component` and pip-installs it into a folder.

A plain module (see taxi_fixtures.py): the scaffold test and the row filter
e2e test both install a real distribution this way, entry points included.
"""

from __future__ import annotations

import os
import subprocess
import sys

from taxi_fixtures import REPO

SCAFFOLD_NAME = "sample_rows"


def cli_env(**extra: str) -> dict[str, str]:
    return dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore", **extra)


def run_pipelines_cli(*args: str, env=None, timeout: int = 900) -> subprocess.CompletedProcess:
    """`python -m pipelines ARGS` from the repo, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "pipelines", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env or cli_env(),
        timeout=timeout,
    )


def scaffold_and_install(folder) -> tuple[str, str]:
    """Returns (package folder, site folder holding the installed distribution)."""
    created = run_pipelines_cli("new-component", SCAFFOLD_NAME, "--dir", str(folder))
    assert created.returncode == 0, created.stdout + created.stderr
    package = os.path.join(str(folder), SCAFFOLD_NAME)
    site = os.path.join(str(folder), "site")
    installed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            site,
            package,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return package, site
