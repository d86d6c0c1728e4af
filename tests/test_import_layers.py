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


def _import_cycles(graph) -> list[set[str]]:
    """The strongly connected groups of two or more modules in `graph` (grimp's), function-level imports included."""
    cycles = []
    remaining = set(graph.modules)
    while remaining:
        module = remaining.pop()
        reaches = {module} | graph.find_downstream_modules(module)
        group = {other for other in reaches if module in graph.find_downstream_modules(other) or other == module}
        remaining -= group
        if len(group) > 1:
            cycles.append(group)
    return cycles


def test_no_import_cycle_among_the_projects_modules():
    grimp = pytest.importorskip("grimp", reason="needs grimp (import-linter's): `make extras`")
    graph = grimp.build_graph("pipelines", "components", "serving", "compat", cache_dir=None)
    cycles = _import_cycles(graph)
    assert cycles == [], "modules that import each other (move the shared piece down): " + "; ".join(
        " <-> ".join(sorted(group)) for group in cycles
    )
