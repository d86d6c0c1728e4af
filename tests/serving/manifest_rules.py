"""Kubernetes' name rules, for checking generated manifests.

The OpenAPI schemas (kubernetes-validate) check fields and types but not the
name formats that the API server enforces on create; these are the regular
expressions and lengths of k8s.io/apimachinery/pkg/util/validation and the
per-kind name rules of k8s.io/kubernetes/pkg/apis/*/validation.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
CONFIG_MAP_KEY = re.compile(r"[-._a-zA-Z0-9]+")
IANA_SVC_NAME = re.compile(r"[-a-z0-9]+")

# kind -> (rule name, pattern, max length) for metadata.name
OBJECT_NAME_RULES = {
    "Service": ("DNS-1035 label", DNS1035_LABEL, 63),
    "Deployment": ("DNS-1123 subdomain", DNS1123_SUBDOMAIN, 253),
    "ConfigMap": ("DNS-1123 subdomain", DNS1123_SUBDOMAIN, 253),
    "PersistentVolumeClaim": ("DNS-1123 subdomain", DNS1123_SUBDOMAIN, 253),
    "HorizontalPodAutoscaler": ("DNS-1123 subdomain", DNS1123_SUBDOMAIN, 253),
}


def _check(where: str, value: str, rule: str, pattern: re.Pattern, max_length: int) -> Iterator[str]:
    if len(value) > max_length or not pattern.fullmatch(value):
        yield f"{where}={value!r} is not a {rule} (pattern {pattern.pattern}, at most {max_length} characters)"


def _qualified_key(where: str, key: str) -> Iterator[str]:
    prefix, _, name = key.rpartition("/")
    if prefix:
        yield from _check(f"{where} prefix", prefix, "DNS-1123 subdomain", DNS1123_SUBDOMAIN, 253)
    yield from _check(where, name, "qualified name", QUALIFIED_NAME, 63)


def _port_name(where: str, name: str) -> Iterator[str]:
    if len(name) > 15 or not IANA_SVC_NAME.fullmatch(name) or "--" in name or not re.search("[a-z]", name):
        yield f"{where}={name!r} is not an IANA_SVC_NAME (lower-case letters, digits, '-', at most 15)"
    if name.startswith("-") or name.endswith("-"):
        yield f"{where}={name!r} starts or ends with '-'"


def _metadata(kind: str, metadata: dict[str, Any], where: str) -> Iterator[str]:
    if "name" in metadata:
        yield from _check(f"{where}.name", metadata["name"], *OBJECT_NAME_RULES[kind])
    for key, value in metadata.get("labels", {}).items():
        yield from _qualified_key(f"{where}.labels key", key)
        yield from _check(f"{where}.labels[{key}]", value, "label value", LABEL_VALUE, 63)
    for key in metadata.get("annotations", {}):
        yield from _qualified_key(f"{where}.annotations key", key)


def _pod_spec(spec: dict[str, Any], where: str) -> Iterator[str]:
    volumes = {v["name"] for v in spec.get("volumes", [])}
    for i, volume in enumerate(spec.get("volumes", [])):
        yield from _check(f"{where}.volumes[{i}].name", volume["name"], "DNS-1123 label", DNS1123_LABEL, 63)
    for i, container in enumerate(spec["containers"]):
        here = f"{where}.containers[{i}]"
        yield from _check(f"{here}.name", container["name"], "DNS-1123 label", DNS1123_LABEL, 63)
        for j, port in enumerate(container.get("ports", [])):
            yield from _port_name(f"{here}.ports[{j}].name", port["name"])
        for j, mount in enumerate(container.get("volumeMounts", [])):
            if mount["name"] not in volumes:
                yield f"{here}.volumeMounts[{j}].name={mount['name']!r} names no volume (volumes: {sorted(volumes)})"


def name_problems(manifest: dict[str, Any]) -> list[str]:
    """Every name in `manifest` that the API server would refuse, as messages (empty: none)."""
    kind = manifest["kind"]
    problems = list(_metadata(kind, manifest["metadata"], "metadata"))
    if kind == "ConfigMap":
        for key in manifest.get("data", {}):
            problems += _check(f"data key {key!r}", key, "ConfigMap key", CONFIG_MAP_KEY, 253)
    if kind == "Deployment":
        template = manifest["spec"]["template"]
        problems += _metadata("Deployment", {k: v for k, v in template["metadata"].items() if k != "name"}, "template")
        problems += _pod_spec(template["spec"], "template.spec")
    if kind == "Service":
        for i, port in enumerate(manifest["spec"]["ports"]):
            problems += _port_name(f"spec.ports[{i}].name", port["name"])
    return problems
