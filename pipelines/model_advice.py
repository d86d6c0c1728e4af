"""`python -m pipelines doctor SPEC`: advice for the spec's model type on this machine.

- `image_classifier`: on the CPU, what a step costs and how to make it cheaper
  (a smaller `image_size`, `backbone: MobileNetV2`, frozen layers when weights
  are given); on GPUs, mixed precision (compute capability 7.0 or more), XLA,
  and whether decoding JPEG/PNG can keep up; the memory a step needs at the
  spec's batch (`components.trainer.accelerator_memory`).
- `text_classifier`: a Transformer's attention grows with sequence_length
  squared; `bag_of_embeddings` is the linear-cost baseline.
- `dnn`, `wide_and_deep`: no model lines; the machine report says it all.

Example:
    >>> lines = model_advice(load("pipelines/examples/digits.yaml").spec, capabilities=[])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from pipelines.doctor import BFLOAT16_CORES, TENSOR_CORES
from pipelines.spec.models import FeatureSpec, PipelineSpec

__all__ = ["model_advice", "BACKBONE_MULTIPLY_ADDS"]

# Multiply-adds of one forward pass at 224x224, in billions (He et al. 2015; Sandler et al. 2018; Tan & Le 2019).
BACKBONE_MULTIPLY_ADDS = {"ResNet50": 3.8, "EfficientNetB0": 0.39, "MobileNetV2": 0.30}
_SMALL_IMAGE = 96 * 96


def _feature(spec: PipelineSpec, transform: str) -> Optional[tuple[str, FeatureSpec]]:
    return next(((name, f) for name, f in spec.features.items() if f.transform == transform), None)


def _mixed_precision(spec: PipelineSpec, capabilities: Sequence[Optional[tuple[int, int]]]) -> str:
    mode = spec.training.mixed_precision
    low = [c for c in capabilities if c is None or c < TENSOR_CORES]
    if low:
        shown = "unknown" if low[0] is None else "{}.{}".format(*low[0])
        return (
            f"Mixed precision does not pay here: a GPU has compute capability {shown} (below 7.0, no Tensor Cores); "
            + (
                "`mixed_precision: auto` keeps float32."
                if mode == "auto"
                else f"set `mixed_precision: auto` (now {mode})."
            )
        )
    if mode == "off":
        return (
            "Set `training.mixed_precision: auto`: every GPU has compute capability 7.0 or more, so float16 Tensor "
            "Cores run the convolutions and matrix products several times faster and activations take half the memory."
        )
    if mode == "bfloat16" and any(c < BFLOAT16_CORES for c in capabilities):
        return (
            "`mixed_precision: bfloat16` needs compute capability 8.0 or more (Ampere, Hopper) for Tensor Cores; "
            "these GPUs have float16 ones: set `mixed_precision: auto` (float16)."
        )
    return f"Mixed precision pays here (compute capability 7.0 or more): `mixed_precision: {mode}` uses it."


def _xla(spec: PipelineSpec) -> str:
    if spec.training.xla:
        return "XLA is on (`training.xla: true`): compare examples_per_second in the training summary with it off."
    return (
        "Try `training.xla: true`: XLA fuses the small ops around each convolution or attention block; compare "
        "examples_per_second in the training summary with and without it."
    )


def _memory(spec: PipelineSpec, size: list[int], gpus: Sequence[int], capabilities) -> str:
    """The accelerator memory estimate of the backbone at the spec's image size, batch and precision."""
    from components import ensure_legacy_keras

    ensure_legacy_keras()
    import tensorflow as tf

    from components.trainer import accelerator_memory, precision

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


def _image_advice(spec: PipelineSpec, capabilities, gpus: Sequence[int]) -> list[str]:
    found = _feature(spec, "image")
    if found is None:
        return []
    name, feature = found
    height, width = feature.image_size
    model = spec.model
    billions = BACKBONE_MULTIPLY_ADDS[model.backbone] * height * width / (224 * 224)
    lines = []
    if not capabilities:
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
        lines.append(
            f"image_classifier on the CPU is slow: {model.backbone} at {height}x{width} is about {billions:.2f} "
            "billion multiply-adds per image forward, about 3x that to train."
            + (f" Cheaper: {'; '.join(fixes)}." if fixes else "")
        )
        if spec.training.xla:
            lines.append(
                "`training.xla: true` on the CPU slows a backbone down: MobileNetV2 at 64x64 trained at 16 "
                "images/s with XLA against 288 without (benchmarks/trainer_images.py, 2026-11-26, 2 cores). Set "
                "`training.xla: false` to train on the CPU; keep it for GPUs."
            )
    else:
        lines.append(
            f"image_classifier on {len(capabilities)} GPU(s): {model.backbone} at {height}x{width} is about "
            f"{billions:.2f} billion multiply-adds per image forward, about 3x that to train."
        )
        lines += [_mixed_precision(spec, capabilities), _xla(spec)]
        where = (
            "once, in Transform (`transform.materialize: true`: the Trainer reads decoded pixels)"
            if spec.transform.materialize
            else "on every batch in the Trainer's tf.data pipeline (Transform's graph)"
        )
        lines.append(
            f"Input: JPEG/PNG images are decoded and resized on the CPU {where}; a GPU step of {model.backbone} is "
            "fast, so decoding must keep up. Watch `input_wait_fraction` in the training summary (the Trainer warns "
            "above 10%); `benchmarks/trainer_images.py` measures the input pipeline's headroom."
        )
    if model.weights is None:
        lines.append(
            "`model.weights: null` trains the backbone from scratch, which needs many images; a local weights "
            f"file (`weights: path/to/{model.backbone}.h5`) with `frozen_layers` fine-tunes in fewer steps."
        )
    lines.append(_memory(spec, feature.image_size, gpus, capabilities))
    return lines


def _text_advice(spec: PipelineSpec, capabilities) -> list[str]:
    found = _feature(spec, "text")
    if found is None:
        return []
    name, feature = found
    length, model, batch = feature.sequence_length, spec.model, spec.training.batch_size
    if model.encoder == "bag_of_embeddings":
        lines = [
            f"text_classifier (bag_of_embeddings): cost grows linearly with `features.{name}.sequence_length` "
            f"({length}); a fast baseline. `encoder: transformer` learns word order at a sequence_length^2 cost."
        ]
    else:
        scores = model.num_layers * model.num_heads * length * length
        mebibytes = scores * 2 * 4 * batch / 2**20  # scores and probabilities, float32
        lines = [
            f"text_classifier (transformer): attention grows with sequence_length^2: {model.num_layers} layer(s) x "
            f"{model.num_heads} head(s) x {length}x{length} scores per example, about {mebibytes:,.1f} MiB at batch "
            f"{batch}; `features.{name}.sequence_length: {max(length // 2, 1)}` would quarter it. Pick the length "
            "most rows fit in.",
            "Baseline: `model.encoder: bag_of_embeddings` (the mean of the word embeddings) costs linear in "
            "sequence_length; train it first: the Transformer should beat it.",
        ]
    if capabilities:
        lines += [_mixed_precision(spec, capabilities), _xla(spec)]
    return lines


def model_advice(
    spec: PipelineSpec, capabilities: Sequence[Optional[tuple[int, int]]], gpus: Sequence[int] = ()
) -> list[str]:
    """Advice lines for the spec's model type on GPUs with these compute capabilities.

    Args:
      spec: the checked spec.
      capabilities: one (major, minor) per visible GPU (None when unknown); empty on the CPU.
      gpus: the GPUs' TensorFlow indices (for their memory); default: none.

    Returns:
      The lines, the first naming the model type; none for `dnn` and `wide_and_deep`.
    """
    if spec.model.build_model:
        return []
    if spec.model.type == "image_classifier":
        return _image_advice(spec, capabilities, gpus)
    if spec.model.type == "text_classifier":
        return _text_advice(spec, capabilities)
    return []
