"""Kubernetes: ConfigMap, Deployment (readiness on the model status API),
Service, HorizontalPodAutoscaler and the models volume claim."""

from __future__ import annotations

from typing import Any

from serving.manifests.compose import (
    CONFIG_DIR,
    GRPC_PORT,
    MODELS_DIR,
    REST_PORT,
    server_args,
)

__all__ = ["config_map", "deployment", "hpa", "pvc", "service"]


def _labels(name: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": "tfserving", "app.kubernetes.io/instance": name}


def config_map(name: str, files: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{name}-serving-config", "labels": _labels(name)},
        "data": files,
    }


def deployment(name: str, image: str, replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": f"{name}-serving", "labels": _labels(name)},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": _labels(name)},
            "template": {
                "metadata": {
                    "labels": _labels(name),
                    "annotations": {
                        "prometheus.io/scrape": "true",
                        "prometheus.io/port": str(REST_PORT),
                        "prometheus.io/path": "/monitoring/prometheus/metrics",
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
                                "httpGet": {"path": f"/v1/models/{name}", "port": REST_PORT},
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
                        {"name": "config", "configMap": {"name": f"{name}-serving-config"}},
                        {"name": "models", "persistentVolumeClaim": {"claimName": f"{name}-models"}},
                    ],
                },
            },
        },
    }


def service(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": f"{name}-serving", "labels": _labels(name)},
        "spec": {
            "selector": _labels(name),
            "ports": [
                {"name": "grpc", "port": GRPC_PORT, "targetPort": GRPC_PORT},
                {"name": "http", "port": REST_PORT, "targetPort": REST_PORT},
            ],
        },
    }


def hpa(name: str, min_replicas: int, max_replicas: int = 10, cpu_percent: int = 70) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": f"{name}-serving", "labels": _labels(name)},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": f"{name}-serving"},
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


def pvc(name: str, size: str = "10Gi") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": f"{name}-models", "labels": _labels(name)},
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": size}}},
    }
