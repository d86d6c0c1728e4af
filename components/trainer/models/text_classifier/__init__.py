"""`model.type: text_classifier`: word ids of one `text` feature through an encoder, then the dense head.

Options (`TextClassifierOptions`): `encoder: transformer` (a small Transformer
encoder of `num_layers` blocks with `num_heads` attention heads and
`embedding_dim` wide tokens) or `bag_of_embeddings` (the mean of the word
embeddings). The builder is `builder.py`, the doctor's advice `advice.py`.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from components.trainer.models.base import ModelOptions, ModelType
from components.trainer.models.text_classifier.advice import text_advice

__all__ = ["TextClassifierOptions", "MODEL_TYPE"]


@dataclasses.dataclass(frozen=True)
class TextClassifierOptions(ModelOptions):
    """The shared options (`ModelOptions`) and the encoder's."""

    type: str = "text_classifier"
    encoder: Literal["transformer", "bag_of_embeddings"] = "transformer"
    num_layers: int = 2
    num_heads: int = 2

    def __post_init__(self):
        super().__post_init__()
        for name in ("num_layers", "num_heads"):  # embedding_dim: `pipelines/spec/model_rules.py`
            if getattr(self, name) < 1:
                raise ValueError(f"`{name}` must be at least 1. Received: {name}={getattr(self, name)}.")


MODEL_TYPE = ModelType(
    name="text_classifier",
    options=TextClassifierOptions,
    builder="components.trainer.models.text_classifier.builder:build",
    media="text",
    advice=text_advice,
)
