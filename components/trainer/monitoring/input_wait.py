"""When waiting for input is worth a warning: a rule shared by the Trainer and the run summary.

A high input-wait share matters when steps are long enough for input to be
the bottleneck, or when an accelerator sits idle meanwhile. On a CPU with
sub-millisecond steps, a fixed per-step overhead of `next(iterator)` reads as
a large share, and none of the fixes (more cache, bigger batches) would make
the run noticeably faster: warning there teaches people to ignore warnings.

This module imports nothing heavy, so `pipelines` can use it to format a summary.
"""

from __future__ import annotations

from typing import Optional

__all__ = ["INPUT_WAIT_WARNING", "MIN_STEP_SECONDS", "input_wait_is_actionable"]

# Warn above this share of step time spent waiting for input...
INPUT_WAIT_WARNING = 0.10
# ...on a CPU only when a step takes at least this long (5 ms): below it, the wait is per-step overhead.
MIN_STEP_SECONDS = 0.005


def input_wait_is_actionable(
    fraction: Optional[float], mean_step_seconds: Optional[float], on_accelerator: bool
) -> bool:
    """Whether an input-wait share is worth telling a person about.

    Args:
        fraction: time blocked on input over step time (None: not measured).
        mean_step_seconds: the steady-state mean step time (None: not measured).
        on_accelerator: whether training ran on a GPU/TPU, which idles while input is late.

    Returns:
        True when more than `INPUT_WAIT_WARNING` of step time waited for input, and training
        ran on an accelerator or its steps took at least `MIN_STEP_SECONDS`.

    Example:
        >>> input_wait_is_actionable(0.4, 0.0004, on_accelerator=False)
        False
        >>> input_wait_is_actionable(0.4, 0.02, on_accelerator=False)
        True
    """
    if fraction is None or fraction <= INPUT_WAIT_WARNING:
        return False
    if on_accelerator:
        return True
    return mean_step_seconds is not None and mean_step_seconds >= MIN_STEP_SECONDS
