"""Multi-node training on Kubernetes: a Kubeflow training-operator TFJob.

`tfjob_manifest` builds the TFJob (one Chief and `workers - 1` Workers, each
with the component's CPU, memory and GPUs) from the Kubernetes client's
object model; the operator sets TF_CONFIG in every replica.
`TFJobLauncher` submits it, streams its status (a Kubernetes watch) and
waits until it succeeds or fails.

Example:
    >>> manifest = tfjob_manifest("taxi-train", "kubeflow", "gcr.io/me/yaml-tfx:0.1.0",
    ...                           ["python", "-m", "tfx.scripts.run_executor"], ComponentRunSpec(workers=3))
    >>> manifest["spec"]["tfReplicaSpecs"]["Worker"]["replicas"]
    2
"""

from __future__ import annotations

import copy
import logging
import os
import time
from collections.abc import Callable

from pipelines.spec.orchestrator import ComponentRunSpec
from pipelines.targets.gpu_nodes import gpu_placement
from pipelines.targets.resources import GPU_RESOURCE

__all__ = ["tfjob_manifest", "TFJobLauncher", "TFJobFailed", "GROUP", "VERSION", "PLURAL"]

GROUP, VERSION, PLURAL = "kubeflow.org", "v1", "tfjobs"
_FINISHED = ("Succeeded", "Failed")


class TFJobFailed(RuntimeError):
    """The TFJob ended in `Failed` (or vanished); the message has the operator's reason."""


def _resources(settings: ComponentRunSpec):
    from kubernetes import client

    amounts: dict[str, str] = {}
    if settings.cpu is not None:
        amounts["cpu"] = f"{settings.cpu:g}"
    if settings.memory is not None:
        amounts["memory"] = settings.memory
    limits = dict(amounts)
    if settings.gpus:
        limits[GPU_RESOURCE] = str(settings.gpus)
    return client.V1ResourceRequirements(requests=amounts or None, limits=limits or None)


def _pod_template(
    image: str, command: list[str], settings: ComponentRunSpec, service_account: str | None, platform: str
):
    from kubernetes import client

    container = client.V1Container(name="tensorflow", image=image, command=command, resources=_resources(settings))
    placement = gpu_placement(platform, settings.accelerator) if settings.gpus else gpu_placement("none", None)
    affinity = placement.kubernetes_affinity()
    return client.V1PodTemplateSpec(
        spec=client.V1PodSpec(
            containers=[container],
            node_selector=placement.node_selector or None,
            tolerations=[client.V1Toleration(**t) for t in placement.tolerations] or None,
            affinity=_as_model(affinity, "V1Affinity") if affinity else None,
            service_account_name=service_account,
        )
    )


def _as_model(data: dict, model: str):
    """A kubernetes client model from API-shaped JSON (camelCase), as the client reads responses."""
    import json

    from kubernetes import client

    class _Response:
        def __init__(self, payload: dict):
            self.data = json.dumps(payload)

    return client.ApiClient().deserialize(_Response(data), model)


def tfjob_manifest(
    name: str,
    namespace: str,
    image: str,
    command: list[str],
    settings: ComponentRunSpec,
    service_account: str | None = None,
    platform: str = "none",
) -> dict:
    """The TFJob as a plain dict (what `kubectl apply -f` takes, once dumped to YAML).

    `settings.retries` becomes `runPolicy.backoffLimit` and
    `settings.timeout_seconds` `runPolicy.activeDeadlineSeconds`. `platform`
    (`gke`, `nvidia-gfd`, `none`) decides the GPU node labels and tolerations
    (`pipelines.targets.gpu_nodes`).
    """
    from kubernetes import client

    template = client.ApiClient().sanitize_for_serialization(
        _pod_template(image, command, settings, service_account, platform)
    )
    replicas = {"Chief": 1, "Worker": settings.workers - 1}
    run_policy: dict = {"cleanPodPolicy": "Running", "backoffLimit": settings.retries}
    if settings.timeout_seconds:
        run_policy["activeDeadlineSeconds"] = settings.timeout_seconds
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app.kubernetes.io/created-by": "yaml-tfx"}},
        "spec": {
            "runPolicy": run_policy,
            "tfReplicaSpecs": {
                role: {"replicas": count, "restartPolicy": "OnFailure", "template": copy.deepcopy(template)}
                for role, count in replicas.items()
                if count
            },
        },
    }


def _describe(status: dict) -> str:
    conditions = status.get("conditions") or []
    latest = conditions[-1] if conditions else {}
    replicas = ", ".join(
        f"{role}: " + " ".join(f"{k}={v}" for k, v in sorted(counts.items()))
        for role, counts in sorted((status.get("replicaStatuses") or {}).items())
    )
    text = latest.get("type", "Pending")
    if latest.get("message"):
        text += f" ({latest['message']})"
    return text + (f"; {replicas}" if replicas else "")


def _phase(status: dict) -> str | None:
    for condition in reversed(status.get("conditions") or []):
        if condition.get("status") == "True" and condition.get("type") in _FINISHED:
            return condition["type"]
    return None


class TFJobLauncher:
    """Submits a TFJob through the Kubernetes API and follows it to the end.

    Args:
        api_client: a `kubernetes.client.ApiClient` (default: in-cluster
            config, else the kubeconfig).
        report: called with one line per status change (default: logging).
        watch_seconds: how long one watch request may stay open before it is
            renewed.
    """

    def __init__(self, api_client=None, report: Callable[[str], None] | None = None, watch_seconds: int = 60):
        from kubernetes import client

        self.api = client.CustomObjectsApi(api_client or _default_api_client())
        self.report = report or (lambda line: logging.info("%s", line))
        self.watch_seconds = watch_seconds

    def submit(self, manifest: dict) -> dict:
        meta = manifest["metadata"]
        created = self.api.create_namespaced_custom_object(GROUP, VERSION, meta["namespace"], PLURAL, manifest)
        self.report(f"TFJob {meta['namespace']}/{meta['name']} submitted.")
        return created

    def wait(self, namespace: str, name: str, timeout_seconds: float | None = None) -> dict:
        """Streams status changes until the TFJob succeeds; returns its last status.

        Raises:
            TFJobFailed: the job failed, or `timeout_seconds` passed first.
        """
        from kubernetes import watch

        deadline = time.monotonic() + timeout_seconds if timeout_seconds else None
        last_line = None
        while True:
            stream = watch.Watch().stream(
                self.api.list_namespaced_custom_object,
                GROUP,
                VERSION,
                namespace,
                PLURAL,
                field_selector=f"metadata.name={name}",
                timeout_seconds=self.watch_seconds,
            )
            for event in stream:
                if event["type"] == "DELETED":
                    raise TFJobFailed(f"TFJob {namespace}/{name} was deleted before it finished.")
                status = event["object"].get("status") or {}
                line = _describe(status)
                if line != last_line:
                    self.report(f"TFJob {name}: {line}")
                    last_line = line
                phase = _phase(status)
                if phase == "Succeeded":
                    return status
                if phase == "Failed":
                    raise TFJobFailed(f"TFJob {namespace}/{name} failed: {line}")
            if deadline and time.monotonic() > deadline:
                raise TFJobFailed(f"TFJob {namespace}/{name} did not finish within {timeout_seconds:g}s: {last_line}")

    def run(self, manifest: dict, timeout_seconds: float | None = None) -> dict:
        """Submits `manifest` and waits for the TFJob; returns its final status."""
        self.submit(manifest)
        meta = manifest["metadata"]
        return self.wait(meta["namespace"], meta["name"], timeout_seconds)


def _default_api_client():
    from kubernetes import client, config

    try:
        config.load_incluster_config()
    except config.ConfigException:
        # KUBECONFIG is read now, not when `kubernetes` was imported.
        config.load_kube_config(config_file=os.environ.get("KUBECONFIG"))
    return client.ApiClient()
