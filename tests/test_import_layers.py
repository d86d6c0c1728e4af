"""The import-layer contracts of pyproject.toml ([tool.importlinter]) hold."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from taxi_fixtures import REPO


def test_import_linter_contracts_are_kept():
    lint_imports = shutil.which("lint-imports", path=os.path.dirname(sys.executable))
    if lint_imports is None:
        pytest.skip("needs import-linter: `make extras`")
    completed = subprocess.run([lint_imports], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "0 broken" in completed.stdout
