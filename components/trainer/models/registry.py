"""The built-in model types, by `model.type` name. Imports no TensorFlow.

A model type is one package under `components/trainer/models/<type>/`: its
`__init__.py` (no TensorFlow) declares the options dataclass, the spec rules,
the feature kind it encodes and the doctor's advice in a `MODEL_TYPE`
(`components.trainer.models.base.ModelType`); `builder.py` builds the Keras
model. Adding a type is that package and one line in `MODEL_TYPES` below
(docs/architecture.md, "Adding a model type").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.trainer.models import dnn, image_classifier, text_classifier, wide_and_deep
from components.trainer.models.base import DEFAULT_MODEL_TYPE, ModelOptions, ModelType

__all__ = ["DEFAULT_MODEL_TYPE", "MODEL_TYPES", "OPTION_CLASSES", "model_type", "options_from_dict", "type_for_media"]

# One line per type; the order is the order error messages list them in.
MODEL_TYPES: dict[str, ModelType] = {
    t.name: t
    for t in (
        dnn.MODEL_TYPE,
        wide_and_deep.MODEL_TYPE,
        image_classifier.MODEL_TYPE,
        text_classifier.MODEL_TYPE,
    )
}


class _OptionClasses(Mapping[str, type[ModelOptions]]):
    """Each registered type's options class by name, read from `MODEL_TYPES` on every access (the spec's
    `model:` section is typed with it, so a type registered after import is typed too)."""

    def __getitem__(self, name: str) -> type[ModelOptions]:
        return MODEL_TYPES[name].options

    def __iter__(self) -> Iterator[str]:
        return iter(MODEL_TYPES)

    def __len__(self) -> int:
        return len(MODEL_TYPES)


OPTION_CLASSES: Mapping[str, type[ModelOptions]] = _OptionClasses()


def model_type(name: str) -> ModelType:
    """The registered type called `name`.

    Raises:
      ValueError: no such type; the message lists the registered ones.
    """
    try:
        return MODEL_TYPES[name]
    except KeyError:
        known = ", ".join(f"`{n}`" for n in MODEL_TYPES)
        raise ValueError(
            f"`model.type: {name}` is not a model type. Expected one of {known}. Received: `{name}`. "
            "Fix `model.type`, or write `model.build_model` for a model of your own."
        ) from None


def type_for_media(media: str) -> str:
    """The name of the (first registered) type that encodes a feature of this transform (`image`, `text`)."""
    return next(name for name, kind in MODEL_TYPES.items() if kind.media == media)


def options_from_dict(section: Mapping[str, Any]) -> ModelOptions:
    """The `model:` section as its type's options dataclass, defaults filled in from that one class.

    Args:
      section: the section as a mapping (the Trainer's `custom_config["model"]`); no `type`: the default type.

    Raises:
      ValueError: an unknown type, or a key that type does not have.
    """
    kind = model_type(section.get("type", DEFAULT_MODEL_TYPE))
    fields = {f.name for f in kind.options.__dataclass_fields__.values() if f.init}
    unknown = sorted(set(section) - fields)
    if unknown:
        raise ValueError(
            f"`model.type: {kind.name}` has no option `{unknown[0]}`. Expected some of: "
            f"{', '.join(f'`{n}`' for n in sorted(fields))}. Received: {', '.join(f'`{n}`' for n in unknown)}. "
            "Remove it."
        )
    return kind.options(**dict(section))
