"""Safe YAML reading that remembers the line of every value.

PyYAML's safe composer gives nodes with marks; we turn them into plain Python
values and keep a table `yaml path -> line` so that every later error can name
the line a user has to edit. Duplicate keys are errors (PyYAML keeps the last
one silently).

Reading is bounded, so a hostile or broken file fails in milliseconds with one
message instead of running for minutes: at most `MAX_SPEC_BYTES` of text,
`MAX_DEPTH` levels of nesting and `MAX_VALUES` values once aliases are
expanded (a "billion laughs" alias bomb stops there); text that is not UTF-8
or holds NUL bytes is named with the byte offset of the first bad byte.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import yaml

from pipelines.spec.errors import SpecError, SpecProblem

__all__ = ["YamlSource", "read_yaml", "decode_spec", "join_path", "MAX_SPEC_BYTES", "MAX_DEPTH", "MAX_VALUES"]

MAX_SPEC_BYTES = 1024 * 1024
MAX_DEPTH = 32
MAX_VALUES = 100_000


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


def _limit_problem(file: str, line: int | None, message: str) -> SpecError:
    return SpecError([SpecProblem("", message, line, file)])


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing nesting deeper than `MAX_DEPTH` (its composer recurses)."""

    def __init__(self, stream: str, file: str):
        super().__init__(stream)
        self._file = file
        self._depth = 0

    def compose_node(self, parent, index):
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise _limit_problem(
                    self._file,
                    mark.line + 1,
                    f"the YAML nests deeper than {MAX_DEPTH} levels. Expected a spec at most {MAX_DEPTH} levels "
                    "deep. Flatten the structure or fix the unclosed brackets.",
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_STANDARD_TAGS = ("tag:yaml.org,2002:",)
_UNSAFE_TAG_PREFIX = "tag:yaml.org,2002:python/"


class _Counter:
    """Counts values as aliases are expanded; stops at `MAX_VALUES`."""

    def __init__(self) -> None:
        self.values = 0

    def add(self, node: yaml.Node, file: str) -> None:
        self.values += 1
        if self.values > MAX_VALUES:
            raise _limit_problem(
                file,
                node.start_mark.line + 1,
                f"the spec expands to more than {MAX_VALUES:,} values (aliases `*name` count each time they are "
                "used). Expected a spec of a few hundred values. Remove the repeated aliases or the long lists.",
            )


def _to_python(
    node: yaml.Node, path: str, lines: dict[str, int], file: str, counter: _Counter, line: int | None = None
) -> Any:
    """Converts a composed node; `line` is where its key stands (for sections)."""
    counter.add(node, file)
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
            result[key] = _to_python(value_node, child, lines, file, counter, line=key_line)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_to_python(item, join_path(path, i), lines, file, counter) for i, item in enumerate(node.value)]
    try:
        return _SCALAR_LOADER.construct_object(node, deep=True)
    except yaml.YAMLError as err:
        raise SpecError(
            [SpecProblem(path, f"this value cannot be read: {err}.", node.start_mark.line + 1, file)]
        ) from None


_SCALAR_LOADER = yaml.SafeLoader("")


def decode_spec(raw: bytes, file: str = "<spec>", size: int | None = None) -> str:
    """Decodes the bytes of a spec file, refusing binary, non-UTF-8 and oversized files.

    Args:
        raw: the file's bytes.
        file: the file name, for messages.
        size: the file's size when `raw` is only its start (default: `len(raw)`).

    Returns:
        The text (a leading UTF-8 byte-order mark removed).

    Raises:
        SpecError: the file is larger than `MAX_SPEC_BYTES`, holds a NUL byte, or is not UTF-8.
    """
    size = len(raw) if size is None else size
    if size > MAX_SPEC_BYTES:
        raise _limit_problem(
            file,
            None,
            f"the spec file is {size:,} bytes. Expected at most {MAX_SPEC_BYTES:,} bytes "
            "(a spec names its data, it does not hold it). Move the data to a CSV or TFRecord file under `data.path`.",
        )
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise _limit_problem(
            file,
            raw.count(b"\n", 0, nul) + 1,
            f"this is a binary file (a NUL byte at byte offset {nul}). Expected a YAML text file. "
            "Pass the pipeline's .yaml file.",
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _limit_problem(
            file,
            raw.count(b"\n", 0, err.start) + 1,
            f"the file is not UTF-8 text: byte {raw[err.start : err.start + 1]!r} at byte offset {err.start} "
            f"({err.reason}). Expected UTF-8. Save the file as UTF-8.",
        ) from None
    return text.removeprefix("\ufeff")


def read_yaml(text: str, file: str = "<spec>") -> YamlSource:
    """Parses YAML text safely (no Python objects) into a `YamlSource`.

    Args:
        text: the spec's text.
        file: the file name, for messages.

    Returns:
        The plain data and the line of every YAML path in it.

    Raises:
        SpecError: the text is too large, too deep, expands to too many values, holds control characters,
            is not valid YAML, or a mapping repeats a key.
    """
    if len(text) > MAX_SPEC_BYTES:
        decode_spec(text.encode("utf-8", "replace"), file)
    loader = None
    try:
        loader = _BoundedLoader(text, file)  # checks for unprintable characters
        root = loader.get_single_node()
    except yaml.reader.ReaderError as err:
        line = text.count("\n", 0, err.position) + 1
        raise _limit_problem(
            file,
            line,
            f"character #x{err.character:04x} at offset {err.position} is not allowed in YAML ({err.reason}). "
            "Expected printable text. Remove the character or save the file as plain text.",
        ) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        reason = getattr(err, "problem", None) or str(err)
        raise SpecError(
            [SpecProblem("", f"this is not valid YAML: {reason}. Fix the syntax at this line.", line, file)]
        ) from None
    finally:
        if loader is not None:
            loader.dispose()
    lines: dict[str, int] = {}
    if root is None:
        return YamlSource(data=None, file=file, lines=lines)
    return YamlSource(data=_to_python(root, "", lines, file, _Counter()), file=file, lines=lines)
