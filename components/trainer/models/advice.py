"""Advice lines that several model types give (`python -m pipelines doctor SPEC`), and the GPU generations
they turn on. Imports no TensorFlow.

`TENSOR_CORES` and `BFLOAT16_CORES` are the compute capabilities from which
float16 and bfloat16 Tensor Cores exist; `pipelines.doctor` reports the
machine with the same thresholds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

__all__ = ["TENSOR_CORES", "BFLOAT16_CORES", "feature_of", "mixed_precision_advice", "xla_advice"]

TENSOR_CORES = (7, 0)  # float16 Tensor Cores: V100, T4, A10, A100, L4, H100
BFLOAT16_CORES = (8, 0)  # bfloat16 Tensor Cores: A100, A10, L4, H100


def feature_of(spec: Any, transform: str) -> Optional[tuple[str, Any]]:
    """The first (name, FeatureSpec) of the spec with this transform; None: none."""
    return next(((name, f) for name, f in spec.features.items() if f.transform == transform), None)


def mixed_precision_advice(spec: Any, capabilities: Sequence[Optional[tuple[int, int]]]) -> str:
    """Whether `training.mixed_precision` pays on GPUs of these compute capabilities, and what to set."""
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


def xla_advice(spec: Any) -> str:
    """Whether to try `training.xla` on GPUs."""
    if spec.training.xla:
        return "XLA is on (`training.xla: true`): compare examples_per_second in the training summary with it off."
    return (
        "Try `training.xla: true`: XLA fuses the small ops around each convolution or attention block; compare "
        "examples_per_second in the training summary with and without it."
    )
