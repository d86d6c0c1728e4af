"""`python -m pipelines doctor`: what this machine offers the Trainer, and what to change.

Reports the GPUs TensorFlow sees (after CUDA_VISIBLE_DEVICES) with their
compute capability, the CUDA and cuDNN versions TensorFlow was built with,
whether mixed precision (`training.mixed_precision`) and XLA
(`training.xla`) would help, and the GPU memory-growth state. Given a spec
(`python -m pipelines doctor SPEC`), it adds advice for the spec's model type
(`pipelines.model_advice`: each model type's own advice). The Tensor Core
thresholds are the model advice's (`components.trainer.models.advice`).

Exit codes: 0 at least one GPU is usable; 3 no GPU is visible (training
would run on the CPU; the message says how to fix it).

Example:
    >>> report = diagnose()
    >>> print(format_report(report))
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from components import ensure_legacy_keras
from components.trainer.models.advice import BFLOAT16_CORES, TENSOR_CORES
from pipelines.api import load
from pipelines.model_advice import model_advice

__all__ = ["GpuInfo", "DoctorReport", "diagnose", "format_report", "main", "NO_GPU_EXIT_CODE"]

NO_GPU_EXIT_CODE = 3


@dataclasses.dataclass(frozen=True)
class GpuInfo:
    """One GPU as TensorFlow sees it."""

    index: int
    name: str
    compute_capability: Optional[tuple[int, int]]
    memory_growth: Optional[bool]


@dataclasses.dataclass(frozen=True)
class DoctorReport:
    """What `diagnose` found."""

    tensorflow_version: str
    build: Mapping[str, Any]
    gpus: Sequence[GpuInfo]
    cuda_visible_devices: Optional[str]
    force_gpu_allow_growth: Optional[str]


def diagnose() -> DoctorReport:
    """Asks TensorFlow (without allocating GPU memory) what it was built with and which GPUs it sees."""

    ensure_legacy_keras()
    import tensorflow as tf

    gpus = []
    for index, device in enumerate(tf.config.list_physical_devices("GPU")):
        details = tf.config.experimental.get_device_details(device)
        capability = details.get("compute_capability")
        try:
            growth = tf.config.experimental.get_memory_growth(device)
        except (ValueError, RuntimeError):
            growth = None
        gpus.append(
            GpuInfo(index, details.get("device_name", device.name), tuple(capability) if capability else None, growth)
        )
    return DoctorReport(
        tensorflow_version=tf.__version__,
        build=dict(tf.sysconfig.get_build_info()),
        gpus=gpus,
        cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
        force_gpu_allow_growth=os.environ.get("TF_FORCE_GPU_ALLOW_GROWTH"),
    )


def _capability(gpu: GpuInfo) -> str:
    return "unknown" if gpu.compute_capability is None else "{}.{}".format(*gpu.compute_capability)


def _precision_advice(gpus: Sequence[GpuInfo]) -> str:
    capabilities = [gpu.compute_capability for gpu in gpus]
    if all(c is not None and c >= BFLOAT16_CORES for c in capabilities):
        return "helps: Tensor Cores on every GPU. `mixed_precision: auto` picks float16; bfloat16 also works here."
    if all(c is not None and c >= TENSOR_CORES for c in capabilities):
        return "helps: float16 Tensor Cores on every GPU (`mixed_precision: auto` picks float16)."
    return "would not help: a GPU has compute capability below 7.0 (no Tensor Cores); `auto` keeps float32."


def _no_gpu_message(report: DoctorReport) -> str:
    build = report.build
    built_for = (
        f"TensorFlow {report.tensorflow_version} is built with CUDA {build.get('cuda_version')} and cuDNN "
        f"{build.get('cudnn_version')}"
        if build.get("is_cuda_build")
        else f"TensorFlow {report.tensorflow_version} is a CPU-only build"
    )
    visible = report.cuda_visible_devices
    hint = (
        f" CUDA_VISIBLE_DEVICES={visible!r} hides GPUs: unset it or list GPU indices."
        if visible is not None and not visible.strip(" ,")
        else ""
    )
    return (
        "No GPU is visible to TensorFlow: training would run on the CPU. Expected at least one NVIDIA GPU with "
        f"its driver loaded (`nvidia-smi` lists it). Received: 0 GPUs ({built_for}).{hint} Fix: install the NVIDIA "
        "driver and train in the GPU image (`docker build -f docker/trainer-gpu.Dockerfile -t trainer-gpu .` then "
        "`docker run --gpus all trainer-gpu ...`), or `pip install 'tensorflow[and-cuda]=="
        f"{report.tensorflow_version}'` on a machine with a GPU."
    )


def format_report(report: DoctorReport) -> str:
    """The report as lines of text."""
    build = report.build
    lines = [
        f"TensorFlow {report.tensorflow_version}: CUDA {build.get('cuda_version', 'none')}, "
        f"cuDNN {build.get('cudnn_version', 'none')} (build), kernels for "
        f"{', '.join(build.get('cuda_compute_capabilities', [])) or 'no GPU'}",
        f"CUDA_VISIBLE_DEVICES: {report.cuda_visible_devices if report.cuda_visible_devices is not None else 'unset'}",
    ]
    if not report.gpus:
        lines.append(_no_gpu_message(report))
        lines.append("XLA (`training.xla`): available on CPU too, but it mainly pays off on GPUs.")
        return "\n".join(lines)
    lines.append(f"GPUs: {len(report.gpus)}")
    for gpu in report.gpus:
        lines.append(f"  GPU {gpu.index}: {gpu.name}, compute capability {_capability(gpu)}")
    lines.append(f"Mixed precision: {_precision_advice(report.gpus)}")
    lines.append(
        "XLA (`training.xla: true`): usually helps on GPUs (fuses the step's small ops); check the Trainer's "
        "examples_per_second with and without it."
    )
    growth = {gpu.memory_growth for gpu in report.gpus}
    state = "on" if growth == {True} else "off" if growth == {False} else "mixed/unknown"
    lines.append(
        f"GPU memory growth: {state} in this process (TF_FORCE_GPU_ALLOW_GROWTH="
        f"{report.force_gpu_allow_growth or 'unset'}); the Trainer sets it from `training.gpu_memory_growth` "
        "(default true: memory is taken as needed, not all at start)."
    )
    return "\n".join(lines)


def main(spec_path: Optional[str] = None) -> int:
    """Prints the report, then advice for the model of the spec at `spec_path` if given.

    Args:
      spec_path: a pipeline YAML file (`pipelines.model_advice` advises on its model type); None: none.

    Returns:
      The exit code: 0 GPUs usable, `NO_GPU_EXIT_CODE` none.

    Raises:
      SpecError: the spec is invalid (the CLI prints its problems and exits 2).
    """
    spec = None
    if spec_path is not None:  # checked first: a bad spec stops before anything is printed
        spec = load(spec_path).spec
    report = diagnose()
    print(format_report(report))
    if spec is not None:
        lines = model_advice(spec, [gpu.compute_capability for gpu in report.gpus], [gpu.index for gpu in report.gpus])
        print(f"Model `{spec.model.type}` in {spec_path}:" if lines else f"Model `{spec.model.type}`: no model advice.")
        for line in lines:
            print(f"  {line}")
    return 0 if report.gpus else NO_GPU_EXIT_CODE
