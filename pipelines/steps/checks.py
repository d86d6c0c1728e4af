"""Spec rules for `steps:` and `hooks:`, listed in `pipelines.spec.rules.RULES`.

They import the components and hook factories the spec names (and so TFX)
only when a spec declares any.
"""

from __future__ import annotations

from collections.abc import Iterator

from pipelines.spec.errors import SpecProblem

__all__ = ["rule_steps", "rule_hooks"]


def rule_steps(ctx) -> Iterator[SpecProblem]:
    """Custom steps resolve, their parameters fit their signatures, and the step graph passes its rules."""
    if not ctx.spec.steps:
        return
    from pipelines.steps.plan import plan_steps

    for path, message in plan_steps(ctx.spec).problems:
        yield ctx.problem(path, message)


def rule_hooks(ctx) -> Iterator[SpecProblem]:
    """Declared hooks resolve and accept their parameters."""
    if not ctx.spec.hooks:
        return
    from pipelines.runners.spec_hooks import check_hooks

    for path, message in check_hooks(ctx.spec):
        yield ctx.problem(path, message)
