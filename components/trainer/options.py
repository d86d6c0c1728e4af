"""The `training:` section as the Trainer reads it from `custom_config["training"]`.

The spec's `TrainingSpec` (pipelines/spec/models.py) validates the YAML; this
typed view fills in defaults for keys an older or hand-written config lacks,
so `run_fn` never indexes a plain dict. The defaults match `TrainingSpec`
(a test checks it).

Batch sizes: `batch_size` is per replica and per micro-batch. One optimizer
step consumes `global_batch = batch_size x replicas x gradient_accumulation_steps`
examples.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Optional

__all__ = ["TrainingOptions"]


@dataclasses.dataclass(frozen=True)
class TrainingOptions:
    """Every `training:` key the Trainer uses, with `TrainingSpec`'s defaults."""

    train_steps: int = 1000
    epochs: Optional[int] = None
    eval_steps: int = 100
    batch_size: int = 64
    learning_rate: float = 0.001
    optimizer: str = "adam"
    steps_per_execution: int = 50
    seed: Optional[int] = 0
    strategy: str = "auto"
    gpus: Optional[tuple[int, ...]] = None
    gpu_memory_growth: bool = True
    scale_learning_rate: bool = False
    mixed_precision: str = "auto"
    xla: bool = False
    gradient_accumulation_steps: int = 1
    cache_budget_mb: int = 1024
    warmup_steps: int = 0
    decay: str = "none"
    checkpoint_every_steps: Optional[int] = 500
    profile_steps: Optional[tuple[int, int]] = None
    metrics_port: Optional[int] = None
    pushgateway_url: Optional[str] = None
    warm_start: bool = False
    warm_start_steps: Optional[int] = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TrainingOptions:
        """Reads the known keys of `data` (others are ignored); lists become tuples."""
        names = {field.name for field in dataclasses.fields(cls)}
        values = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in names}
        return cls(**values)

    def steps(self, train_steps: int, warm_started: bool) -> int:
        """Steps to train: `warm_start_steps` after a warm start (when set), else `train_steps` (TFX's arg)."""
        return self.warm_start_steps if warm_started and self.warm_start_steps else train_steps

    def global_batch(self, replicas: int) -> int:
        """Examples per optimizer step across all replicas."""
        return self.batch_size * replicas * self.gradient_accumulation_steps

    def scaled_learning_rate(self, replicas: int) -> float:
        """`learning_rate`, times global batch / `batch_size` when `scale_learning_rate` (linear rule)."""
        if not self.scale_learning_rate:
            return self.learning_rate
        return self.learning_rate * replicas * self.gradient_accumulation_steps
