"""The `tuning:` section: a hyperparameter search (TFX's Tuner with KerasTuner) before the Trainer.

Example:

    tuning:
      algorithm: random          # random | bayesian | hyperband
      max_trials: 4
      objective: auc             # a declared metric, or `loss`
      train_steps: 200           # per trial (default: training.train_steps)
      search_space:
        learning_rate: {min: 0.0001, max: 0.01, sampling: log}
        hidden_units: {choices: [[64, 32], [128, 64]]}
        dropout: {min: 0.0, max: 0.5, step: 0.1}

A knob is a range (`min`, `max`, optional `step`, `sampling: linear | log`)
or a list of `choices`; `pipelines.spec.tuning_rules` checks the knobs
against the model type (`components.trainer.hyperparameters.KNOBS`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, Optional

from pipelines.spec.limits import check_finite

__all__ = ["ALGORITHMS", "KnobSpace", "TuningSpec"]

ALGORITHMS = ("random", "bayesian", "hyperband")


@dataclasses.dataclass(frozen=True)
class KnobSpace:
    """The values one knob may take: a range (`min`, `max`, `step`, `sampling`) or `choices`."""

    min: Optional[float] = None
    max: Optional[float] = None
    step: Optional[float] = None
    sampling: Literal["linear", "log"] = "linear"
    choices: Optional[list[Any]] = None

    def __post_init__(self):
        ranged = self.min is not None or self.max is not None
        if self.choices is not None:
            if ranged or self.step is not None:
                raise ValueError(
                    "a knob is a range or a list of choices, not both. Received: `choices` with `min`/`max`/`step`. "
                    "Keep one, e.g. `{choices: [32, 64]}` or `{min: 32, max: 64}`."
                )
            if not self.choices:
                raise ValueError("`choices` is empty. Expected at least one value. Example: `{choices: [32, 64]}`.")
            return
        if self.min is None or self.max is None:
            raise ValueError(
                f"a range needs both `min` and `max`. Received: min={self.min}, max={self.max}. "
                "Example: `{min: 0.0001, max: 0.01, sampling: log}`, or `{choices: [...]}`."
            )
        check_finite({"min": self.min, "max": self.max, "step": self.step})
        if self.min >= self.max:
            raise ValueError(
                f"`min` must be below `max`. Received: min={self.min}, max={self.max}. "
                "Swap them, or use `{choices: [value]}` for a single value."
            )
        if self.step is not None and self.step <= 0:
            raise ValueError(f"`step` must be above 0. Received: step={self.step}.")
        if self.sampling == "log" and self.min <= 0:
            raise ValueError(
                f"`sampling: log` needs `min` above 0. Received: min={self.min}. Raise `min`, or use "
                "`sampling: linear`."
            )

    @property
    def values(self) -> list[Any]:
        """The bounds or choices, for checking each against the knob."""
        return list(self.choices) if self.choices is not None else [self.min, self.max]


@dataclasses.dataclass(frozen=True)
class TuningSpec:
    """A hyperparameter search before the Trainer; the best values train the model.

    `algorithm`: KerasTuner's `random` search, `bayesian` optimization or
    `hyperband`. `max_trials`: how many hyperparameter sets are tried.
    `objective`: a metric of `evaluation.metrics` that Keras reports while
    training (scored on the eval split), or `loss`; the direction follows the
    metric (losses and errors down, the others up). `train_steps`: steps per
    trial (null: `training.train_steps`); hyperband splits them into
    `max_epochs` rounds. `parallel_trials`: trials run at once, each in a
    worker process (KerasTuner's distributed mode: a chief oracle and workers
    on 127.0.0.1), at most one per core; 1: one after another in the Tuner's
    process. `search_space`: knob -> range or choices
    (`KnobSpace`). With `training.module_file`, TFX's Tuner calls that
    file's own `tuner_fn`, which defines its own search space.
    """

    search_space: dict[str, KnobSpace] = dataclasses.field(default_factory=dict)
    algorithm: Literal["random", "bayesian", "hyperband"] = "random"
    max_trials: int = 10
    objective: str = "loss"
    train_steps: Optional[int] = None
    max_epochs: int = 3
    seed: int = 0
    parallel_trials: int = 1

    def __post_init__(self):
        if self.max_trials < 1:
            raise ValueError(
                f"`max_trials` must be at least 1. Received: max_trials={self.max_trials}. Example: `max_trials: 10`."
            )
        if self.train_steps is not None and self.train_steps < 1:
            raise ValueError(
                f"`train_steps` must be at least 1. Received: train_steps={self.train_steps}. "
                "Write `train_steps: null` to train each trial for `training.train_steps`."
            )
        if self.parallel_trials < 1:
            raise ValueError(
                f"`parallel_trials` must be at least 1. Received: parallel_trials={self.parallel_trials}. "
                "Example: `parallel_trials: 2` (one trial per worker process, at most one per core)."
            )
        if self.max_epochs < 1:
            raise ValueError(f"`max_epochs` must be at least 1. Received: max_epochs={self.max_epochs}.")
