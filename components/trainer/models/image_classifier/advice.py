"""`doctor` advice for `image_classifier`: what a step costs on the CPU and how to make it cheaper; on GPUs,
mixed precision, XLA and whether decoding keeps up; the accelerator memory a step needs.

Imports no TensorFlow until the memory estimate builds the backbone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from components import ensure_legacy_keras
from components.trainer.models.advice import feature_of, mixed_precision_advice, xla_advice

__all__ = ["BACKBONE_MULTIPLY_ADDS", "image_advice"]

# Multiply-adds of one forward pass at 224x224, in billions (He et al. 2015; Sandler et al. 2018; Tan & Le 2019).
BACKBONE_MULTIPLY_ADDS = {"ResNet50": 3.8, "EfficientNetB0": 0.39, "MobileNetV2": 0.30}
_SMALL_IMAGE = 96 * 96


def _memory(spec: Any, size: list[int], gpus: Sequence[int], capabilities) -> str:
    """The accelerator memory estimate of the backbone at the spec's image size, batch and precision."""
    # TensorFlow only here: `doctor` on a spec without an image model never loads it.

    ensure_legacy_keras()
    import tensorflow as tf

    from components.trainer.devices import accelerator_memory, precision

    policy = precision.choose_policy(spec.training.mixed_precision, list(capabilities))
    with precision.policy_scope(policy):
        backbone = getattr(tf.keras.applications, spec.model.backbone)(
            weights=None, include_top=False, input_shape=(size[0], size[1], 3), pooling="avg"
        )
    estimate = accelerator_memory.estimate(
        backbone, spec.training.batch_size, spec.training.optimizer, spec.training.gradient_accumulation_steps
    )
    message, _ = accelerator_memory.describe(
        estimate, accelerator_memory.device_memory(list(gpus)), on_gpu=bool(capabilities)
    )
    return f"Memory ({spec.model.backbone} at {size[0]}x{size[1]}, {policy}): " + message.removeprefix("Trainer: ")


def _cpu_lines(spec: Any, name: str, height: int, width: int, billions: float) -> list[str]:
    model = spec.model
    fixes = []
    if height * width > _SMALL_IMAGE:
        fixes.append(
            f"a smaller `features.{name}.image_size` (cost follows the pixels: [{height // 2}, {width // 2}] "
            "is 4x cheaper)"
        )
    if model.backbone != "MobileNetV2":
        ratio = BACKBONE_MULTIPLY_ADDS[model.backbone] / BACKBONE_MULTIPLY_ADDS["MobileNetV2"]
        fixes.append(f"`model.backbone: MobileNetV2` ({ratio:.0f}x fewer multiply-adds than {model.backbone})")
    if model.weights and model.frozen_layers == 0:
        fixes.append("`model.frozen_layers: all` (only the head trains: no backbone gradients, up to 3x cheaper)")
    lines = [
        f"image_classifier on the CPU is slow: {model.backbone} at {height}x{width} is about {billions:.2f} "
        "billion multiply-adds per image forward, about 3x that to train."
        + (f" Cheaper: {'; '.join(fixes)}." if fixes else "")
    ]
    if spec.training.xla:
        lines.append(
            "`training.xla: true` on the CPU slows a backbone down: MobileNetV2 at 64x64 trained at 16 "
            "images/s with XLA against 288 without (benchmarks/trainer_images.py, 2026-11-26, 2 cores). Set "
            "`training.xla: false` to train on the CPU; keep it for GPUs."
        )
    return lines


def _gpu_lines(spec: Any, capabilities, height: int, width: int, billions: float) -> list[str]:
    backbone = spec.model.backbone
    where = (
        "once, in Transform (`transform.materialize: true`: the Trainer reads decoded pixels)"
        if spec.transform.materialize
        else "on every batch in the Trainer's tf.data pipeline (Transform's graph)"
    )
    return [
        f"image_classifier on {len(capabilities)} GPU(s): {backbone} at {height}x{width} is about "
        f"{billions:.2f} billion multiply-adds per image forward, about 3x that to train.",
        mixed_precision_advice(spec, capabilities),
        xla_advice(spec),
        f"Input: JPEG/PNG images are decoded and resized on the CPU {where}; a GPU step of {backbone} is "
        "fast, so decoding must keep up. Watch `input_wait_fraction` in the training summary (the Trainer warns "
        "above 10%); `benchmarks/trainer_images.py` measures the input pipeline's headroom.",
    ]


def image_advice(spec: Any, capabilities: Sequence, gpus: Sequence[int] = ()) -> list[str]:
    """The advice lines for the spec's image model; none without an `image` feature."""
    found = feature_of(spec, "image")
    if found is None:
        return []
    name, feature = found
    height, width = feature.image_size
    model = spec.model
    billions = BACKBONE_MULTIPLY_ADDS[model.backbone] * height * width / (224 * 224)
    if capabilities:
        lines = _gpu_lines(spec, capabilities, height, width, billions)
    else:
        lines = _cpu_lines(spec, name, height, width, billions)
    if model.weights is None:
        lines.append(
            "`model.weights: null` trains the backbone from scratch, which needs many images; a local weights "
            f"file (`weights: path/to/{model.backbone}.h5`) with `frozen_layers` fine-tunes in fewer steps."
        )
    lines.append(_memory(spec, feature.image_size, gpus, capabilities))
    return lines
