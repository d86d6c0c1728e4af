"""Kubernetes: ConfigMap, Deployment (readiness on the model status API),
Service, HorizontalPodAutoscaler and the models volume claim.

Object names come from `names.object_name` (DNS-1035 labels for any model
name); the model name itself stays in the server config, the readiness probe
path and the `yaml-tfx/model-name` annotation.

Each object is built from the Kubernetes client's models (`kubernetes.client.V1...`)
and returned as the API's JSON (`ApiClient().sanitize_for_serialization`): camelCase
keys in the client's order, unset fields left out.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

from kubernetes import client

from serving.config import PROMETHEUS_PATH
from serving.manifests.compose import (
    CONFIG_DIR,
    GRPC_PORT,
    MODELS_DIR,
    REST_PORT,
    server_args,
)
from serving.manifests.names import instance_name, object_name

__all__ = ["MODEL_NAME_ANNOTATION", "config_map", "deployment", "hpa", "pvc", "service"]

MODEL_NAME_ANNOTATION = "yaml-tfx/model-name"


def _labels(model_name: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": "tfserving", "app.kubernetes.io/instance": instance_name(model_name)}


def _metadata(model_name: str, suffix: str) -> client.V1ObjectMeta:
    return client.V1ObjectMeta(
        name=object_name(model_name, suffix),
        labels=_labels(model_name),
        annotations={MODEL_NAME_ANNOTATION: model_name},
    )


def _as_dict(model: Any) -> dict[str, Any]:
    """A client model as the API's JSON (what `kubectl apply` reads)."""
    return client.ApiClient().sanitize_for_serialization(model)


def config_map(model_name: str, files: dict[str, str]) -> dict[str, Any]:
    """The ConfigMap `<instance>-serving-config` holding the server's config files.

    Args:
        model_name: The TensorFlow Serving model name.
        files: {file name: text proto} (`models.config`, `batching.config`, `monitoring.config`).

    Returns:
        The manifest as a dict.
    """
    return _as_dict(
        client.V1ConfigMap(
            api_version="v1", kind="ConfigMap", metadata=_metadata(model_name, "serving-config"), data=files
        )
    )


def _container(model_name: str, image: str) -> client.V1Container:
    return client.V1Container(
        name="tfserving",
        image=image,
        command=["tensorflow_model_server"],
        args=server_args(),
        ports=[
            client.V1ContainerPort(name="grpc", container_port=GRPC_PORT),
            client.V1ContainerPort(name="http", container_port=REST_PORT),
        ],
        readiness_probe=client.V1Probe(
            http_get=client.V1HTTPGetAction(
                path=f"/v1/models/{urllib.parse.quote(model_name, safe='')}", port=REST_PORT
            ),
            initial_delay_seconds=5,
            period_seconds=5,
            failure_threshold=3,
        ),
        # Kubernetes' own gRPC probe (GA in 1.27) on the standard health service the server runs with
        # --enable_grpc_healthcheck_service: a wedged server that still accepts TCP fails it.
        liveness_probe=client.V1Probe(
            grpc=client.V1GRPCAction(port=GRPC_PORT), initial_delay_seconds=30, period_seconds=10
        ),
        resources=client.V1ResourceRequirements(
            requests={"cpu": "1", "memory": "1Gi"}, limits={"cpu": "2", "memory": "2Gi"}
        ),
        volume_mounts=[
            client.V1VolumeMount(name="config", mount_path=CONFIG_DIR, read_only=True),
            client.V1VolumeMount(name="models", mount_path=MODELS_DIR, read_only=True),
        ],
    )


def deployment(model_name: str, image: str, replicas: int) -> dict[str, Any]:
    """The Deployment `<instance>-serving` running `tensorflow_model_server`.

    Args:
        model_name: The TensorFlow Serving model name.
        image: The tensorflow/serving image.
        replicas: Pods to run.

    Returns:
        The manifest as a dict.
    """
    pod = client.V1PodTemplateSpec(
        metadata=client.V1ObjectMeta(
            labels=_labels(model_name),
            annotations={
                "prometheus.io/scrape": "true",
                "prometheus.io/port": str(REST_PORT),
                "prometheus.io/path": PROMETHEUS_PATH,
            },
        ),
        spec=client.V1PodSpec(
            containers=[_container(model_name, image)],
            volumes=[
                client.V1Volume(
                    name="config",
                    config_map=client.V1ConfigMapVolumeSource(name=object_name(model_name, "serving-config")),
                ),
                client.V1Volume(
                    name="models",
                    persistent_volume_claim=client.V1PersistentVolumeClaimVolumeSource(
                        claim_name=object_name(model_name, "models")
                    ),
                ),
            ],
        ),
    )
    return _as_dict(
        client.V1Deployment(
            api_version="apps/v1",
            kind="Deployment",
            metadata=_metadata(model_name, "serving"),
            spec=client.V1DeploymentSpec(
                replicas=replicas,
                selector=client.V1LabelSelector(match_labels=_labels(model_name)),
                template=pod,
            ),
        )
    )


def service(model_name: str) -> dict[str, Any]:
    """The Service `<instance>-serving` on the gRPC and REST ports.

    Args:
        model_name: The TensorFlow Serving model name.

    Returns:
        The manifest as a dict.
    """
    return _as_dict(
        client.V1Service(
            api_version="v1",
            kind="Service",
            metadata=_metadata(model_name, "serving"),
            spec=client.V1ServiceSpec(
                selector=_labels(model_name),
                ports=[
                    client.V1ServicePort(name="grpc", port=GRPC_PORT, target_port=GRPC_PORT),
                    client.V1ServicePort(name="http", port=REST_PORT, target_port=REST_PORT),
                ],
            ),
        )
    )


def hpa(model_name: str, min_replicas: int, max_replicas: int = 10, cpu_percent: int = 70) -> dict[str, Any]:
    """The autoscaling/v2 HorizontalPodAutoscaler of the Deployment, on CPU.

    Args:
        model_name: The TensorFlow Serving model name.
        min_replicas: Fewest pods.
        max_replicas: Most pods (at least `min_replicas`).
        cpu_percent: Target average CPU utilisation.

    Returns:
        The manifest as a dict.
    """
    cpu = client.V2MetricSpec(
        type="Resource",
        resource=client.V2ResourceMetricSource(
            name="cpu", target=client.V2MetricTarget(type="Utilization", average_utilization=cpu_percent)
        ),
    )
    return _as_dict(
        client.V2HorizontalPodAutoscaler(
            api_version="autoscaling/v2",
            kind="HorizontalPodAutoscaler",
            metadata=_metadata(model_name, "serving"),
            spec=client.V2HorizontalPodAutoscalerSpec(
                scale_target_ref=client.V2CrossVersionObjectReference(
                    api_version="apps/v1", kind="Deployment", name=object_name(model_name, "serving")
                ),
                min_replicas=min_replicas,
                max_replicas=max(max_replicas, min_replicas),
                metrics=[cpu],
            ),
        )
    )


def pvc(model_name: str, size: str = "10Gi") -> dict[str, Any]:
    """The PersistentVolumeClaim `<instance>-models` the Pusher writes versions into.

    Args:
        model_name: The TensorFlow Serving model name.
        size: Requested storage.

    Returns:
        The manifest as a dict.
    """
    return _as_dict(
        client.V1PersistentVolumeClaim(
            api_version="v1",
            kind="PersistentVolumeClaim",
            metadata=_metadata(model_name, "models"),
            spec=client.V1PersistentVolumeClaimSpec(
                access_modes=["ReadWriteMany"], resources=client.V1ResourceRequirements(requests={"storage": size})
            ),
        )
    )
