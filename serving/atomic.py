"""Atomic file writes: a reader sees the old file or the new one, never half.

The server polls its config file and the model directory while we write to
them, so every write goes to a temporary file in the same directory, is flushed
and fsync'ed, then renamed over the target with `os.replace` (atomic on POSIX
within one file system), and the directory entry is fsync'ed too.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "atomic_write_bytes", "atomic_write_text"]


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yields a temporary path; on success it is fsync'ed and renamed to `path`.

    Use it when another library writes the file (e.g. a TFRecord writer). The
    temporary name starts with `.tmp-` so the model server's version poller,
    which only looks at numeric directory names, never picks it up.

    Args:
        path: The final file path. Its directory is created if missing.

    Yields:
        The temporary path to write to. It is removed if the block raises.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".tmp-{target.name}.", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
        _fsync_dir(target.parent)
    finally:
        if tmp.exists():
            tmp.unlink()


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Writes `data` to `path` atomically and returns the path."""
    target = Path(path)
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)
    return target


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Writes UTF-8 `text` to `path` atomically and returns the path."""
    return atomic_write_bytes(path, text.encode("utf-8"))
