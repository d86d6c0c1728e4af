"""Kubernetes: ConfigMap, Deployment (readiness on the model status API),
Service, HorizontalPodAutoscaler and the models volume claim.

Object names come from `names.object_name` (DNS-1035 labels for any model
name); the model name itself stays in the server config, the readiness probe
path and the `yaml-tfx/model-name` annotation.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

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


def _metadata(model_name: str, suffix: str) -> dict[str, Any]:
    return {
        "name": object_name(model_name, suffix),
        "labels": _labels(model_name),
        "annotations": {MODEL_NAME_ANNOTATION: model_name},
    }


def config_map(model_name: str, files: dict[str, str]) -> dict[str, Any]:
    """The ConfigMap `<instance>-serving-config` holding the server's config files.

    Args:
        model_name: The TensorFlow Serving model name.
        files: {file name: text proto} (`models.config`, `batching.config`, `monitoring.config`).

    Returns:
        The manifest as a dict.
    """
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _metadata(model_name, "serving-config"), "data": files}


def deployment(model_name: str, image: str, replicas: int) -> dict[str, Any]:
    """The Deployment `<instance>-serving` running `tensorflow_model_server`.

    Args:
        model_name: The TensorFlow Serving model name.
        image: The tensorflow/serving image.
        replicas: Pods to run.

    Returns:
        The manifest as a dict.
    """
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _metadata(model_name, "serving"),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": _labels(model_name)},
            "template": {
                "metadata": {
                    "labels": _labels(model_name),
                    "annotations": {
                        "prometheus.io/scrape": "true",
                        "prometheus.io/port": str(REST_PORT),
                        "prometheus.io/path": PROMETHEUS_PATH,
                    },
                },
                "spec": {
                    "containers": [
                        {
                            "name": "tfserving",
                            "image": image,
                            "command": ["tensorflow_model_server"],
                            "args": server_args(),
                            "ports": [
                                {"name": "grpc", "containerPort": GRPC_PORT},
                                {"name": "http", "containerPort": REST_PORT},
                            ],
                            "readinessProbe": {
                                "httpGet": {
                                    "path": f"/v1/models/{urllib.parse.quote(model_name, safe='')}",
                                    "port": REST_PORT,
                                },
                                "initialDelaySeconds": 5,
                                "periodSeconds": 5,
                                "failureThreshold": 3,
                            },
                            "livenessProbe": {
                                "tcpSocket": {"port": GRPC_PORT},
                                "initialDelaySeconds": 30,
                                "periodSeconds": 10,
                            },
                            "resources": {
                                "requests": {"cpu": "1", "memory": "1Gi"},
                                "limits": {"cpu": "2", "memory": "2Gi"},
                            },
                            "volumeMounts": [
                                {"name": "config", "mountPath": CONFIG_DIR, "readOnly": True},
                                {"name": "models", "mountPath": MODELS_DIR, "readOnly": True},
                            ],
                        }
                    ],
                    "volumes": [
                        {"name": "config", "configMap": {"name": object_name(model_name, "serving-config")}},
                        {"name": "models", "persistentVolumeClaim": {"claimName": object_name(model_name, "models")}},
                    ],
                },
            },
        },
    }


def service(model_name: str) -> dict[str, Any]:
    """The Service `<instance>-serving` on the gRPC and REST ports.

    Args:
        model_name: The TensorFlow Serving model name.

    Returns:
        The manifest as a dict.
    """
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _metadata(model_name, "serving"),
        "spec": {
            "selector": _labels(model_name),
            "ports": [
                {"name": "grpc", "port": GRPC_PORT, "targetPort": GRPC_PORT},
                {"name": "http", "port": REST_PORT, "targetPort": REST_PORT},
            ],
        },
    }


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
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": _metadata(model_name, "serving"),
        "spec": {
            "scaleTargetRef": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": object_name(model_name, "serving"),
            },
            "minReplicas": min_replicas,
            "maxReplicas": max(max_replicas, min_replicas),
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": cpu_percent}},
                }
            ],
        },
    }


def pvc(model_name: str, size: str = "10Gi") -> dict[str, Any]:
    """The PersistentVolumeClaim `<instance>-models` the Pusher writes versions into.

    Args:
        model_name: The TensorFlow Serving model name.
        size: Requested storage.

    Returns:
        The manifest as a dict.
    """
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": _metadata(model_name, "models"),
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": size}}},
    }
