"""The model type registry: each type declares its options, builder, rules and advice, and one
registration line adds a type to the spec, its checks and the Trainer."""

from __future__ import annotations

import dataclasses
import importlib
import textwrap

import pytest
import tensorflow as tf

from components.trainer.models.base import ModelOptions, ModelType
from components.trainer.models.model_builder import build_model
from components.trainer.models.registry import MODEL_TYPES, options_from_dict
from components.trainer.models.text_classifier import TextClassifierOptions
from components.transform.config import TransformConfig
from pipelines.spec import SpecError, typed_spec

CONFIG = TransformConfig(
    features={"fare": {"transform": "zscore"}, "hour": {"transform": "categorical", "num_buckets": 24}},
    label_name="big_tipper",
    task="classification",
    label_expression="tips > 0.2 * fare",
)


@pytest.mark.parametrize("name", list(MODEL_TYPES))
def test_every_type_declares_its_options_and_a_builder_that_imports(name):
    kind = MODEL_TYPES[name]
    assert issubclass(kind.options, ModelOptions)
    assert kind.options().type == name  # `type` left out of the YAML: the class's own name
    module_name, function_name = kind.builder.split(":")
    assert callable(getattr(importlib.import_module(module_name), function_name))


def test_the_trainer_fills_defaults_from_the_types_options_class():
    assert options_from_dict({"type": "text_classifier"}) == TextClassifierOptions()
    assert options_from_dict({}).type == "wide_and_deep"
    with pytest.raises(ValueError, match="`model.type: dnn` has no option `encoder`"):
        options_from_dict({"type": "dnn", "encoder": "transformer"})
    with pytest.raises(ValueError, match="`model.type: cnn` is not a model type. Expected one of `dnn`"):
        options_from_dict({"type": "cnn"})


LINEAR_TYPE = """
import dataclasses
from components.trainer.models.base import ModelOptions, ModelType


@dataclasses.dataclass(frozen=True)
class LinearOptions(ModelOptions):
    type: str = "linear"
    clip: float = 1.0

    def __post_init__(self):
        super().__post_init__()
        if self.clip <= 0:
            raise ValueError(f"`clip` must be above 0. Received: clip={self.clip}.")


def build(inputs_used, inputs, options):
    import tensorflow as tf
    from components.trainer.models.tower import table_parts

    table = table_parts(inputs_used, inputs, options.embedding_dim)
    joined = tf.keras.layers.concatenate(table.numeric + table.wide)
    return tf.keras.layers.Lambda(lambda x: tf.clip_by_value(x, -options.clip, options.clip), name="clip")(joined)


MODEL_TYPE = ModelType(name="linear", options=LinearOptions, builder="linear_type:build")
"""

SPEC = """
pipeline: {{name: linear}}
data: {{path: rows.csv}}
features: {{fare: {{transform: zscore}}, hour: {{transform: categorical, num_buckets: 24}}}}
label: {{name: big_tipper, expression: tips > 0.2 * fare}}
model: {model}
"""


def test_a_type_in_its_own_module_and_one_registration_line_is_typed_checked_and_built(tmp_path, monkeypatch):
    (tmp_path / "linear_type.py").write_text(textwrap.dedent(LINEAR_TYPE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    linear = importlib.import_module("linear_type")
    monkeypatch.setitem(MODEL_TYPES, "linear", linear.MODEL_TYPE)  # the one registration line

    spec, _ = typed_spec(SPEC.format(model="{type: linear, clip: 2.5}"))
    assert spec.model == linear.LinearOptions(clip=2.5)
    with pytest.raises(SpecError) as raised:
        typed_spec(SPEC.format(model="{type: linear, clips: 2}"))
    assert "unknown key `clips`. Did you mean `clip`?" in str(raised.value)
    with pytest.raises(SpecError, match="`clip` must be above 0"):
        typed_spec(SPEC.format(model="{type: linear, clip: 0}"))

    model = build_model(CONFIG, dataclasses.asdict(spec.model), {})
    assert model.get_layer("clip").output_shape == (None, 1 + 24)  # fare, and hour one-hot
    assert not [layer for layer in model.layers if isinstance(layer, tf.keras.layers.Dense)][:-1]
    assert isinstance(MODEL_TYPES["linear"], ModelType)
