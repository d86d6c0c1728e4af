"""Safe YAML reading that remembers the line of every value.

PyYAML's safe composer gives nodes with marks; we turn them into plain Python
values and keep a table `yaml path -> line` so that every later error can name
the line a user has to edit. Duplicate keys are errors (PyYAML keeps the last
one silently).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import yaml

from pipelines.spec.errors import SpecError, SpecProblem

__all__ = ["YamlSource", "read_yaml", "join_path"]


def join_path(parent: str, key: str | int) -> str:
    """Joins YAML path parts: `training` + `batch_size` -> `training.batch_size`."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else str(key)


@dataclasses.dataclass
class YamlSource:
    """Plain data read from a YAML file plus the line of each path in it."""

    data: Any
    file: str
    lines: dict[str, int]

    def line_of(self, path: str) -> int | None:
        """Returns the line of `path`, or of its nearest parent that has one."""
        while True:
            if path in self.lines:
                return self.lines[path]
            if not path:
                return None
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""

    def problem(self, path: str, message: str) -> SpecProblem:
        return SpecProblem(path=path, message=message, line=self.line_of(path), file=self.file)


_STANDARD_TAGS = ("tag:yaml.org,2002:",)
_UNSAFE_TAG_PREFIX = "tag:yaml.org,2002:python/"


def _to_python(node: yaml.Node, path: str, lines: dict[str, int], file: str, line: int | None = None) -> Any:
    """Converts a composed node; `line` is where its key stands (for sections)."""
    lines[path] = line or node.start_mark.line + 1
    if not node.tag.startswith(_STANDARD_TAGS) or node.tag.startswith(_UNSAFE_TAG_PREFIX):
        raise SpecError(
            [
                SpecProblem(
                    path,
                    f"tag `{node.tag}` is not allowed: a spec holds plain YAML values only. Remove the tag.",
                    node.start_mark.line + 1,
                    file,
                )
            ]
        )
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key_line = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):
                raise SpecError([SpecProblem(path, "a mapping key must be a plain word.", key_line, file)])
            key = yaml.SafeLoader.construct_scalar(_SCALAR_LOADER, key_node)
            child = join_path(path, key)
            if key in result:
                raise SpecError(
                    [
                        SpecProblem(
                            child,
                            f"duplicate key `{key}` (first given on line {lines[child]}). Keep only one of them.",
                            key_line,
                            file,
                        )
                    ]
                )
            result[key] = _to_python(value_node, child, lines, file, line=key_line)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_to_python(item, join_path(path, i), lines, file) for i, item in enumerate(node.value)]
    try:
        return _SCALAR_LOADER.construct_object(node, deep=True)
    except yaml.YAMLError as err:
        raise SpecError(
            [SpecProblem(path, f"this value cannot be read: {err}.", node.start_mark.line + 1, file)]
        ) from None


_SCALAR_LOADER = yaml.SafeLoader("")


def read_yaml(text: str, file: str = "<spec>") -> YamlSource:
    """Parses YAML text safely (no Python objects) into a `YamlSource`.

    Raises:
        SpecError: the text is not valid YAML, or a mapping repeats a key.
    """
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        reason = getattr(err, "problem", None) or str(err)
        raise SpecError(
            [SpecProblem("", f"this is not valid YAML: {reason}. Fix the syntax at this line.", line, file)]
        ) from None
    lines: dict[str, int] = {}
    if root is None:
        return YamlSource(data=None, file=file, lines=lines)
    return YamlSource(data=_to_python(root, "", lines, file), file=file, lines=lines)
