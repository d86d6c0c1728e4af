"""Turns plain YAML data into typed, frozen dataclasses, collecting every problem.

The dataclasses in `pipelines.spec.models` are the schema: their field types
(`int`, `float`, `str`, `bool`, `Literal[...]`, `Optional[...]`, `list[...]`,
`dict[str, ...]` and nested dataclasses) say what each key accepts, and their
defaults say what may be left out. Unknown keys are errors with a
did-you-mean suggestion.

A field whose type is a base class with `Variants` (a tagged union, such as
`model:`, whose `type` picks the model type's options class) is built as the
class its tag names; a key of another variant is named as that variant's.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, Optional, Union

from pipelines.spec.errors import did_you_mean
from pipelines.spec.yaml_source import YamlSource, join_path

__all__ = ["build", "checked_field", "field_problems", "Invalid", "Variants"]


class Invalid(Exception):
    """Internal marker: this value had a problem that is already recorded."""


def checked_field(check: typing.Callable[[Any], Optional[str]], **field_args: Any) -> Any:
    """A dataclass field whose value `check` vets: it returns the problem (starting with the key in
    backticks, saying what was received and the fix) or None. `build` reports it at the key's own
    path and line, beside every other problem of the file; `field_problems` runs the same checks for
    an object built in code."""
    return dataclasses.field(metadata={"check": check}, **field_args)


def field_problems(obj: Any) -> list[str]:
    """The problems `checked_field` checks find in `obj`'s set (non-null) values."""
    problems = []
    for field in dataclasses.fields(obj):
        check = field.metadata.get("check")
        value = getattr(obj, field.name)
        if check is not None and value is not None:
            problem = check(value)
            if problem:
                problems.append(problem)
    return problems


@dataclasses.dataclass(frozen=True)
class Variants:
    """A tagged union: the mapping's `key` (default `default`) names which of `classes` to build."""

    key: str
    default: str
    classes: Mapping[str, type]

    def owners(self, key: str) -> list[str]:
        """The tags whose class has the field `key`."""
        return [tag for tag, cls in self.classes.items() if key in {f.name for f in dataclasses.fields(cls)}]


_TYPE_WORDS = {int: "a whole number", float: "a number", str: "a string", bool: "true or false"}


def _describe(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"`{str(value).lower()}` (true/false)"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"`{value}` ({type(value).__name__})"


def _whole_number_hint(value: Any) -> str:
    """' Write ... as a whole number' for `1e20` (YAML reads it as text) or `1.0e+20`."""
    try:
        number = float(value) if isinstance(value, (str, float)) else None
    except ValueError:
        return ""
    if number is None:
        return ""
    if not number.is_integer() or abs(number) > 1e18:
        return " Write a whole number with digits only, e.g. `1000`, no exponent or decimal point."
    return f" Write it as a whole number: `{int(number)}`."


class _Builder:
    def __init__(self, source: YamlSource, variants: Optional[Mapping[type, Variants]] = None):
        self.source = source
        self.variants = variants or {}
        self.problems = []

    def fail(self, path: str, message: str) -> typing.NoReturn:
        self.problems.append(self.source.problem(path, message))
        raise Invalid()

    def value(self, tp: Any, value: Any, path: str) -> Any:
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin in (Union, types.UnionType):
            if value is None and type(None) in args:
                return None
            inner = [a for a in args if a is not type(None)]
            if len(inner) == 1:
                return self.value(inner[0], value, path)
            for option in inner:
                try:
                    return _Builder(self.source, self.variants).value(option, value, path)
                except Invalid:
                    continue
            words = " or ".join(_TYPE_WORDS.get(a, getattr(a, "__name__", str(a))) for a in inner)
            self.fail(path, f"expected {words}. Received: {_describe(value)}.")
        if origin is Literal:
            if value not in args:
                choices = ", ".join(f"`{a}`" for a in args)
                hint = did_you_mean(str(value), [str(a) for a in args])
                self.fail(path, f"expected one of {choices}. Received: {_describe(value)}.{hint}")
            return value
        if origin is list:
            if not isinstance(value, list):
                hint = f" Write it as a list: `[{value}]`." if isinstance(value, (str, int, float)) else ""
                self.fail(path, f"expected a list. Received: {_describe(value)}.{hint}")
            before = len(self.problems)
            items = tuple(self.collect(args[0], item, join_path(path, i)) for i, item in enumerate(value))
            if len(self.problems) > before:  # every item's problem is recorded; the list is not usable
                raise Invalid()
            return items
        if origin is dict:
            if not isinstance(value, dict):
                self.fail(path, f"expected a mapping. Received: {_describe(value)}.")
            before = len(self.problems)
            entries = {str(k): self.collect(args[1], v, join_path(path, k)) for k, v in value.items()}
            if len(self.problems) > before:
                raise Invalid()
            return entries
        if dataclasses.is_dataclass(tp):
            return self.dataclass(tp, value, path)
        if tp is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if tp is Any:
            return value
        if not isinstance(value, tp) or (tp is int and isinstance(value, bool)):
            hint = _whole_number_hint(value) if tp is int else ""
            self.fail(path, f"expected {_TYPE_WORDS.get(tp, tp.__name__)}. Received: {_describe(value)}.{hint}")
        return value

    def collect(self, tp: Any, value: Any, path: str) -> Any:
        """Like `value`, but records a problem and goes on instead of stopping."""
        try:
            return self.value(tp, value, path)
        except Invalid:
            return None

    def dataclass(self, cls: type, value: Any, path: str) -> Any:
        if value is None:
            value = {}
        if not isinstance(value, dict):
            self.fail(path, f"expected a mapping of settings. Received: {_describe(value)}.")
        variants = self.variants.get(cls)
        if variants is not None:
            tag = self.value(
                Literal[tuple(variants.classes)],
                value.get(variants.key, variants.default),
                join_path(path, variants.key),
            )
            cls = variants.classes[tag]
        hints = typing.get_type_hints(cls)
        fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
        kwargs: dict[str, Any] = {}
        broken = False
        for key in value:
            if key not in fields:
                self.problems.append(self.source.problem(join_path(path, key), self._unknown(key, fields, variants)))
                broken = True
        for name, field in fields.items():
            child = join_path(path, name)
            if name not in value:
                missing = field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
                if missing:
                    self.problems.append(
                        self.source.problem(child, f"`{name}` is required. Add it under `{path or 'the top level'}`.")
                    )
                    broken = True
                continue
            try:
                kwargs[name] = self.value(hints[name], value[name], child)
            except Invalid:
                broken = True
                continue
            check = field.metadata.get("check")
            problem = check(kwargs[name]) if check is not None and kwargs[name] is not None else None
            if problem:
                self.problems.append(self.source.problem(child, problem))
                broken = True
        if broken:
            raise Invalid()
        try:
            return cls(**kwargs)
        except ValueError as err:
            self.fail(path, str(err))

    @staticmethod
    def _unknown(key: Any, fields: Mapping[str, Any], variants: Optional[Variants]) -> str:
        known = ", ".join(f"`{k}`" for k in fields)
        owners = variants.owners(str(key)) if variants is not None else []
        if owners:
            tags = " or ".join(f"`{variants.key}: {tag}`" for tag in owners)
            return (
                f"`{key}` is an option of {tags}, not of this `{variants.key}`. Expected one of: {known}. "
                f"Remove it, or set {tags}."
            )
        return f"unknown key `{key}`.{did_you_mean(str(key), fields)} Expected one of: {known}. Remove or rename it."


def build(cls: type, source: YamlSource, variants: Optional[Mapping[type, Variants]] = None) -> tuple[Any, list]:
    """Builds `cls` from `source.data`. Returns (object or None, problems).

    `variants` maps a base class to its tagged union (`Variants`): a field of that type is built as the
    class its tag names.
    """
    builder = _Builder(source, variants)
    result = builder.collect(cls, source.data, "")
    return result, builder.problems
