"""`validate` rules for TFX module files (`transform.module_file`, `training.module_file`).

A module file is checked by reading it, never by importing it: importing runs
the user's top-level code (TensorFlow, their own imports) inside `validate`.
The file must exist, parse as Python, and define at top level the function
TFX calls: `preprocessing_fn` for Transform, `run_fn` for the Trainer.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterator
from typing import Any, Optional

from pipelines.spec.errors import SpecProblem
from pipelines.spec.module_files import top_level_functions

__all__ = ["REQUIRED_FUNCTION", "builtin_model_rule", "module_file_problem", "rule_module_files"]

# YAML key -> the function TFX's component calls in that module file.
REQUIRED_FUNCTION = {"transform.module_file": "preprocessing_fn", "training.module_file": "run_fn"}


def builtin_model_rule(rule: Callable) -> Callable:
    """`rule`, checking the `model` section only where a built-in model trains (no `training.module_file`)."""

    @functools.wraps(rule)
    def checked(ctx: Any) -> Iterator[SpecProblem]:
        if ctx.spec.training.module_file is None:
            yield from rule(ctx)

    return checked


def module_file_problem(path: str, function: str) -> Optional[str]:
    """Why the module file at `path` cannot give TFX `function`, or None when it can."""
    try:
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
    except OSError as error:
        return f"cannot read the module file {path}: {error.strerror}. Fix the path (relative to the spec file)."
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as error:
        return f"the module file {path} is not valid Python (line {error.lineno}: {error.msg}). Fix the file."
    if function not in top_level_functions(tree):
        return (
            f"the module file {path} has no top-level function `{function}`: TFX calls `{function}` in it. "
            f"Define `def {function}(...)` in {path}, or name another file."
        )
    return None


def rule_module_files(ctx: Any) -> Iterator[SpecProblem]:
    """Each module file exists, parses and defines the function TFX calls; a TFX transform needs a TFX run_fn."""
    paths = {
        "transform.module_file": ctx.resolved.transform_module_file,
        "training.module_file": ctx.resolved.training_module_file,
    }
    for key, path in paths.items():
        if path is not None:
            problem = module_file_problem(path, REQUIRED_FUNCTION[key])
            if problem:
                yield ctx.problem(key, problem)
    spec = ctx.spec
    if spec.transform.module_file and spec.transform.module:
        yield ctx.problem(
            "transform.module",
            "`transform.module` adds outputs to the generated transform; `transform.module_file` replaces it. "
            "Received both. Keep one.",
        )
    if spec.transform.module_file and not spec.training.module_file:
        yield ctx.problem(
            "transform.module_file",
            "a TFX `preprocessing_fn` makes its own outputs, which the built-in models do not read. "
            "Received `transform.module_file` without `training.module_file`. Add `training.module_file` "
            "(its `run_fn` trains on those outputs), or remove `transform.module_file`.",
        )
    if spec.training.custom_config is not None and not spec.training.module_file:
        yield ctx.problem(
            "training.custom_config",
            "`custom_config` is passed to a module file's `run_fn` only. Received it without "
            "`training.module_file`. Add `training.module_file` or remove `training.custom_config`.",
        )
