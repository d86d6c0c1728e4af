"""The learning rate over training: constant, or linear warmup then cosine decay (`training.warmup_steps`, `decay`).

Fine-tuning a pretrained backbone wants a warmup (large early updates
destroy the pretrained features) and a decay to a small rate at the end.
"""

from __future__ import annotations

import math

import tensorflow as tf

__all__ = ["WarmupCosine", "learning_rate"]


class WarmupCosine(tf.keras.optimizers.schedules.LearningRateSchedule):
    """`peak x step / warmup` for the first `warmup_steps`, then `peak`, or cosine down to 0 at `total_steps`.

    Args:
      peak: the rate after warmup.
      warmup_steps: optimizer steps of linear warmup from 0 (0: none).
      total_steps: optimizer steps in the whole run (where cosine decay reaches 0).
      cosine: decay after warmup; False: stay at `peak`.
    """

    def __init__(self, peak: float, warmup_steps: int, total_steps: int, cosine: bool):
        super().__init__()
        self.peak = float(peak)
        self.warmup_steps = int(warmup_steps)
        self.total_steps = max(int(total_steps), 1)
        self.cosine = bool(cosine)

    def __call__(self, step):
        step = tf.cast(step, tf.float32)
        peak = tf.constant(self.peak, tf.float32)
        rate = peak
        if self.cosine:
            decay_steps = float(max(self.total_steps - self.warmup_steps, 1))
            progress = tf.clip_by_value((step - self.warmup_steps) / decay_steps, 0.0, 1.0)
            rate = peak * 0.5 * (1.0 + tf.cos(math.pi * progress))
        if self.warmup_steps > 0:
            rate = tf.where(step < self.warmup_steps, peak * (step + 1.0) / self.warmup_steps, rate)
        return rate

    def get_config(self) -> dict:
        return {
            "peak": self.peak,
            "warmup_steps": self.warmup_steps,
            "total_steps": self.total_steps,
            "cosine": self.cosine,
        }


def learning_rate(peak: float, warmup_steps: int, decay: str, total_steps: int):
    """The optimizer's `learning_rate`: the number itself when constant, else a `WarmupCosine` schedule.

    Args:
      peak: the spec's (possibly replica-scaled) learning rate.
      warmup_steps: `training.warmup_steps`.
      decay: `training.decay` (`none` or `cosine`).
      total_steps: optimizer steps in the run.

    Returns:
      A float or a LearningRateSchedule.
    """
    if not warmup_steps and decay == "none":
        return peak
    return WarmupCosine(peak, warmup_steps, total_steps, cosine=decay == "cosine")
