"""Text-format protobuf config files, read and written atomically, and `ConfigError`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypeVar

from google.protobuf import message as _message
from google.protobuf import text_format

from serving.atomic import atomic_write_text
from serving.errors import message

__all__ = ["ConfigError", "read_text_proto", "write_text_proto"]

_M = TypeVar("_M", bound=_message.Message)


class ConfigError(ValueError):
    """A config value or file is invalid."""


def write_text_proto(path: str | os.PathLike, proto: _message.Message) -> Path:
    """Writes `proto` as a text proto, atomically (temp file, fsync, rename)."""
    return atomic_write_text(path, text_format.MessageToString(proto))


def read_text_proto(path: str | os.PathLike, proto_type: type[_M]) -> _M:
    """Parses a text-proto file into a new `proto_type` message.

    Raises:
        ConfigError: The file is missing or is not a valid `proto_type`.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            message(
                f"Config file {path} does not exist",
                expected=f"a text-format {proto_type.DESCRIPTOR.name} file",
                received="no file",
                fix="Create it with `python -m serving up` or write_server_files().",
            )
        ) from None
    try:
        return text_format.Parse(text, proto_type())
    except text_format.ParseError as err:
        raise ConfigError(
            message(
                f"Invalid protobuf file: '{path}'",
                expected=f"a text-format {proto_type.DESCRIPTOR.name}",
                received=f"a parse error: {err}",
                fix="Fix the line named above.",
            )
        ) from None
