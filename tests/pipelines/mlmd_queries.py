"""Reads ML Metadata (SQLite) the way the tests need: executions by node."""

from __future__ import annotations

from ml_metadata import metadata_store
from ml_metadata.proto import metadata_store_pb2

STATE_NAMES = {
    metadata_store_pb2.Execution.COMPLETE: "COMPLETE",
    metadata_store_pb2.Execution.CACHED: "CACHED",
    metadata_store_pb2.Execution.FAILED: "FAILED",
    metadata_store_pb2.Execution.RUNNING: "RUNNING",
    metadata_store_pb2.Execution.NEW: "NEW",
}


def store_for(path: str) -> metadata_store.MetadataStore:
    config = metadata_store_pb2.ConnectionConfig()
    config.sqlite.filename_uri = path
    config.sqlite.connection_mode = metadata_store_pb2.SqliteMetadataSourceConfig.READONLY
    return metadata_store.MetadataStore(config)


def executions_after(path: str, after_id: int) -> dict[str, str]:
    """node id -> state name, for executions with id > after_id."""
    store = store_for(path)
    result = {}
    for execution in store.get_executions():
        if execution.id <= after_id:
            continue
        for context in store.get_contexts_by_execution(execution.id):
            if context.type == "node":
                result[context.name.split(".", 1)[1]] = STATE_NAMES.get(execution.last_known_state, "?")
    return result


def max_execution_id(path: str) -> int:
    return max((e.id for e in store_for(path).get_executions()), default=0)


def nodes_between(path: str, after_id: int, until_id: int) -> set[str]:
    """The node ids of the executions in (after_id, until_id]."""
    store = store_for(path)
    return {
        context.name.split(".", 1)[1]
        for execution in store.get_executions()
        if after_id < execution.id <= until_id
        for context in store.get_contexts_by_execution(execution.id)
        if context.type == "node"
    }
