"""Multi-node training on Kubernetes: a Kubeflow training-operator TFJob, through kubeflow-training's SDK.

`tfjob_model` builds the TFJob (one Chief and `workers - 1` Workers, each
with the component's CPU, memory and GPUs) from kubeflow-training's models
(`KubeflowOrgV1TFJob`, with the Kubernetes client's pod template); the
operator sets TF_CONFIG in every replica. `tfjob_manifest` is the same job
as a plain dict. `TFJobLauncher` submits it with kubeflow-training's
`TrainingClient` and follows its conditions until it succeeds or fails.

Example:
    >>> manifest = tfjob_manifest("taxi-train", "kubeflow", "gcr.io/me/yaml-tfx:0.1.0",
    ...                           ["python", "-m", "tfx.scripts.run_executor"], ComponentRunSpec(workers=3))
    >>> manifest["spec"]["tfReplicaSpecs"]["Worker"]["replicas"]
    2
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable

from pipelines.spec.gpu_nodes import gpu_placement
from pipelines.spec.orchestrator import ComponentRunSpec
from pipelines.targets.resources import GPU_RESOURCE

__all__ = ["tfjob_model", "tfjob_manifest", "as_manifest", "TFJobLauncher", "TFJobFailed", "GROUP", "VERSION", "PLURAL"]

GROUP, VERSION, PLURAL = "kubeflow.org", "v1", "tfjobs"
# TrainingClient.wait_for_job_conditions needs a limit; a job without `timeout_seconds` gets a week.
_NO_LIMIT_SECONDS = 7 * 24 * 3600


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


def tfjob_model(
    name: str,
    namespace: str,
    image: str,
    command: list[str],
    settings: ComponentRunSpec,
    service_account: str | None = None,
    platform: str = "none",
):
    """The TFJob as kubeflow-training's `KubeflowOrgV1TFJob`, what `TrainingClient.create_tfjob` sends.

    Args:
        name: The TFJob's name (unique in `namespace` while it exists).
        namespace: The namespace the training operator watches.
        image: The container image every replica runs.
        command: The command every replica runs.
        settings: The Trainer's resources: `workers` (one Chief, the rest Workers), CPU, memory, GPUs;
            `retries` becomes `runPolicy.backoffLimit`, `timeout_seconds` `runPolicy.activeDeadlineSeconds`.
        service_account: The pods' Kubernetes service account (None: the namespace default).
        platform: `gke`, `nvidia-gfd` or `none`: the GPU node labels and tolerations (`pipelines.spec.gpu_nodes`).

    Returns:
        A `kubeflow.training.KubeflowOrgV1TFJob`.

    Raises:
        ImportError: kubeflow-training is not installed (the message has the pip command).
    """
    from kubernetes import client

    models = _training().models
    replicas = {"Chief": 1, "Worker": settings.workers - 1}
    return models.KubeflowOrgV1TFJob(
        api_version=f"{GROUP}/{VERSION}",
        kind="TFJob",
        metadata=client.V1ObjectMeta(
            name=name, namespace=namespace, labels={"app.kubernetes.io/created-by": "yaml-tfx"}
        ),
        spec=models.KubeflowOrgV1TFJobSpec(
            run_policy=models.KubeflowOrgV1RunPolicy(
                clean_pod_policy="Running",
                backoff_limit=settings.retries,
                active_deadline_seconds=settings.timeout_seconds or None,
            ),
            tf_replica_specs={
                role: models.KubeflowOrgV1ReplicaSpec(
                    replicas=count,
                    restart_policy="OnFailure",
                    template=_pod_template(image, command, settings, service_account, platform),
                )
                for role, count in replicas.items()
                if count
            },
        ),
    )


def tfjob_manifest(
    name: str,
    namespace: str,
    image: str,
    command: list[str],
    settings: ComponentRunSpec,
    service_account: str | None = None,
    platform: str = "none",
) -> dict:
    """`tfjob_model(...)` as a plain dict (what `kubectl apply -f` takes, once dumped to YAML)."""
    return as_manifest(tfjob_model(name, namespace, image, command, settings, service_account, platform))


def as_manifest(job) -> dict:
    """A kubeflow-training model as the API's JSON (camelCase, no empty fields)."""
    return _training().ApiClient().sanitize_for_serialization(job)


def _training():
    """The kubeflow-training SDK, or an ImportError that says how to install it."""
    try:
        import kubeflow.training
    except ImportError:
        raise ImportError(
            "multi-node training (Trainer `workers` > 1 on the kubeflow target) needs kubeflow-training's SDK, which "
            "is not installed. Expected the `kubeflow.training` module. Run `pip install kubeflow-training==1.7.0` "
            "(later releases need kubernetes>=27; TFX pins 26.1.0)."
        ) from None
    return kubeflow.training


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


def _failed(status: dict) -> bool:
    return any(c.get("type") == "Failed" and c.get("status") == "True" for c in status.get("conditions") or [])


def _api_cause(error: BaseException) -> str:
    """The Kubernetes API's answer behind a TrainingClient error (it raises a bare RuntimeError from it)."""
    cause = error.__cause__ or error.__context__
    status = getattr(cause, "status", None)
    if status is None:
        return f"{type(cause).__name__}: {cause}" if cause else str(error)
    try:
        message = json.loads(cause.body).get("message") or cause.reason
    except (TypeError, ValueError, AttributeError):
        message = cause.reason
    return f"HTTP {status} {message}"


class TFJobLauncher:
    """Submits a TFJob with kubeflow-training's `TrainingClient` and follows its conditions to the end.

    Args:
        client_configuration: a `kubernetes.client.Configuration` for the cluster (default: the
            kubeconfig in $KUBECONFIG or ~/.kube/config, else the in-cluster service account).
        report: called with one line per status change (default: logging).
        poll_seconds: how often the job's status is read.
    """

    def __init__(self, client_configuration=None, report: Callable[[str], None] | None = None, poll_seconds=15.0):
        # KUBECONFIG is read now, not when `kubernetes` was imported.
        config_file = None if client_configuration else os.environ.get("KUBECONFIG")
        self.client = _training().TrainingClient(config_file=config_file, client_configuration=client_configuration)
        self.report = report or (lambda line: logging.info("%s", line))
        self.poll_seconds = poll_seconds

    def submit(self, job) -> None:
        """Creates `job` (a `KubeflowOrgV1TFJob`).

        Raises:
            TFJobFailed: the Kubernetes API refused it or could not be reached (its answer is named).
        """
        meta = job.metadata
        try:
            self.client.create_tfjob(job, namespace=meta.namespace)
        except (RuntimeError, TimeoutError) as error:
            raise TFJobFailed(
                f"the Kubernetes API refused TFJob {meta.namespace}/{meta.name}: {_api_cause(error)}. Expected it "
                f"to be created. Check that the training operator is installed (`kubectl get crd {PLURAL}.{GROUP}`) "
                f"and that this service account may create {PLURAL} in {meta.namespace}."
            ) from None
        self.report(f"TFJob {meta.namespace}/{meta.name} submitted.")

    def wait(self, namespace: str, name: str, timeout_seconds: float | None = None) -> dict:
        """Reports status changes until the TFJob succeeds; returns its last status (API JSON).

        Raises:
            TFJobFailed: the job failed, could no longer be read, or `timeout_seconds` passed first.
        """
        last = {"line": None, "status": {}}

        def on_poll(job) -> None:
            status = as_manifest(job.status) if job.status else {}
            line = _describe(status)
            if line != last["line"]:
                self.report(f"TFJob {name}: {line}")
            last.update(line=line, status=status)

        limit = timeout_seconds or _NO_LIMIT_SECONDS
        try:
            self.client.wait_for_job_conditions(
                name,
                namespace,
                job_kind="TFJob",
                timeout=limit,
                polling_interval=self.poll_seconds,
                callback=on_poll,
            )
        except TimeoutError:
            raise TFJobFailed(f"TFJob {namespace}/{name} did not finish within {limit:g}s: {last['line']}") from None
        except RuntimeError as error:
            if _failed(last["status"]):
                raise TFJobFailed(f"TFJob {namespace}/{name} failed: {last['line']}") from None
            raise TFJobFailed(
                f"cannot read TFJob {namespace}/{name}: {_api_cause(error)}. Expected it until it finishes. "
                f"Check that it was not deleted (`kubectl get {PLURAL} -n {namespace}`)."
            ) from None
        return last["status"]

    def run(self, job, timeout_seconds: float | None = None) -> dict:
        """Submits `job` (a `KubeflowOrgV1TFJob`) and waits for it; returns its final status."""
        self.submit(job)
        return self.wait(job.metadata.namespace, job.metadata.name, timeout_seconds)
