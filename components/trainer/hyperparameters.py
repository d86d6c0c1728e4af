"""The knobs `tuning.search_space` may name, and how tuned values override the spec's options.

Imports no TensorFlow: the spec rules read `KNOBS` to check a search space,
the Tuner's `tuner_fn` declares one hyperparameter per knob, and the
Trainer's `run_fn` applies the best values (TFX's `best_hyperparameters`)
over the `model` and `training` sections of its `custom_config`.

A knob is a `model:` option (used by the model types whose options class has
it) or a `training:` option (used by every type). KerasTuner's `Choice` holds
numbers, strings and booleans only, so a `hidden_units` choice (a list of
layer widths) travels as text: `"128,64"`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal, Optional

__all__ = [
    "KNOBS",
    "REPORTED_METRICS",
    "Knob",
    "choice_value",
    "knob_values",
    "with_hyperparameters",
]


@dataclasses.dataclass(frozen=True)
class Knob:
    """One tunable option.

    Attributes:
      section: `model` or `training`: where the value goes.
      kind: `int` and `float` take a range or choices; `units` (a list of layer widths) and `word` take choices.
      low: the smallest allowed value (numbers).
      high: the largest allowed value (numbers); None: no bound.
      high_open: `high` itself is not allowed (`dropout` < 1).
      low_open: `low` itself is not allowed (`learning_rate` > 0).
      words: the allowed values of a `word` knob.
    """

    section: Literal["model", "training"]
    kind: Literal["int", "float", "units", "word"]
    low: float = 0
    high: Optional[float] = None
    low_open: bool = False
    high_open: bool = False
    words: tuple[str, ...] = ()

    def problem(self, value: Any) -> Optional[str]:
        """Why `value` cannot be this knob's value (expected, received), or None when it can."""
        if self.kind == "word":
            if value not in self.words:
                return f"expected one of {', '.join(self.words)}. Received: {value!r}"
            return None
        if self.kind == "units":
            if not isinstance(value, (list, tuple)) or not value or not all(_is_int(v) and v >= 1 for v in value):
                return f"expected a list of layer widths, each at least 1, e.g. [128, 64]. Received: {value!r}"
            return None
        number_ok = _is_int(value) if self.kind == "int" else _is_number(value)
        if not number_ok:
            return f"expected {'a whole number' if self.kind == 'int' else 'a number'}. Received: {value!r}"
        if value < self.low or (self.low_open and value == self.low):
            return f"expected {'above' if self.low_open else 'at least'} {self.low}. Received: {value}"
        if self.high is not None and (value > self.high or (self.high_open and value == self.high)):
            return f"expected {'below' if self.high_open else 'at most'} {self.high}. Received: {value}"
        return None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# The limits match the spec's own checks of these options (`TrainingSpec`, `ModelOptions`, `rules.rule_model`).
KNOBS: Mapping[str, Knob] = {
    "learning_rate": Knob("training", "float", low=0, low_open=True, high=10),
    "batch_size": Knob("training", "int", low=1, high=65_536),
    "optimizer": Knob("training", "word", words=("adam", "sgd", "rmsprop", "adagrad")),
    "warmup_steps": Knob("training", "int", low=0),
    "hidden_units": Knob("model", "units"),
    "embedding_dim": Knob("model", "int", low=1, high=4096),
    "dropout": Knob("model", "float", low=0, high=1, high_open=True),
    "num_layers": Knob("model", "int", low=1, high=64),
    "num_heads": Knob("model", "int", low=1, high=64),
    "encoder": Knob("model", "word", words=("transformer", "bag_of_embeddings")),
    "backbone": Knob("model", "word", words=("ResNet50", "EfficientNetB0", "MobileNetV2")),
    "frozen_layers": Knob("model", "int", low=0),
}


# The metrics Keras reports while the built-in model trains (`run_fn.keras_metrics`): a trial's objective is one.
# `accuracy` is the only one of a label with three or more classes.
REPORTED_METRICS = frozenset(
    {
        "accuracy",
        "binary_accuracy",
        "auc",
        "precision",
        "recall",
        "mean_squared_error",
        "mean_absolute_error",
        "root_mean_squared_error",
    }
)


def choice_value(name: str, value: Any) -> Any:
    """A `choices` entry as KerasTuner's `Choice` holds it (`hidden_units` lists as `"128,64"` text)."""
    if KNOBS[name].kind == "units":
        return ",".join(str(int(v)) for v in value)
    return value


def knob_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """The knob values among a KerasTuner `HyperParameters.values` mapping, decoded (`"128,64"` -> [128, 64]).

    KerasTuner's own entries (Hyperband's `tuner/epochs`, ...) are left out.
    """
    decoded = {}
    for name, value in values.items():
        if name not in KNOBS:
            continue
        if KNOBS[name].kind == "units":
            value = [int(part) for part in str(value).split(",")]
        decoded[name] = value
    return decoded


def with_hyperparameters(custom_config: Mapping[str, Any], hyperparameters: Optional[Mapping[str, Any]]) -> dict:
    """The Trainer's `custom_config` with tuned values over its `model` and `training` sections.

    Args:
      custom_config: the built-in Trainer's config (`model`, `training`, ...).
      hyperparameters: KerasTuner's `HyperParameters.get_config()` (TFX's `fn_args.hyperparameters`: a mapping
        with `values`), or a plain `{knob: value}` mapping; None: the config unchanged.

    Returns:
      A new config; the sections it overrides are copies.
    """
    if not hyperparameters:
        return dict(custom_config)
    values = hyperparameters.get("values", hyperparameters)
    tuned = knob_values(values)
    updated = dict(custom_config)
    for section in ("model", "training"):
        overrides = {name: value for name, value in tuned.items() if KNOBS[name].section == section}
        if overrides:
            updated[section] = {**custom_config.get(section, {}), **overrides}
    return updated
