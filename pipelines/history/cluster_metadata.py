"""`runs SPEC --metadata HOST:PORT`: the runs of a pipeline on Kubeflow Pipelines, from the cluster's ML Metadata.

Kubeflow Pipelines keeps every run's executions and artifacts in the cluster's ML Metadata service
(`metadata-grpc-service` in the `kubeflow` namespace), which `kubectl port-forward -n kubeflow
svc/metadata-grpc-service 8080:8080` makes reachable as `localhost:8080`. ml_metadata's own gRPC client
reads it; `PipelineView` narrows the store, which holds every pipeline of the cluster, to the runs of one
pipeline (the `system.PipelineRun` children of its `system.Pipeline` context), so the readers of a local
root (`runs_in_store`, `span_history`) read it unchanged. Blessing and pushed version come from the
artifacts' properties; metrics from `verdict.json` beside the blessing when that folder is readable here
(an object-store URI is not read).

Example:
    >>> store = open_cluster_metadata("localhost:8080", "chicago-taxi")
    >>> [run.ingested_spans for run in cluster_runs(store, "chicago-taxi")]
    [[5], [4]]
"""

from __future__ import annotations

import re
from typing import Any

from pipelines.history.mlmd_runs import RootError, RunInfo, runs_in_store
from pipelines.report.mlmd_contexts import KFP_RUN_CONTEXT
from pipelines.report.span_history import read_verdict

__all__ = ["KFP_PIPELINE_CONTEXT", "PipelineView", "open_cluster_metadata", "cluster_runs", "cluster_summary"]

KFP_PIPELINE_CONTEXT = "system.Pipeline"
TIMEOUT_SECONDS = 20
_ADDRESS = re.compile(r"^(?:grpc://)?(?P<host>\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(?P<port>[0-9]{1,5})$")
_PORT_FORWARD = "kubectl port-forward -n kubeflow svc/metadata-grpc-service 8080:8080"


class PipelineView:
    """A read view of a cluster's ML Metadata in which the KFP runs are those of one pipeline context."""

    def __init__(self, store, pipeline_context, address: str) -> None:
        self._store = store
        self._pipeline = pipeline_context
        self.address = address

    def get_contexts_by_type(self, type_name: str) -> list:
        if type_name == KFP_RUN_CONTEXT:
            children = self._store.get_children_contexts_by_context(self._pipeline.id)
            return [context for context in children if context.type == KFP_RUN_CONTEXT]
        return self._store.get_contexts_by_type(type_name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def _host_port(address: str) -> tuple[str, int]:
    found = _ADDRESS.match(address.strip())
    if not found or not 0 < int(found["port"]) < 65536:
        raise RootError(
            f"--metadata {address!r}: expected HOST:PORT of the cluster's ML Metadata gRPC service, e.g. "
            f"localhost:8080 after `{_PORT_FORWARD}`. Received: {address!r}. Pass it as HOST:PORT."
        )
    return found["host"].strip("[]"), int(found["port"])


def open_cluster_metadata(address: str, pipeline: str) -> PipelineView:
    """The cluster's ML Metadata at `address` (HOST:PORT), narrowed to the runs of `pipeline`.

    Raises:
        RootError: the address is malformed, the service does not answer, or it holds no pipeline `pipeline`
            (the message names the pipelines it holds).
    """
    from ml_metadata import errors
    from ml_metadata.metadata_store import metadata_store
    from ml_metadata.proto import metadata_store_pb2

    host, port = _host_port(address)
    config = metadata_store_pb2.MetadataStoreClientConfig(host=host, port=port, client_timeout_sec=TIMEOUT_SECONDS)
    store = metadata_store.MetadataStore(config)
    try:
        context = store.get_context_by_type_and_name(KFP_PIPELINE_CONTEXT, pipeline)
        known = [] if context else sorted(c.name for c in store.get_contexts_by_type(KFP_PIPELINE_CONTEXT))
    except errors.StatusError as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise RootError(
            f"the ML Metadata service at {host}:{port} did not answer: {reason}. Expected the cluster's "
            f"metadata-grpc-service, reachable e.g. with `{_PORT_FORWARD}` and `--metadata localhost:8080`. "
            f"Received: {type(error).__name__}. Check the port-forward and the address."
        ) from None
    if context is None:
        raise RootError(
            f"the ML Metadata at {host}:{port} holds no runs of pipeline {pipeline!r}. Expected a pipeline that "
            f"Kubeflow Pipelines ran under that name (the spec's `pipeline.name` as the kubeflow target compiles "
            f"it). Received pipelines: {', '.join(known) or 'none'}. Submit the spec first "
            "(`python -m pipelines submit SPEC`), or check the address."
        )
    return PipelineView(store, context, f"{host}:{port}")


def cluster_summary(run: RunInfo) -> dict[str, Any]:
    """Blessing, metrics (when the verdict is readable here) and pushed version of a cluster run."""
    summary: dict[str, Any] = {}
    evaluator = run.component("Evaluator")
    for artifact in evaluator.outputs if evaluator else []:
        if artifact.type == "ModelBlessing":
            blessed = artifact.properties.get("blessed")
            summary["blessed"] = None if blessed is None else int(blessed) == 1
            verdict = read_verdict(artifact.uri) or {}
            if verdict.get("metrics"):
                summary["metrics"] = dict(verdict["metrics"])
    pusher = run.component("Pusher")
    for artifact in pusher.outputs if pusher else []:
        if artifact.properties.get("pushed"):
            summary["pushed_path"] = artifact.properties.get("pushed_destination")
    return summary


def cluster_runs(store: PipelineView, pipeline: str) -> list[RunInfo]:
    """The pipeline's runs in the cluster's ML Metadata, newest first, with `cluster_summary` filled in."""
    runs = runs_in_store(store, pipeline=pipeline)
    for run in runs:
        run.summary = cluster_summary(run)
        run.metadata = store.address
    return runs
