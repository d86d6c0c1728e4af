"""Spec rules on the built-in model's sizes and on the user functions the spec names (`package.module:function`)."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator

from pipelines.spec.errors import SpecProblem

__all__ = ["MAX_EMBEDDING_DIM", "MAX_LAYER_WIDTH", "rule_model", "rule_modules"]

_DOTTED = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
MAX_LAYER_WIDTH = 65_536
MAX_EMBEDDING_DIM = 4096


def rule_model(ctx) -> Iterator[SpecProblem]:
    units = ctx.spec.model.hidden_units
    if ctx.spec.model.build_model is None and (not units or min(units) < 1):
        yield ctx.problem(
            "model.hidden_units", f"expected a list of layer widths, each at least 1. Received: {list(units)}."
        )
    elif ctx.spec.model.build_model is None and max(units) > MAX_LAYER_WIDTH:
        yield ctx.problem(
            "model.hidden_units",
            f"a layer of {max(units):,} units is too wide: expected at most {MAX_LAYER_WIDTH:,} per layer. "
            f"Received: {list(units)}. Use narrower layers.",
        )
    if not 1 <= ctx.spec.model.embedding_dim <= MAX_EMBEDDING_DIM:
        yield ctx.problem(
            "model.embedding_dim",
            f"expected an embedding size from 1 to {MAX_EMBEDDING_DIM:,}. "
            f"Received: {ctx.spec.model.embedding_dim:,}. Typical sizes are 4 to 64.",
        )


def rule_modules(ctx) -> Iterator[SpecProblem]:
    """User functions are `pkg.module:function` and their module can be found."""
    for path, ref in (
        ("transform.module", ctx.spec.transform.module),
        ("model.build_model", ctx.spec.model.build_model),
    ):
        if ref is None:
            continue
        if not _DOTTED.match(ref):
            yield ctx.problem(path, f"expected `package.module:function`. Received: `{ref}`.")
            continue
        module = ref.split(":")[0]
        try:
            found = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            found = None
        if found is None:
            yield ctx.problem(
                path, f"module `{module}` cannot be imported. Install it, or run from the folder that holds it."
            )
