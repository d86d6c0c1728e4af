"""A stand-in for a Kubeflow cluster's ML Metadata service, and runs recorded in it the way KFP records them.

No Kubernetes here, so no `metadata-grpc-service`. `MetadataService` serves ml_metadata's own gRPC service
(`MetadataStoreService`, its generated servicer) on 127.0.0.1, each RPC answered by a real ML Metadata
store (SQLite) through its public Python API: the client that `runs --metadata` uses is ml_metadata's
own, over real gRPC. Only the read RPCs that reader calls are served; any other answers UNIMPLEMENTED.

`record_kfp_run` writes one run of a compiled package as Kubeflow Pipelines' v2 launcher does
(kubeflow/pipelines backend/src/v2/metadata/client.go: `GetPipeline`, `CreateExecution`, `RecordArtifact`,
`PublishExecution`; converter.go: `toMLMDArtifact`): a `system.Pipeline` context named by the pipeline, a
`system.PipelineRun` child context named by the run id, the run's `system.DAGExecution`, one
`system.ContainerExecution` per task with `task_name`/`display_name`, artifacts typed by their schema
title, their metadata (TFX's own `kubeflow_v2_entrypoint_utils.to_runtime_artifact` of a TFX artifact)
stored as custom properties with numbers as doubles, and INPUT/OUTPUT events keyed by the artifact's name.
"""

from __future__ import annotations

from concurrent import futures
from typing import Any

import grpc
from ml_metadata import errors
from ml_metadata.metadata_store import metadata_store
from ml_metadata.proto import metadata_store_pb2 as mlmd
from ml_metadata.proto import metadata_store_service_pb2 as service
from ml_metadata.proto import metadata_store_service_pb2_grpc as service_grpc

_STATUS = {code.value[0]: code for code in grpc.StatusCode}


def sqlite_store(path: str):
    config = mlmd.ConnectionConfig()
    config.sqlite.filename_uri = path
    config.sqlite.connection_mode = mlmd.SqliteMetadataSourceConfig.READWRITE_OPENCREATE
    return metadata_store.MetadataStore(config)


def _context_by_name(store, request) -> dict:
    found = store.get_context_by_type_and_name(request.type_name, request.context_name)
    return {"context": found} if found else {}


# RPC -> the response's fields from the store's public API (the response class is `<RPC>Response`).
_READS = {
    "GetContextByTypeAndName": _context_by_name,
    "GetContextsByType": lambda store, request: {"contexts": store.get_contexts_by_type(request.type_name)},
    "GetChildrenContextsByContext": lambda store, request: {
        "contexts": store.get_children_contexts_by_context(request.context_id)
    },
    "GetExecutionsByContext": lambda store, request: {
        "executions": store.get_executions_by_context(request.context_id)
    },
    "GetEventsByExecutionIDs": lambda store, request: {
        "events": store.get_events_by_execution_ids(list(request.execution_ids))
    },
    "GetArtifactsByID": lambda store, request: {"artifacts": store.get_artifacts_by_id(list(request.artifact_ids))},
    "GetArtifactsByType": lambda store, request: {"artifacts": store.get_artifacts_by_type(request.type_name)},
}


class _Servicer(service_grpc.MetadataStoreServiceServicer):
    """The read RPCs of ML Metadata's gRPC service (`_READS`), answered by a SQLite store's public API."""

    def __init__(self, path: str) -> None:
        self._path = path
        self.calls: list[str] = []


def _rpc(name: str, read):
    response = getattr(service, f"{name}Response")

    def method(self: _Servicer, request, context):
        self.calls.append(name)
        try:
            return response(**read(sqlite_store(self._path), request))
        except errors.StatusError as error:
            context.abort(_STATUS.get(error.error_code, grpc.StatusCode.UNKNOWN), str(error))

    return method


for _name, _read in _READS.items():
    setattr(_Servicer, _name, _rpc(_name, _read))


class MetadataService:
    """ML Metadata's gRPC service on 127.0.0.1:`port`, over the SQLite store at `path`."""

    def __init__(self, path: str) -> None:
        sqlite_store(path)  # creates the schema
        self.servicer = _Servicer(path)
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        service_grpc.add_MetadataStoreServiceServicer_to_server(self.servicer, self._server)
        self.port = self._server.add_insecure_port("127.0.0.1:0")  # the port gRPC bound

    def __enter__(self) -> MetadataService:
        self._server.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.stop(grace=None)


# --- runs written as KFP's v2 launcher writes them -------------------------------------------------------


def _mlmd_value(value: Any) -> mlmd.Value:
    """converter.go `StructValueToMLMDValue`: string as string, number as double, bool as int, list and
    struct wrapped in a struct under `list` / `struct`."""
    if isinstance(value, bool):
        return mlmd.Value(int_value=int(value))
    if isinstance(value, (int, float)):
        return mlmd.Value(double_value=float(value))
    if isinstance(value, str):
        return mlmd.Value(string_value=value)
    wrapped = mlmd.Value()
    wrapped.struct_value.update({"list" if isinstance(value, list) else "struct": value})
    return wrapped


def _type_id(store, name: str, kind: str) -> int:
    put = {
        "artifact": lambda: store.put_artifact_type(mlmd.ArtifactType(name=name)),
        "execution": lambda: store.put_execution_type(mlmd.ExecutionType(name=name)),
        "context": lambda: store.put_context_type(mlmd.ContextType(name=name)),
    }
    return put[kind]()


def _context(store, type_name: str, name: str, properties: dict[str, str] | None = None):
    found = store.get_context_by_type_and_name(type_name, name)
    if found:
        return found
    context = mlmd.Context(type_id=_type_id(store, type_name, "context"), name=name)
    for key, value in (properties or {}).items():
        context.custom_properties[key].string_value = value
    [context.id] = store.put_contexts([context])
    return context


def _kfp_artifact(store, schema_title: str, output_name: str, tfx_artifact) -> mlmd.Artifact:
    """`RecordArtifact` of TFX's runtime artifact for `tfx_artifact` (its properties as metadata)."""
    from google.protobuf import json_format
    from tfx.orchestration.kubeflow.v2.container import kubeflow_v2_entrypoint_utils

    runtime = kubeflow_v2_entrypoint_utils.to_runtime_artifact(tfx_artifact, {})
    artifact = mlmd.Artifact(
        type_id=_type_id(store, schema_title, "artifact"), uri=runtime.uri, state=mlmd.Artifact.LIVE
    )
    for key, value in json_format.MessageToDict(runtime.metadata).items():
        artifact.custom_properties[key].CopyFrom(_mlmd_value(value))
    artifact.custom_properties["display_name"].string_value = output_name
    artifact.custom_properties["store_session_info"].string_value = "{}"
    return artifact


def _event(kind, name: str, artifact_id: int | None = None) -> mlmd.Event:
    event = mlmd.Event(type=kind)
    if artifact_id is not None:
        event.artifact_id = artifact_id
    event.path.steps.add().key = name
    return event


def _schema_title(artifact_type: dict) -> str:
    """client.go `SchemaToArtifactType`: the `title` of the type's schema (TFX writes an `instanceSchema`)."""
    import yaml

    return artifact_type.get("schemaTitle") or yaml.safe_load(artifact_type["instanceSchema"])["title"]


def _task_order(tasks: dict) -> list[str]:
    order: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        artifacts = tasks[name].get("inputs", {}).get("artifacts", {}).values()
        producers = [spec["taskOutputArtifact"]["producerTask"] for spec in artifacts if "taskOutputArtifact" in spec]
        for dependency in [*tasks[name].get("dependentTasks", []), *producers]:
            visit(dependency)
        order.append(name)

    for name in sorted(tasks):
        visit(name)
    return order


def record_kfp_run(store, package: dict, run_id: str, artifacts: dict[str, Any], cached: dict[str, dict] | None = None):
    """Records one run of the compiled KFP `package` (its pipeline spec document) as KFP's launcher does.

    Args:
        store: the SQLite store behind the service.
        package: the pipeline spec (`pipelineInfo`, `root.dag.tasks`, `components`).
        run_id: the KFP run id (the run context's name).
        artifacts: `"Task.output"` -> the TFX artifact that output holds (uri and properties); outputs not
            named get an empty artifact of their schema title.
        cached: `task` -> that task's outputs (`{"output": mlmd artifact}`) from an earlier run: the task is
            CACHED and its outputs are those artifacts, as a KFP cache hit publishes them.

    Returns:
        `{"Task": {"output": mlmd.Artifact}}` of this run, for later cache hits.
    """
    from tfx.types import artifact as tfx_artifact

    cached = cached or {}
    pipeline = package["pipelineInfo"]["name"]
    pipeline_context = _context(store, "system.Pipeline", pipeline)
    run_context = _context(
        store,
        "system.PipelineRun",
        run_id,
        {"namespace": "kubeflow", "pipeline_root": f"gs://bucket/{pipeline}/{run_id}"},
    )
    store.put_parent_contexts([mlmd.ParentContext(child_id=run_context.id, parent_id=pipeline_context.id)])
    contexts = [pipeline_context, run_context]
    dag = mlmd.Execution(
        type_id=_type_id(store, "system.DAGExecution", "execution"), last_known_state=mlmd.Execution.COMPLETE
    )
    dag.custom_properties["display_name"].string_value = ""
    dag.custom_properties["task_name"].string_value = ""
    [dag_id, _, _] = store.put_execution(dag, [], contexts)
    tasks = package["root"]["dag"]["tasks"]
    produced: dict[str, dict[str, mlmd.Artifact]] = {}
    for name in _task_order(tasks):
        task = tasks[name]
        component = package["components"][task["componentRef"]["name"]]
        execution = mlmd.Execution(type_id=_type_id(store, "system.ContainerExecution", "execution"))
        execution.last_known_state = mlmd.Execution.CACHED if name in cached else mlmd.Execution.COMPLETE
        for key, value in {"display_name": name, "task_name": name, "pod_name": f"{run_id}-{name.lower()}"}.items():
            execution.custom_properties[key].string_value = value
        execution.custom_properties["parent_dag_id"].int_value = dag_id
        pairs = []
        for input_name, spec in task.get("inputs", {}).get("artifacts", {}).items():
            source = spec.get("taskOutputArtifact", {})
            upstream = produced.get(source.get("producerTask"), {}).get(source.get("outputArtifactKey"))
            if upstream is not None:
                pairs.append((upstream, _event(mlmd.Event.INPUT, input_name, upstream.id)))
        outputs = component.get("outputDefinitions", {}).get("artifacts", {})
        produced[name] = {}
        for output_name, spec in outputs.items():
            if name in cached:
                artifact = cached[name][output_name]
                pairs.append((artifact, _event(mlmd.Event.OUTPUT, output_name, artifact.id)))
                produced[name][output_name] = artifact
                continue
            schema = _schema_title(spec["artifactType"])
            given = artifacts.get(f"{name}.{output_name}")
            if given is None:
                given = tfx_artifact.Artifact(mlmd.ArtifactType(name=schema.removeprefix("tfx.")))
                given.uri = f"gs://bucket/{pipeline}/{run_id}/{name}/{output_name}"
            artifact = _kfp_artifact(store, schema, output_name, given)
            [artifact.id] = store.put_artifacts([artifact])
            pairs.append((artifact, _event(mlmd.Event.OUTPUT, output_name, artifact.id)))
            produced[name][output_name] = artifact
        store.put_execution(execution, pairs, contexts)
    return produced
