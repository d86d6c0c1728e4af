"""Sane ranges for the numbers in a spec, checked before anything runs.

A value outside these ranges is almost always a typo (`batch_size: 1000000000000`)
or a YAML surprise (`.nan`, `.inf`), and would otherwise fail deep inside
TensorFlow minutes later, or run for days.
"""

from __future__ import annotations

import math

__all__ = ["UPPER_BOUNDS", "MAX_SPLIT_WEIGHT", "check_upper_bounds", "check_finite"]

# Split weights are relative shares (`{train: 2, eval: 1}`).
MAX_SPLIT_WEIGHT = 1000

# Largest accepted value of each whole-number training setting, and why.
UPPER_BOUNDS: dict[str, tuple[int, str]] = {
    "train_steps": (1_000_000_000, "a billion steps"),
    "epochs": (100_000, "100,000 epochs"),
    "eval_steps": (1_000_000_000, "a billion steps"),
    "batch_size": (1_048_576, "2^20 examples per replica"),
    "steps_per_execution": (1_000_000, "a million steps per call"),
    "gradient_accumulation_steps": (65_536, "65,536 micro-batches"),
    "cache_budget_mb": (1_048_576, "1 TiB"),
    "checkpoint_every_steps": (1_000_000_000, "a billion steps"),
    "warm_start_steps": (1_000_000_000, "a billion steps"),
}


def check_upper_bounds(settings: object, section: str) -> None:
    """Raises ValueError naming the first setting of `settings` above its bound in `UPPER_BOUNDS`.

    Args:
        settings: an object with the settings as attributes (None values are skipped).
        section: the YAML section, for the message (`training`).

    Raises:
        ValueError: a setting is larger than its bound.
    """
    for name, (bound, words) in UPPER_BOUNDS.items():
        value = getattr(settings, name, None)
        if value is not None and value > bound:
            raise ValueError(
                f"`{name}` is too large: expected at most {bound:,} ({words}). Received: {name}={value:,}. "
                f"Use a smaller `{section}.{name}`."
            )


def check_finite(values: dict[str, float | None]) -> None:
    """Raises ValueError for the first value that is NaN or infinite (`.nan`, `.inf` in YAML).

    Args:
        values: name -> value; None values are skipped.

    Raises:
        ValueError: a value is not a finite number.
    """
    for name, value in values.items():
        if value is not None and not math.isfinite(value):
            raise ValueError(f"`{name}` must be a finite number. Received: {name}={value}. Write a plain number.")
