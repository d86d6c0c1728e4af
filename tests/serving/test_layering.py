"""`serving` stands alone: it never imports `pipelines` or `components`."""

from __future__ import annotations

import ast
from pathlib import Path

import serving

PACKAGE = Path(serving.__file__).parent


def test_serving_never_imports_pipelines_or_components():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else ([node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            )
            offenders += [
                f"{path.relative_to(PACKAGE)}: {n}" for n in names if n.split(".")[0] in ("pipelines", "components")
            ]
    assert offenders == []


def test_public_api_is_declared_and_resolves():
    assert sorted(serving.__all__) == serving.__all__
    for name in serving.__all__:
        assert getattr(serving, name) is not None
