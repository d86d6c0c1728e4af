"""The runs and component ids in an ML Metadata store, as TFX's two launchers and Kubeflow Pipelines record them.

TFX's IR-based orchestration (the local and beam targets) registers a `pipeline_run` context named by the
run id and one `node` context per component; TFX's older launcher, which the airflow target's tasks use,
registers a `run` context (its `run_id` property holds the id) and keeps the component id in each
execution's `component_id` property. On Kubeflow Pipelines (v2) the cluster's launcher writes the store
(kubeflow/pipelines backend/src/v2/metadata/client.go): a `system.PipelineRun` context named by the KFP
run id, child of a `system.Pipeline` context named by the pipeline; each task's
`system.ContainerExecution` holds the TFX node id in its `task_name` custom property; artifact types are
the schema titles (`tfx.Examples`); an artifact's properties (`span`, `blessed`, ...) become custom
properties, numbers as doubles.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["KFP_RUN_CONTEXT", "KFP_DAG_EXECUTION", "run_contexts", "component_ids", "type_name", "int_property"]

KFP_RUN_CONTEXT = "system.PipelineRun"
KFP_DAG_EXECUTION = "system.DAGExecution"  # a run's (or sub-DAG's) own execution: not a component


def run_contexts(store) -> Iterator[tuple[str, object]]:
    """(run id, context) of every run in the store."""
    for context in store.get_contexts_by_type("pipeline_run"):
        yield context.name, context
    for context in store.get_contexts_by_type("run"):
        run_id = context.properties.get("run_id")
        yield (run_id.string_value if run_id is not None else context.name), context
    for context in store.get_contexts_by_type(KFP_RUN_CONTEXT):
        yield context.name, context


def component_ids(store) -> dict[int, str]:
    """Execution id -> component id (`ExampleGen`, `Trainer`...); a KFP run's DAG executions are left out."""
    found = {}
    for context in store.get_contexts_by_type("node"):
        for execution in store.get_executions_by_context(context.id):
            found[execution.id] = context.name.split(".", 1)[-1]
    for context in store.get_contexts_by_type("run"):
        for execution in store.get_executions_by_context(context.id):
            component = execution.properties.get("component_id")
            if component is not None and execution.id not in found:
                found[execution.id] = component.string_value
    for context in store.get_contexts_by_type(KFP_RUN_CONTEXT):
        for execution in store.get_executions_by_context(context.id):
            task = execution.custom_properties.get("task_name")
            if task is not None and task.string_value and execution.type != KFP_DAG_EXECUTION:
                found[execution.id] = task.string_value
    return found


def type_name(artifact) -> str:
    """The artifact's TFX type name: `Examples` as TFX records it, and as KFP does (`tfx.Examples`)."""
    return artifact.type.removeprefix("tfx.")


def int_property(artifact, key: str) -> int | None:
    """An integer property (`span`, `blessed`) of the artifact: TFX's property or custom property, or KFP's
    double; None when absent."""
    for properties in (artifact.properties, artifact.custom_properties):
        if key in properties:
            value: Any = properties[key]
            kind = value.WhichOneof("value")
            if kind in ("int_value", "double_value"):
                return int(getattr(value, kind))
            if kind == "string_value" and value.string_value.lstrip("-").isdigit():
                return int(value.string_value)
            return None
    return None
