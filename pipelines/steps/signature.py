"""What a TFX component takes and gives: inputs, outputs and parameters, read from its spec class.

Works for `@component` functions and for `BaseComponent` subclasses alike:
both carry a `SPEC_CLASS` with `INPUTS`, `OUTPUTS` and `PARAMETERS`.
YAML parameter values are checked against the parameter types here, before
anything runs.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from typing import Any

from pipelines.graph.model import Port

__all__ = ["ParameterInfo", "ComponentSignature", "signature_of", "check_value", "NotAComponent"]

_REQUIRED = inspect.Parameter.empty


class NotAComponent(TypeError):
    """The object `uses` names is not a TFX component."""


@dataclasses.dataclass(frozen=True)
class ParameterInfo:
    type: Any
    optional: bool
    default: Any = _REQUIRED

    @property
    def type_text(self) -> str:
        return _type_text(self.type)


@dataclasses.dataclass(frozen=True)
class ComponentSignature:
    inputs: dict[str, Port]
    outputs: dict[str, str]
    parameters: dict[str, ParameterInfo]
    doc: str = ""


def _type_text(tp: Any) -> str:
    if isinstance(tp, type) and typing.get_origin(tp) is None:
        return tp.__name__
    return str(tp).replace("typing.", "")


def _is_component_class(obj: Any) -> bool:
    from tfx.dsl.components.base.base_component import BaseComponent

    return inspect.isclass(obj) and issubclass(obj, BaseComponent) and getattr(obj, "SPEC_CLASS", None) is not None


def signature_of(obj: Any, where: str = "") -> ComponentSignature:
    """Reads the signature of a component class.

    Raises:
        NotAComponent: `obj` is a plain function or any other object.
    """
    if not _is_component_class(obj):
        kind = "a plain function" if inspect.isfunction(obj) else f"a {type(obj).__name__}"
        raise NotAComponent(
            f"`{where or obj}` is {kind}, not a TFX component. Expected a function decorated with "
            "`@component` (tfx.dsl.component.experimental.decorators) or a `BaseComponent` subclass. "
            "Decorate it, or point `uses` at the component."
        )
    spec = obj.SPEC_CLASS
    executor = getattr(getattr(obj, "EXECUTOR_SPEC", None), "executor_class", None)
    defaults = getattr(executor, "_ARG_DEFAULTS", {}) or {}
    return ComponentSignature(
        inputs={name: Port(p.type.TYPE_NAME, bool(p.optional)) for name, p in spec.INPUTS.items()},
        outputs={name: p.type.TYPE_NAME for name, p in spec.OUTPUTS.items()},
        parameters={
            name: ParameterInfo(p.type, bool(p.optional), defaults.get(name, _REQUIRED))
            for name, p in spec.PARAMETERS.items()
        },
        doc=inspect.getdoc(getattr(executor, "_FUNCTION", None) or obj) or "",
    )


def _is_proto(tp: Any) -> bool:
    return inspect.isclass(tp) and hasattr(tp, "DESCRIPTOR") and hasattr(tp, "ParseFromString")


def check_value(tp: Any, value: Any) -> str | None:
    """None when `value` (from YAML) fits parameter type `tp`; else what was expected."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Union:
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        return None if any(check_value(a, value) is None for a in options) else _type_text(tp)
    if tp in (Any, None) or tp is typing.Any:
        return None
    if tp is bool:
        return None if isinstance(value, bool) else "true or false"
    if tp is int:
        return None if isinstance(value, int) and not isinstance(value, bool) else "a whole number"
    if tp is float:
        return None if isinstance(value, (int, float)) and not isinstance(value, bool) else "a number"
    if tp in (str, bytes):
        return None if isinstance(value, str) else "a string"
    if origin in (list, list) or tp is list:
        if not isinstance(value, (list, tuple)):
            return "a list"
        inner = args[0] if args else Any
        return next((f"a list of {check_value(inner, v)}" for v in value if check_value(inner, v)), None)
    if origin in (dict, dict) or tp is dict:
        return None if isinstance(value, dict) else "a mapping"
    if _is_proto(tp):
        from google.protobuf import json_format

        if not isinstance(value, dict):
            return f"a mapping for the {tp.__name__} message"
        try:
            json_format.ParseDict(value, tp())
        except json_format.ParseError as err:
            return f"a {tp.__name__} message ({err})"
        return None
    return None if isinstance(value, tp) else _type_text(tp)
