"""What a TFX module file defines, read with `ast` (never imported: importing runs the user's code)."""

from __future__ import annotations

import ast

__all__ = ["defines", "top_level_functions"]


def top_level_functions(tree: ast.Module) -> set[str]:
    """The names a module defines or imports at top level (functions, assignments, imports)."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):  # `run_fn = _make_run_fn()`
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):  # `from shared import run_fn`
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


def defines(path: str, function: str) -> bool:
    """Whether the (readable, valid) module file at `path` defines `function` at top level."""
    with open(path, encoding="utf-8") as handle:
        return function in top_level_functions(ast.parse(handle.read(), filename=path))
