"""Multi-node training: the TFJob against kubeflow-training's and Kubernetes' object models, and the launcher
(kubeflow-training's TrainingClient) submitting and following it against a real HTTP server speaking the
Kubernetes API."""

from __future__ import annotations

import json
import sys

import pytest
import yaml
from fake_kubernetes import FAILING, SUCCEEDING, FakeKubernetes

from pipelines.spec.orchestrator import ComponentRunSpec
from pipelines.targets.tfjob import TFJobFailed, TFJobLauncher, tfjob_manifest, tfjob_model

kubernetes = pytest.importorskip("kubernetes")
training = pytest.importorskip("kubeflow.training")

SETTINGS = ComponentRunSpec(
    cpu=8, memory="32Gi", gpus=2, accelerator="NVIDIA_TESLA_T4", workers=3, retries=2, timeout_seconds=3600
)


def job_args(name: str = "taxi-trainer", platform: str = "nvidia-gfd") -> tuple:
    return name, "ml", "registry.example/yaml-tfx:0.1.0", ["python", "-m", "trainer"], SETTINGS, "trainer-sa", platform


def manifest(name: str = "taxi-trainer", platform: str = "nvidia-gfd") -> dict:
    return tfjob_manifest(*job_args(name, platform))


class _Response:
    def __init__(self, payload):
        self.data = json.dumps(payload)


def _as_model(data: dict, model: str):
    """Deserializes `data` into a kubernetes client model, as the client does with API responses."""
    return kubernetes.client.ApiClient().deserialize(_Response(data), model)


def _as_tfjob(data: dict):
    """Deserializes `data` into kubeflow-training's `KubeflowOrgV1TFJob`, as its TrainingClient reads jobs."""
    return training.ApiClient().deserialize(_Response(data), "KubeflowOrgV1TFJob")


def test_manifest_has_a_chief_and_workers_with_gpus_each():
    spec = manifest()["spec"]
    assert {role: r["replicas"] for role, r in spec["tfReplicaSpecs"].items()} == {"Chief": 1, "Worker": 2}
    assert spec["runPolicy"] == {"cleanPodPolicy": "Running", "backoffLimit": 2, "activeDeadlineSeconds": 3600}
    for replica in spec["tfReplicaSpecs"].values():
        template = _as_model(replica["template"], "V1PodTemplateSpec")
        (container,) = template.spec.containers
        assert container.name == "tensorflow"  # the training operator's required container name
        assert container.image == "registry.example/yaml-tfx:0.1.0"
        assert container.resources.limits == {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "2"}
        assert container.resources.requests == {"cpu": "8", "memory": "32Gi"}
        assert template.spec.node_selector == {"nvidia.com/gpu.product": "Tesla-T4"}  # GPU feature discovery's label
        assert [(t.key, t.operator, t.effect) for t in template.spec.tolerations] == [
            ("nvidia.com/gpu", "Exists", "NoSchedule")
        ]
        assert template.spec.service_account_name == "trainer-sa"


@pytest.mark.parametrize(
    "platform, node_selector",
    [
        ("gke", {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}),
        ("nvidia-gfd", {"nvidia.com/gpu.product": "Tesla-T4"}),
        ("none", None),
    ],
)
def test_gpu_nodes_are_selected_by_the_label_each_platform_sets(platform, node_selector):
    template = manifest(platform=platform)["spec"]["tfReplicaSpecs"]["Chief"]["template"]["spec"]
    assert template.get("nodeSelector") == node_selector
    assert ("tolerations" in template) == (platform != "none")


def test_manifest_round_trips_through_the_kubernetes_object_model_unchanged():
    client = kubernetes.client.ApiClient()
    document = manifest()
    meta = _as_model(document["metadata"], "V1ObjectMeta")
    assert client.sanitize_for_serialization(meta) == document["metadata"]
    for replica in document["spec"]["tfReplicaSpecs"].values():
        template = _as_model(replica["template"], "V1PodTemplateSpec")
        assert client.sanitize_for_serialization(template) == replica["template"]
    # What `kubectl apply -f` reads back is the same document.
    assert yaml.safe_load(yaml.safe_dump(document)) == document


def test_one_worker_means_a_chief_only():
    single = tfjob_manifest("t", "ml", "img", ["python"], ComponentRunSpec(workers=1))
    assert list(single["spec"]["tfReplicaSpecs"]) == ["Chief"]
    assert "activeDeadlineSeconds" not in single["spec"]["runPolicy"]


def test_manifest_parses_as_kubeflow_trainings_tfjob_unchanged():
    document = manifest()
    job = _as_tfjob(document)
    assert isinstance(job, training.KubeflowOrgV1TFJob)
    assert job.spec.run_policy.backoff_limit == 2 and job.spec.run_policy.active_deadline_seconds == 3600
    assert {role: spec.replicas for role, spec in job.spec.tf_replica_specs.items()} == {"Chief": 1, "Worker": 2}
    assert training.ApiClient().sanitize_for_serialization(job) == document


def test_without_kubeflow_training_the_error_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "kubeflow.training", None)  # what `import` sees when it is not installed
    with pytest.raises(ImportError, match=r"Run `pip install kubeflow-training==1.7.0`"):
        tfjob_manifest(*job_args())


def launcher(server: FakeKubernetes, lines: list | None = None, poll_seconds: float = 0.01) -> TFJobLauncher:
    report = lines.append if lines is not None else (lambda line: None)
    return TFJobLauncher(server.configuration(), report=report, poll_seconds=poll_seconds)


def test_launcher_submits_with_the_training_client_and_reports_conditions_until_it_succeeds():
    lines = []
    with FakeKubernetes(SUCCEEDING) as server:
        status = launcher(server, lines).run(tfjob_model(*job_args()))

    (posted,) = server.posted()
    job = _as_tfjob(posted)
    assert (job.kind, job.metadata.namespace, job.metadata.name) == ("TFJob", "ml", "taxi-trainer")
    (container,) = job.spec.tf_replica_specs["Worker"].template.spec.containers
    assert container.image == "registry.example/yaml-tfx:0.1.0" and container.command == ["python", "-m", "trainer"]
    assert {k: v for k, v in posted.items() if k != "status"} == manifest()
    assert status["conditions"][-1]["type"] == "Succeeded"
    assert lines == [
        "TFJob ml/taxi-trainer submitted.",
        "TFJob taxi-trainer: Pending",
        "TFJob taxi-trainer: Created (TFJob is created.)",
        "TFJob taxi-trainer: Running (TFJob is running.); Chief: active=1, Worker: active=2",
        "TFJob taxi-trainer: Succeeded (TFJob successfully completed.); Chief: succeeded=1, Worker: succeeded=2",
    ]
    assert [(r["method"], r["path"]) for r in server.requests] == [
        ("POST", "/apis/kubeflow.org/v1/namespaces/ml/tfjobs")
    ] + [("GET", "/apis/kubeflow.org/v1/namespaces/ml/tfjobs/taxi-trainer")] * len(SUCCEEDING)


def test_launcher_raises_with_the_operators_reason_when_the_job_fails():
    with FakeKubernetes(FAILING) as server:
        with pytest.raises(TFJobFailed, match=r"ml/taxi-trainer failed: Failed \(TFJob has failed because 1 Worker "):
            launcher(server).run(tfjob_model(*job_args()))


def test_launcher_gives_up_after_its_time_limit_while_the_job_still_runs():
    running = SUCCEEDING[:3]
    with FakeKubernetes(running) as server:
        with pytest.raises(TFJobFailed, match="did not finish within 0.2s: Running"):
            launcher(server, poll_seconds=0.05).run(tfjob_model(*job_args()), timeout_seconds=0.2)
    assert 2 <= len([r for r in server.requests if r["method"] == "GET"]) <= 4


@pytest.mark.parametrize(
    "refusal, expected",
    [
        (
            (403, "Forbidden", 'tfjobs.kubeflow.org is forbidden: User "system:serviceaccount:ml:default" cannot'),
            "refused TFJob ml/taxi-trainer: HTTP 403 tfjobs.kubeflow.org is forbidden",
        ),
        (
            (404, "NotFound", "the server could not find the requested resource"),
            "HTTP 404 the server could not find the requested resource. Expected it to be created. "
            "Check that the training operator is installed (`kubectl get crd tfjobs.kubeflow.org`)",
        ),
    ],
)
def test_a_refused_tfjob_names_the_apis_answer_and_what_to_check(refusal, expected):
    with FakeKubernetes(SUCCEEDING, refuse_create=refusal) as server:
        with pytest.raises(TFJobFailed) as raised:
            launcher(server).run(tfjob_model(*job_args()))
    assert expected in str(raised.value)
    assert [r["method"] for r in server.requests] == ["POST"]


def test_a_job_that_vanishes_is_named_with_the_apis_answer():
    with FakeKubernetes(SUCCEEDING) as server:
        with pytest.raises(
            TFJobFailed, match=r'cannot read TFJob ml/gone: HTTP 404 tfjobs.kubeflow.org "gone" not found'
        ):
            launcher(server).wait("ml", "gone", timeout_seconds=1)


def test_trainer_executor_writes_the_manifest_by_the_model_and_runs_tfx_trainer_in_every_replica(tmp_path, monkeypatch):
    from tfx.types import standard_artifacts

    from pipelines.targets.tfjob_executor import TFJOB_KEY, TRAINER_EXECUTOR, Executor

    def artifact(kind, name):
        item = kind()
        item.uri = str(tmp_path / name)
        return [item]

    inputs = {"examples": artifact(standard_artifacts.Examples, "examples")}
    outputs = {
        "model": artifact(standard_artifacts.Model, "model"),
        "model_run": artifact(standard_artifacts.ModelRun, "run"),
    }
    job = {
        "name": "taxi-trainer",
        "namespace": "ml",
        "image": "registry.example/yaml-tfx:0.1.0",
        "service_account": None,
        "settings": {"gpus": 1, "workers": 2},
        "poll_seconds": 0.01,
    }
    exec_properties = {"custom_config": json.dumps({"model": {"type": "dnn"}, TFJOB_KEY: job})}
    with FakeKubernetes(SUCCEEDING) as server:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(yaml.safe_dump(server.kubeconfig()))
        monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
        Executor().Do(inputs, outputs, exec_properties)
        ((_, submitted),) = server.jobs.items()

    written = yaml.safe_load((tmp_path / "run" / "tfjob.yaml").read_text())
    assert written == {k: v for k, v in submitted.items() if k != "status"}
    command = submitted["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["command"]
    assert command[:5] == ["python", "-m", "tfx.scripts.run_executor", "--executor_class_path", TRAINER_EXECUTOR]
    arguments = dict(zip(command[5::2], command[6::2]))
    assert json.loads(arguments["--inputs"])["examples"][0]["artifact"]["uri"] == str(tmp_path / "examples")
    # The replicas get the training settings, not the launcher's own.
    assert json.loads(json.loads(arguments["--exec-properties"])["custom_config"]) == {"model": {"type": "dnn"}}
