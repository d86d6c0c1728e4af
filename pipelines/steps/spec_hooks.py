"""Hooks declared in the spec: `hooks: [pkg.module:Factory, {uses: prometheus, parameters: {...}}]`.

Each entry names a factory (a class or function), by `package.module:Name`
or by a short name registered under the `yaml_tfx.hooks` entry-point group.
It is called with `parameters` as keyword arguments and returns a hook
object (see `pipelines.hooks.phases` for the phases and their arguments).
"""

from __future__ import annotations

import inspect
from typing import Any

from pipelines.spec.errors import did_you_mean
from pipelines.spec.models import HookSpec, PipelineSpec
from pipelines.steps.registry import HOOK_GROUP, UnresolvedReference, resolve

__all__ = ["check_hooks", "build_hooks"]


def _normalized(hook: str | HookSpec) -> HookSpec:
    return HookSpec(uses=hook) if isinstance(hook, str) else hook


def _parameter_problems(factory: Any, parameters: dict[str, Any], path: str) -> list[tuple[str, str]]:
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return []
    accepted = signature.parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
    problems = []
    for name in parameters:
        if name not in accepted and not takes_any:
            known = ", ".join(f"`{k}`" for k in accepted) or "none"
            problems.append(
                (
                    f"{path}.parameters.{name}",
                    f"hook factory takes no parameter `{name}`.{did_you_mean(name, accepted)} "
                    f"Expected one of: {known}. Rename or remove it.",
                )
            )
    for name, param in accepted.items():
        required = param.default is inspect.Parameter.empty and param.kind in (
            inspect.Parameter.KEYWORD_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        )
        if required and name not in parameters:
            problems.append(
                (f"{path}.parameters", f"hook factory needs `{name}`. Add `{name}: <value>` under `parameters`.")
            )
    return problems


def check_hooks(spec: PipelineSpec) -> list[tuple[str, str]]:
    """`(yaml path, message)` for every hook that cannot be built; builds none."""
    problems = []
    for index, hook in enumerate(spec.hooks):
        hook = _normalized(hook)
        path = f"hooks[{index}]"
        try:
            factory, _ = resolve(hook.uses, HOOK_GROUP)
        except UnresolvedReference as err:
            problems.append((path if isinstance(spec.hooks[index], str) else f"{path}.uses", str(err)))
            continue
        if not callable(factory):
            problems.append((path, f"`{hook.uses}` is not callable. Expected a class or function that returns a hook."))
            continue
        problems.extend(_parameter_problems(factory, dict(hook.parameters), path))
    return problems


def build_hooks(spec: PipelineSpec) -> list[object]:
    """Calls each declared factory with its parameters; assumes `check_hooks` passed."""
    hooks = []
    for hook in spec.hooks:
        hook = _normalized(hook)
        factory, _ = resolve(hook.uses, HOOK_GROUP)
        hooks.append(factory(**dict(hook.parameters)))
    return hooks
