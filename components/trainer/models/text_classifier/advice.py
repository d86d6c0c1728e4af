"""`doctor` advice for `text_classifier`: a Transformer's attention grows with sequence_length squared;
`bag_of_embeddings` is the linear-cost baseline. Imports no TensorFlow."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from components.trainer.models.advice import feature_of, mixed_precision_advice, xla_advice

__all__ = ["text_advice"]


def text_advice(spec: Any, capabilities: Sequence, gpus: Sequence[int] = ()) -> list[str]:
    """The advice lines for the spec's text model; none without a `text` feature."""
    found = feature_of(spec, "text")
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
        lines += [mixed_precision_advice(spec, capabilities), xla_advice(spec)]
    return lines
