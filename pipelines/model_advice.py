"""`python -m pipelines doctor SPEC`: advice for the spec's model type on this machine.

Each model type owns its advice (its registry entry's `advice`,
`components.trainer.models.registry`): `image_classifier` on the cost of a
step on the CPU and how to make it cheaper, mixed precision, XLA and decoding
on GPUs, and the memory a step needs; `text_classifier` on the Transformer's
sequence_length^2 attention against the `bag_of_embeddings` baseline; `dnn`
and `wide_and_deep` have none (the machine report says it all).

Example:
    >>> lines = model_advice(load("pipelines/examples/digits.yaml").spec, capabilities=[])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from components.trainer.models.image_classifier.advice import BACKBONE_MULTIPLY_ADDS
from components.trainer.models.registry import model_type
from pipelines.spec.models import PipelineSpec

__all__ = ["model_advice", "BACKBONE_MULTIPLY_ADDS"]


def model_advice(
    spec: PipelineSpec, capabilities: Sequence[Optional[tuple[int, int]]], gpus: Sequence[int] = ()
) -> list[str]:
    """Advice lines for the spec's model type on GPUs with these compute capabilities.

    Args:
      spec: the checked spec.
      capabilities: one (major, minor) per visible GPU (None when unknown); empty on the CPU.
      gpus: the GPUs' TensorFlow indices (for their memory); default: none.

    Returns:
      The lines, the first naming the model type; none for a user `build_model` or a type without advice.
    """
    if spec.model.build_model:
        return []
    advice = model_type(spec.model.type).advice
    return advice(spec, capabilities, gpus) if advice else []
