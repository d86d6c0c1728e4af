"""Per-component settings are applied where a target can, and named in a warning where it cannot."""

from __future__ import annotations

import pytest

from pipelines.spec.orchestrator import ComponentRunSpec, OrchestratorSpec
from pipelines.targets.resources import GPU_RESOURCE, kubeflow_resource_spec, unhonoured_settings

SPEC = OrchestratorSpec(
    components={
        "Trainer": ComponentRunSpec(cpu=8, memory="32Gi", gpus=2, accelerator="NVIDIA_TESLA_T4", retries=1),
        "Evaluator": ComponentRunSpec(retries=2, timeout_seconds=600),
    }
)


@pytest.mark.parametrize(
    "target, expected",
    [
        (
            "local",
            [
                "orchestrator.components.Trainer: the local target cannot honour cpu=8, memory=32Gi, gpus=2, "
                "accelerator=NVIDIA_TESLA_T4; this target does not apply them."
            ],
        ),
        (
            "airflow",
            [
                "orchestrator.components.Trainer: the airflow target cannot honour cpu=8, memory=32Gi, gpus=2, "
                "accelerator=NVIDIA_TESLA_T4; this target does not apply them."
            ],
        ),
        (
            "beam",
            [
                "orchestrator.components.Evaluator: the beam target cannot honour retries=2, timeout_seconds=600; "
                "this target does not apply them.",
                "orchestrator.components.Trainer: the beam target cannot honour cpu=8, memory=32Gi, gpus=2, "
                "accelerator=NVIDIA_TESLA_T4, retries=1; this target does not apply them.",
            ],
        ),
        (
            "kubeflow",
            [
                "orchestrator.components.Evaluator: the kubeflow target cannot honour timeout_seconds=600; "
                "this target does not apply them."
            ],
        ),
    ],
)
def test_every_setting_a_target_cannot_apply_is_named(target, expected):
    warnings = unhonoured_settings(SPEC, target)
    assert [w.split(" They apply: ")[0] for w in warnings] == expected
    assert all(" They apply: " in w for w in warnings)


def test_a_multi_node_trainer_timeout_is_honoured_on_kubeflow():
    spec = OrchestratorSpec(components={"Trainer": ComponentRunSpec(workers=2, timeout_seconds=60)})
    assert unhonoured_settings(spec, "kubeflow") == []
    assert "workers=2" in unhonoured_settings(spec, "local")[0]


def test_default_settings_warn_nowhere():
    spec = OrchestratorSpec(components={"Pusher": ComponentRunSpec()})
    assert all(unhonoured_settings(spec, t) == [] for t in ("local", "beam", "airflow", "kubeflow"))


def test_kubeflow_resource_spec_sets_requests_limits_and_the_accelerator():
    spec = kubeflow_resource_spec(ComponentRunSpec(cpu=0.5, memory="512Mi", gpus=1))
    assert (spec.cpu_limit, spec.cpu_request) == (0.5, 0.5)
    assert spec.memory_limit == pytest.approx(512 * 2**20 / 1e9)
    assert (spec.accelerator.type, spec.accelerator.count) == (GPU_RESOURCE, 1)
