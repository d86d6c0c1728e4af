"""Spec rules for `steps:`, `hooks:` and per-component settings, listed in `pipelines.load.STEP_RULES`.

They import the components and hook factories the spec names (and so TFX)
only when a spec declares any (`plan_steps` and `check_hooks` resolve them when called).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Optional

from pipelines.builtins import COMPONENT_ORDER
from pipelines.spec.errors import SpecProblem, did_you_mean
from pipelines.spec.gpu_nodes import gpu_placement
from pipelines.steps.plan import plan_steps
from pipelines.steps.spec_hooks import check_hooks

__all__ = ["rule_steps", "rule_hooks", "rule_component_settings"]


def rule_steps(ctx) -> Iterator[SpecProblem]:
    """Custom steps resolve, their parameters fit their signatures, and the step graph passes its rules."""
    if not ctx.spec.steps:
        return
    for path, message in plan_steps(ctx.spec).problems:
        yield ctx.problem(path, message)


def rule_hooks(ctx) -> Iterator[SpecProblem]:
    """Declared hooks resolve and accept their parameters."""
    if not ctx.spec.hooks:
        return
    for path, message in check_hooks(ctx.spec):
        yield ctx.problem(path, message)


def rule_component_settings(ctx) -> Iterator[SpecProblem]:
    """`orchestrator.components` names real components (built-in or custom); `workers` is for the Trainer."""
    orchestrator = ctx.spec.orchestrator
    known = list(COMPONENT_ORDER) + [step.name for step in getattr(ctx.spec, "steps", None) or ()]
    for component_id, settings in orchestrator.components.items():
        path = f"orchestrator.components.{component_id}"
        if component_id not in known:
            yield ctx.problem(
                path,
                f"unknown component `{component_id}`.{did_you_mean(component_id, known)} "
                f"Expected one of: {', '.join(known)}. Rename or remove it.",
            )
        elif settings is not None and settings.gpus and _placement_problem(orchestrator.platform, settings.accelerator):
            yield ctx.problem(
                f"{path}.accelerator",
                f"{_placement_problem(orchestrator.platform, settings.accelerator)} Fix `accelerator`, or set "
                "`orchestrator.platform: nvidia-gfd` to use it as NVIDIA GPU feature discovery's product label.",
            )
        elif settings is not None and settings.workers > 1 and component_id != "Trainer":
            yield ctx.problem(
                f"{path}.workers",
                f"only the Trainer runs on several workers. Expected workers: 1 for {component_id}. "
                f"Received: workers={settings.workers}. Remove `workers`, or move it under `Trainer`.",
            )


def _placement_problem(platform: str, accelerator: Optional[str]) -> Optional[str]:
    try:
        gpu_placement(platform, accelerator)
    except ValueError as error:
        return str(error)
    return None
