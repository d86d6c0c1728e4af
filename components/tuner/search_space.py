"""The `tuning.search_space` section as KerasTuner hyperparameters. Imports no TensorFlow."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.trainer.hyperparameters import KNOBS, choice_value

__all__ = ["declare_knobs"]


def declare_knobs(hp, search_space: Mapping[str, Mapping[str, Any]]) -> None:
    """Declares one KerasTuner hyperparameter per knob on `hp` (a `keras_tuner.HyperParameters`).

    Args:
      hp: the tuner's hyperparameters.
      search_space: knob -> `{choices}` or `{min, max, step, sampling}` (the spec's `KnobSpace` as a dict).

    A range of an `int` knob becomes `hp.Int`, of a `float` knob `hp.Float`; `choices` become `hp.Choice`
    (`hidden_units` lists as `"128,64"` text, which `hyperparameters.knob_values` decodes).
    """
    for name, space in search_space.items():
        if space.get("choices") is not None:
            hp.Choice(name, [choice_value(name, value) for value in space["choices"]])
        elif KNOBS[name].kind == "int":
            step = int(space["step"]) if space.get("step") else None
            hp.Int(name, int(space["min"]), int(space["max"]), step=step, sampling=space.get("sampling", "linear"))
        else:
            hp.Float(name, space["min"], space["max"], step=space.get("step"), sampling=space.get("sampling", "linear"))
