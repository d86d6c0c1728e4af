"""The runs and component ids in an ML Metadata store, as both of TFX's launchers record them.

TFX's IR-based orchestration (the local and beam targets, Kubeflow) registers a `pipeline_run` context
named by the run id and one `node` context per component; TFX's older launcher, which the airflow target's
tasks use, registers a `run` context (its `run_id` property holds the id) and keeps the component id in each
execution's `component_id` property.
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["run_contexts", "component_ids"]


def run_contexts(store) -> Iterator[tuple[str, object]]:
    """(run id, context) of every run in the store."""
    for context in store.get_contexts_by_type("pipeline_run"):
        yield context.name, context
    for context in store.get_contexts_by_type("run"):
        run_id = context.properties.get("run_id")
        yield (run_id.string_value if run_id is not None else context.name), context


def component_ids(store) -> dict[int, str]:
    """Execution id -> component id (`ExampleGen`, `Trainer`...)."""
    found = {}
    for context in store.get_contexts_by_type("node"):
        for execution in store.get_executions_by_context(context.id):
            found[execution.id] = context.name.split(".", 1)[-1]
    for context in store.get_contexts_by_type("run"):
        for execution in store.get_executions_by_context(context.id):
            component = execution.properties.get("component_id")
            if component is not None and execution.id not in found:
                found[execution.id] = component.string_value
    return found
