"""What ML Metadata says each component did in the latest run: COMPLETE, CACHED, FAILED, ...

Both context layouts are read: TFX's IR-based runners (local, beam) and the legacy
launcher that TFX's Airflow runner uses.
"""

from __future__ import annotations

from pipelines.outcome.metadata_file import open_metadata

__all__ = ["states_after"]


def states_after(metadata_path: str, after_id: int) -> dict[str, str]:
    """Node id -> state name of the executions with id above `after_id`, in execution order."""
    import os

    from ml_metadata.proto import metadata_store_pb2

    if not os.path.exists(metadata_path):
        return {}
    store = open_metadata(metadata_path, readonly=True)
    names = metadata_store_pb2.Execution.State.Name
    result = {}
    for execution in sorted(store.get_executions(), key=lambda e: e.id):
        if execution.id <= after_id:
            continue
        for context in store.get_contexts_by_execution(execution.id):
            if context.type == "node":  # IR-based runners: `<pipeline>.<node>`
                result[context.name.split(".", 1)[1]] = names(execution.last_known_state)
            elif context.type == "component_run":  # Airflow's legacy launcher: `<pipeline>.<run>.<node>`
                result[context.name.rsplit(".", 1)[1]] = names(execution.last_known_state)
    return result
