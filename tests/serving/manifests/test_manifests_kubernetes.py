"""Kubernetes manifests that a cluster accepts: OpenAPI schema (kubernetes-validate,
strict) and the API server's name rules, for any model name."""

from __future__ import annotations

import copy
import urllib.parse

import kubernetes_validate
import pytest
import yaml
from google.protobuf import text_format
from manifest_rules import DNS1035_LABEL, name_problems

import serving.manifests as manifests
from serving import config as cfg
from serving.manifests.kubernetes import MODEL_NAME_ANNOTATION
from serving.manifests.names import MAX_SUFFIX_LENGTH, instance_name, object_name

MODEL_NAMES = [
    "penguins",
    "chicago_taxi",
    "Churn Model v2",
    "modèle.été",
    "模型",
    "2024-model",
    "x" * 200,
    "a--b__c..d",
]
KUBERNETES_VERSIONS = ["1.25.0", "1.37.0"]  # the oldest and newest schemas kubernetes-validate ships
KINDS = ["configmap", "deployment", "service", "hpa", "pvc"]


def _kubernetes(model_name: str) -> dict[str, dict]:
    files = manifests.render_manifests(model_name)
    return {kind: yaml.safe_load(files[f"kubernetes/{kind}.yaml"]) for kind in KINDS}


@pytest.fixture(scope="module", params=MODEL_NAMES)
def rendered(request) -> tuple[str, dict[str, dict]]:
    return request.param, _kubernetes(request.param)


@pytest.mark.parametrize("model_name", MODEL_NAMES)
def test_instance_name_is_a_dns1035_label_with_room_for_every_suffix(model_name):
    name = instance_name(model_name)
    assert DNS1035_LABEL.fullmatch(name), name
    assert len(object_name(model_name, "x" * (MAX_SUFFIX_LENGTH - 1))) <= 63
    assert instance_name(model_name) == name  # deterministic


@pytest.mark.parametrize(
    ("model_name", "expected"),
    [
        ("penguins", "penguins"),
        ("chicago-taxi", "chicago-taxi"),
        ("chicago_taxi", "chicago-taxi-bdcd47c7"),
        ("modèle", "modele-bf5d8ba8"),
        ("模型", "model-c98e118e"),
        ("2024model", "model-2024model-57749f84"),
    ],
)
def test_instance_name_keeps_valid_names_and_hashes_changed_ones(model_name, expected):
    assert instance_name(model_name) == expected


def test_names_that_map_to_the_same_stem_stay_distinct():
    names = ["chicago_taxi", "chicago-taxi", "Chicago_Taxi", "chicago.taxi", "x" * 100, "x" * 101]
    assert len({instance_name(n) for n in names}) == len(names)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: instance_name(""), "Expected a non-empty model name"),
        (lambda: object_name("m", "Serving"), "Received: suffix='Serving'"),
        (lambda: object_name("m", "s" * MAX_SUFFIX_LENGTH), "at most 14 characters"),
    ],
)
def test_bad_names_raise_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_every_manifest_passes_the_kubernetes_openapi_schema(rendered, version):
    _, objects = rendered
    for kind, manifest in objects.items():
        try:
            kubernetes_validate.validate(manifest, version, strict=True)
        except kubernetes_validate.ValidationError as error:
            pytest.fail(f"kubernetes/{kind}.yaml: {'.'.join(map(str, error.path))}: {error.message}")


def test_every_manifest_follows_the_api_server_name_rules(rendered):
    _, objects = rendered
    assert {kind: name_problems(manifest) for kind, manifest in objects.items()} == {kind: [] for kind in KINDS}


def test_manifests_reference_each_other_and_keep_the_model_name(rendered):
    model_name, objects = rendered
    deployment, service, hpa = objects["deployment"], objects["service"], objects["hpa"]
    pod = deployment["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["config"]["configMap"]["name"] == objects["configmap"]["metadata"]["name"]
    assert volumes["models"]["persistentVolumeClaim"]["claimName"] == objects["pvc"]["metadata"]["name"]
    assert hpa["spec"]["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert (
        deployment["spec"]["selector"]["matchLabels"].items()
        <= deployment["spec"]["template"]["metadata"]["labels"].items()
    )
    probe = pod["containers"][0]["readinessProbe"]["httpGet"]["path"]
    assert urllib.parse.unquote(probe) == f"/v1/models/{model_name}"
    assert all(o["metadata"]["annotations"][MODEL_NAME_ANNOTATION] == model_name for o in objects.values())
    served = text_format.Parse(objects["configmap"]["data"]["models.config"], cfg.ModelServerConfig())
    assert cfg.find_model(served, model_name).base_path == f"/models/{model_name}"


def _set(path: str, value):
    def mutate(manifest: dict) -> None:
        *parents, last = path.split(".")
        node = manifest
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if value is _DELETE:
            del node[last]
        else:
            node[last] = value

    return mutate


_DELETE = object()


@pytest.mark.parametrize(
    ("kind", "mutate", "message"),
    [
        ("deployment", _set("spec.replicas", "two"), "'two' is not of type 'integer'"),
        ("deployment", _set("spec.replicass", 2), "Additional properties are not allowed ('replicass'"),
        ("deployment", _set("spec.selector", _DELETE), "'selector' is a required property"),
        ("service", _set("spec.ports.0.port", "http"), "'http' is not of type 'integer'"),
        ("hpa", _set("spec.metrics.0.resource.target.averageUtilization", "70%"), "is not of type 'integer'"),
    ],
)
def test_schema_validation_rejects_a_broken_manifest(kind, mutate, message):
    manifest = copy.deepcopy(_kubernetes("penguins")[kind])
    mutate(manifest)
    with pytest.raises(kubernetes_validate.ValidationError) as error:
        kubernetes_validate.validate(manifest, KUBERNETES_VERSIONS[-1], strict=True)
    assert message in error.value.message


@pytest.mark.parametrize(
    ("kind", "mutate", "message"),
    [
        # the name the generator used to write for the bundled model
        (
            "service",
            _set("metadata.name", "chicago_taxi-serving"),
            "metadata.name='chicago_taxi-serving' is not a DNS-1035",
        ),
        ("service", _set("metadata.name", "2024-serving"), "metadata.name='2024-serving' is not a DNS-1035"),
        ("deployment", _set("metadata.name", "a" * 254), "is not a DNS-1123 subdomain"),
        ("pvc", _set("metadata.labels", {"app.kubernetes.io/instance": "x" * 64}), "is not a label value"),
        ("service", _set("spec.ports.0.name", "grpc-api-endpoint"), "is not an IANA_SVC_NAME"),
        ("deployment", _set("spec.template.spec.containers.0.volumeMounts.0.name", "cfg"), "names no volume"),
    ],
)
def test_name_rules_reject_a_broken_name(kind, mutate, message):
    manifest = copy.deepcopy(_kubernetes("penguins")[kind])
    mutate(manifest)
    assert any(message in problem for problem in name_problems(manifest)), name_problems(manifest)
