"""Custom steps in a spec: the component registry, signatures, planning and wiring.

- `registry`: short names from shipped components and entry points.
- `signature`: a component's inputs, outputs and parameters.
- `plan`: resolves `steps:` and checks them (parameters, graph rules).
- `wiring`: builds the TFX components at compile time.
- `listing`: what `python -m pipelines components` prints.
"""

from pipelines.steps.registry import COMPONENT_GROUP, HOOK_GROUP, entries, resolve

__all__ = ["COMPONENT_GROUP", "HOOK_GROUP", "entries", "resolve"]
