"""What `python -m pipelines components` prints: built-in steps, registered components and hooks."""

from __future__ import annotations

import inspect

from pipelines.builtins import BUILTINS
from pipelines.graph.model import Port
from pipelines.steps.registry import COMPONENT_GROUP, HOOK_GROUP, UnresolvedReference, entries, load_target
from pipelines.steps.signature import ComponentSignature, NotAComponent, signature_of

__all__ = ["format_listing"]

_INDENT = " " * 6


def _ports(ports: dict[str, Port] | dict[str, str]) -> str:
    parts = []
    for name, port in ports.items():
        if isinstance(port, Port):
            parts.append(f"{name} ({port.type_name}{', optional' if port.optional else ''})")
        else:
            parts.append(f"{name} ({port})")
    return ", ".join(parts) or "none"


def _parameters(signature: ComponentSignature) -> str:
    parts = []
    for name, info in signature.parameters.items():
        if not info.optional:
            parts.append(f"{name} ({info.type_text}, required)")
        elif info.default is inspect.Parameter.empty:
            parts.append(f"{name} ({info.type_text}, optional)")
        else:
            parts.append(f"{name} ({info.type_text}, default {info.default!r})")
    return ", ".join(parts) or "none"


def _component_lines(name: str, target: str, source: str) -> list[str]:
    lines = [f"  {name:<20} {target}  [{source}]"]
    try:
        signature = signature_of(load_target(target), target)
    except (UnresolvedReference, NotAComponent) as err:
        return [*lines, f"{_INDENT}cannot be loaded: {err}"]
    if signature.doc:
        lines.append(f"{_INDENT}{signature.doc.splitlines()[0]}")
    lines.append(f"{_INDENT}inputs:     {_ports(signature.inputs)}")
    lines.append(f"{_INDENT}outputs:    {_ports(signature.outputs)}")
    lines.append(f"{_INDENT}parameters: {_parameters(signature)}")
    return lines


def _hook_lines(name: str, target: str, source: str) -> list[str]:
    lines = [f"  {name:<20} {target}  [{source}]"]
    try:
        factory = load_target(target)
    except UnresolvedReference as err:
        return [*lines, f"{_INDENT}cannot be loaded: {err}"]
    try:
        lines.append(f"{_INDENT}parameters: {', '.join(inspect.signature(factory).parameters) or 'none'}")
    except (TypeError, ValueError):
        pass
    return lines


def format_listing() -> str:
    """The whole listing as text; imports each registered component to read its signature."""
    lines = ["Built-in steps (always in the pipeline, set up by the spec's sections; wire to them as `Step.output`):"]
    for step in BUILTINS:
        lines.append(f"  {step.id:<20} configured by: {step.configured_by}")
        lines.append(f"{_INDENT}inputs:     {_ports(step.inputs)}")
        lines.append(f"{_INDENT}outputs:    {_ports(step.outputs)}")
    lines.append("")
    lines.append(f"Components for `steps:` (`uses: <name>`; entry-point group `{COMPONENT_GROUP}`):")
    for entry in sorted(entries(COMPONENT_GROUP).values(), key=lambda e: e.name):
        lines.extend(_component_lines(entry.name, entry.target, entry.source))
    lines.append("")
    lines.append(f"Hooks for `hooks:` (`uses: <name>`; entry-point group `{HOOK_GROUP}`):")
    for entry in sorted(entries(HOOK_GROUP).values(), key=lambda e: e.name):
        lines.extend(_hook_lines(entry.name, entry.target, entry.source))
    return "\n".join(lines)
