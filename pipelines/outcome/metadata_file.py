"""Opens a pipeline root's ML Metadata (`<root>/metadata.sqlite`), naming the file and the fix when it is broken.

ML Metadata reports a file that SQLite cannot read (overwritten, truncated,
not a database) as `RuntimeError: Error when executing query: file is not a
database query: CREATE TABLE ...`: neither the file nor what to do. Every
command that opens a root's ML Metadata (`run`, `runs`, `ui`, the recovery
at a run's start) opens it here, so that error is one `MetadataUnreadable`
line: the file, SQLite's reason, and the fix (move it aside; the artifacts
stay).
"""

from __future__ import annotations

import os

__all__ = ["MetadataUnreadable", "open_metadata"]


class MetadataUnreadable(RuntimeError):
    """`<root>/metadata.sqlite` exists but is not a readable ML Metadata store."""


def _sqlite_reason(error: BaseException) -> str:
    """SQLite's reason in ML Metadata's message: `file is not a database` of `... query: file is not a database query: ...`."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    text = text.removeprefix("Error when executing query:").strip()
    return text.split(" query:", 1)[0].strip() or type(error).__name__


def unreadable_message(path: str, reason: str) -> str:
    """The one line for a broken `metadata.sqlite` at `path`: what is wrong, expected, received, the fix."""
    root = os.path.dirname(os.path.abspath(path))
    try:
        size = f"a file of {os.path.getsize(path)} bytes"
    except OSError:
        size = "a file that cannot be read"
    return (
        f"{path}: the pipeline root's ML Metadata cannot be read: {reason}. Expected the SQLite file that TFX "
        f"writes (run history, lineage, TFX's cache). Received: {size}, overwritten, truncated or not a database. "
        f"Move it aside to start a new history (`mv {path} {path}.broken`); the artifacts under "
        f"{os.path.join(root, 'artifacts')} stay, but `runs` and TFX's cache start afresh."
    )


def open_metadata(path: str, readonly: bool = True):
    """An ML Metadata store on the SQLite file `path`.

    Args:
        path: `<root>/metadata.sqlite`; it must exist when `readonly`.
        readonly: open it read-only (`runs`, `ui`); else read-write, creating it when missing.

    Returns:
        An `ml_metadata.MetadataStore`.

    Raises:
        MetadataUnreadable: the file is not an ML Metadata store SQLite can read.
    """
    from ml_metadata import metadata_store
    from ml_metadata.proto import metadata_store_pb2

    modes = metadata_store_pb2.SqliteMetadataSourceConfig
    config = metadata_store_pb2.ConnectionConfig()
    config.sqlite.filename_uri = path
    config.sqlite.connection_mode = modes.READONLY if readonly else modes.READWRITE_OPENCREATE
    try:
        return metadata_store.MetadataStore(config)
    except RuntimeError as error:  # ML Metadata's error for every SQLite failure
        empty = readonly and os.path.isfile(path) and os.path.getsize(path) == 0  # read-only cannot add the tables
        reason = "the file is empty" if empty else _sqlite_reason(error)
        raise MetadataUnreadable(unreadable_message(path, reason)) from error
