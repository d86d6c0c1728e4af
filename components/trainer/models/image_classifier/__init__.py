"""`model.type: image_classifier`: a Keras Applications backbone over one `image` feature, and a dense head.

Options (`ImageClassifierOptions`): `backbone` (ResNet50, EfficientNetB0,
MobileNetV2); `weights`, a local weights file (`.h5`) of the backbone without
its top, or null for random initialisation; `frozen_layers`, the backbone's
first that many layers frozen (`all`: the whole backbone, only the head
trains); `augment`, training-only augmentations (`flip`, `rotate`, `zoom`,
`contrast`). The builder is `builder.py`, the doctor's advice `advice.py`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any, Literal, Optional, Union

from components.trainer.models.base import ModelOptions, ModelType
from components.trainer.models.image_classifier.advice import image_advice

__all__ = ["BACKBONE_NAMES", "ImageClassifierOptions", "MODEL_TYPE", "rule_augment_with_xla"]

BACKBONE_NAMES: tuple[str, ...] = ("ResNet50", "EfficientNetB0", "MobileNetV2")
# Augmentations whose TensorFlow ops XLA cannot compile (ImageProjectiveTransformV3 on TF 2.16).
_NOT_XLA = ("rotate", "zoom")


@dataclasses.dataclass(frozen=True)
class ImageClassifierOptions(ModelOptions):
    """The shared options (`ModelOptions`) and the backbone's."""

    type: str = "image_classifier"
    backbone: Literal["ResNet50", "EfficientNetB0", "MobileNetV2"] = "MobileNetV2"
    weights: Optional[str] = None
    frozen_layers: Union[int, Literal["all"]] = 0
    augment: list[Literal["flip", "rotate", "zoom", "contrast"]] = dataclasses.field(default_factory=list)

    def __post_init__(self):
        super().__post_init__()
        if isinstance(self.frozen_layers, int) and self.frozen_layers < 0:
            raise ValueError(
                f"`frozen_layers` must be 0 or more, or `all`. Received: frozen_layers={self.frozen_layers}."
            )


def rule_augment_with_xla(ctx: Any) -> Iterator[Any]:
    """`training.xla` compiles the train step, augmentation layers included: rotate and zoom do not compile."""
    if not ctx.spec.training.xla:
        return
    found = [name for name in ctx.spec.model.augment if name in _NOT_XLA]
    if found:
        yield ctx.problem(
            "model.augment",
            f"XLA cannot compile the `{'`, `'.join(found)}` augmentation (TensorFlow's image transform op has no "
            "XLA kernel), and `training.xla: true` compiles the whole train step. Expected with XLA: `flip`, "
            f"`contrast`. Received: augment={list(ctx.spec.model.augment)}. Remove `{found[0]}`, or set "
            "`training.xla: false`.",
        )


MODEL_TYPE = ModelType(
    name="image_classifier",
    options=ImageClassifierOptions,
    builder="components.trainer.models.image_classifier.builder:build",
    media="image",
    rules=(rule_augment_with_xla,),
    advice=image_advice,
)
