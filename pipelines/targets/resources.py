"""Per-component resources: the Kubeflow resource spec, and a warning wherever a target cannot honour them.

Nothing in `orchestrator.components` is dropped silently: every setting a
target cannot apply is named in a warning, with where it does apply.
"""

from __future__ import annotations

from pipelines.spec.orchestrator import ComponentRunSpec, OrchestratorSpec

__all__ = ["unhonoured_settings", "kubeflow_resource_spec", "GPU_RESOURCE"]

GPU_RESOURCE = "nvidia.com/gpu"

# What each target applies; everything else gets a warning.
_HONOURED = {
    "local": {"retries", "timeout_seconds"},
    "beam": set(),
    "airflow": {"retries", "timeout_seconds"},
    "kubeflow": {"cpu", "memory", "gpus", "accelerator", "retries", "workers"},
}
_WHERE = {
    "cpu": "kubeflow",
    "memory": "kubeflow",
    "gpus": "kubeflow (the local Trainer uses the GPUs it can see: `training.gpus`)",
    "accelerator": "kubeflow",
    "workers": "kubeflow (TFJob or Vertex AI worker pools)",
    "retries": "local, airflow and kubeflow",
    "timeout_seconds": "local, airflow, and the kubeflow Trainer's TFJob or Vertex job",
}
_DEFAULTS = ComponentRunSpec()


def _set_settings(settings: ComponentRunSpec) -> dict[str, object]:
    return {name: getattr(settings, name) for name in _WHERE if getattr(settings, name) != getattr(_DEFAULTS, name)}


def unhonoured_settings(orchestrator: OrchestratorSpec, target: str) -> list[str]:
    """One warning per component whose settings `target` cannot apply.

    Example:
        >>> from pipelines.spec.orchestrator import OrchestratorSpec, ComponentRunSpec
        >>> spec = OrchestratorSpec(components={"Trainer": ComponentRunSpec(gpus=2)})
        >>> unhonoured_settings(spec, "local")[0].split(":")[0]
        'orchestrator.components.Trainer'
    """
    warnings = []
    for component_id, settings in sorted(orchestrator.components.items()):
        if settings is None:
            continue
        ignored = {k: v for k, v in _set_settings(settings).items() if k not in _HONOURED[target]}
        if target == "kubeflow" and "timeout_seconds" in ignored and component_id == "Trainer" and settings.workers > 1:
            ignored.pop("timeout_seconds")
        if not ignored:
            continue
        listed = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in ignored.items())
        where = "; ".join(f"{k} on {_WHERE[k]}" for k in ignored)
        warnings.append(
            f"orchestrator.components.{component_id}: the {target} target cannot honour {listed}; "
            f"this target does not apply them. They apply: {where}."
        )
    return warnings


def kubeflow_resource_spec(settings: ComponentRunSpec):
    """The KFP `ResourceSpec` (requests and limits, accelerator) for one component's container."""
    from kfp.pipeline_spec import pipeline_spec_pb2

    spec = pipeline_spec_pb2.PipelineDeploymentConfig.PipelineContainerSpec.ResourceSpec()
    if settings.cpu is not None:
        spec.cpu_limit = settings.cpu
        spec.cpu_request = settings.cpu
    if settings.memory_bytes is not None:
        spec.memory_limit = settings.memory_bytes / 10**9  # KFP counts memory in GB
        spec.memory_request = settings.memory_bytes / 10**9
    if settings.gpus:
        spec.accelerator.type = settings.accelerator or GPU_RESOURCE
        spec.accelerator.count = settings.gpus
    return spec
