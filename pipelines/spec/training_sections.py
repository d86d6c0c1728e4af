"""The `model:` and `training:` sections: the model type's options and how it trains."""

import dataclasses
from typing import Any, Literal, Optional

from components.trainer.models.base import DEFAULT_MODEL_TYPE, ModelOptions
from components.trainer.models.registry import OPTION_CLASSES, options_from_dict
from pipelines.spec.limits import check_finite, check_upper_bounds
from pipelines.spec.typed import Variants

__all__ = ["ModelSpec", "MODEL_VARIANTS", "SPEC_VARIANTS", "model_spec", "TrainingSpec"]

# `model:`: the options dataclass of its `type`, from the model type registry (`components.trainer.models`):
# `ModelSpec` is their base (the keys every type shares), `MODEL_VARIANTS` picks the class by `type`.
ModelSpec = ModelOptions
MODEL_VARIANTS = Variants(key="type", default=DEFAULT_MODEL_TYPE, classes=OPTION_CLASSES)
SPEC_VARIANTS = {ModelSpec: MODEL_VARIANTS}


def model_spec(**section: Any) -> ModelSpec:
    """A `model:` section built in Python (tools, tests): its type's options class, defaults filled in."""
    return options_from_dict(section)


@dataclasses.dataclass(frozen=True)
class TrainingSpec:
    """Training settings: steps, batch size, optimiser, and how training is distributed.

    `batch_size` is per replica (one GPU, or the CPU): one optimizer step uses
    `batch_size x replicas x gradient_accumulation_steps` examples, and
    `scale_learning_rate: true` multiplies `learning_rate` by
    `replicas x gradient_accumulation_steps` (the linear scaling rule).
    `strategy`: `auto` (multi_worker when TF_CONFIG names several tasks,
    mirrored with several GPUs, else one_device), `one_device`, `mirrored`,
    `multi_worker`. `gpus`: GPU indices to use (null: all visible).
    `mixed_precision`: `auto` (float16 on GPUs of compute capability 7.0+,
    else float32), `off`, `float16`, `bfloat16`. `xla` compiles the train step.
    `checkpoint_every_steps` (null: off) lets a killed run resume;
    `profile_steps: [first, last]` writes a profiler trace to TensorBoard;
    `metrics_port` serves Prometheus metrics on 127.0.0.1 (null: off) and
    `pushgateway_url` pushes them.
    `warmup_steps` raises the learning rate linearly from 0 over the first
    that many optimizer steps; `decay: cosine` then lowers it to 0 by the last
    step (fine-tuning a pretrained backbone usually wants both).
    `epochs` (null: off) trains on the whole train split that many times
    instead of `train_steps`: steps per epoch = train examples / global batch,
    rounded up (the examples are counted when training starts).
    `warm_start: true` starts the Trainer from the last blessed model's
    weights when the architecture matches (same model section, same
    vocabulary sizes), else it warns and trains from scratch; the run summary
    says which (`warm_started_from`, or `cold_start` with the reason). The
    Trainer then reruns whenever a newer model is blessed.
    `warm_start_steps` (with `warm_start: true`; null: `train_steps`) is how
    many steps a warm-started Trainer trains: a model that starts from the
    last blessed one needs fewer than a cold start (a window of spans moved
    by one span). A cold start (a first run, another architecture) still
    trains `train_steps`.
    `module_file: path.py` is a TFX module file used unchanged: TFX's Trainer
    calls its `run_fn(fn_args)` with `train_steps`, `eval_steps` and
    `custom_config` (as `fn_args.custom_config`); the model must export its
    own `serving_default` signature (serialized tf.Example in). The other
    training settings are then the module's business.
    """

    train_steps: int = 1000
    epochs: Optional[int] = None
    eval_steps: int = 100
    batch_size: int = 64
    learning_rate: float = 0.001
    optimizer: Literal["adam", "sgd", "rmsprop", "adagrad"] = "adam"
    steps_per_execution: int = 50
    seed: int = 0
    strategy: Literal["auto", "one_device", "mirrored", "multi_worker"] = "auto"
    gpus: Optional[list[int]] = None
    gpu_memory_growth: bool = True
    scale_learning_rate: bool = False
    # YAML reads a bare `off` as false: both mean float32.
    mixed_precision: Literal["auto", "off", "float16", "bfloat16", False] = "auto"
    xla: bool = False
    gradient_accumulation_steps: int = 1
    cache_budget_mb: int = 1024
    warmup_steps: int = 0
    decay: Literal["none", "cosine"] = "none"
    checkpoint_every_steps: Optional[int] = 500
    profile_steps: Optional[list[int]] = None
    metrics_port: Optional[int] = None
    pushgateway_url: Optional[str] = None
    warm_start: bool = False
    warm_start_steps: Optional[int] = None
    module_file: Optional[str] = None
    custom_config: Optional[dict[str, Any]] = None

    def _check_warm_start_steps(self) -> None:
        steps = self.warm_start_steps
        if steps is None:
            return
        if steps < 1:
            raise ValueError(
                f"`warm_start_steps` must be at least 1. Received: warm_start_steps={steps}. Write "
                "`warm_start_steps: null` to train `train_steps` steps after a warm start too."
            )
        if not self.warm_start:
            raise ValueError(
                f"`warm_start_steps` is the steps a warm-started Trainer trains, and `warm_start` is off. Expected "
                f"`warm_start: true` with it. Received: warm_start_steps={steps}, warm_start=false. Add "
                "`warm_start: true`, or remove `warm_start_steps`."
            )
        if self.epochs is not None:
            raise ValueError(
                f"`warm_start_steps` counts steps, and `epochs` trains whole epochs instead of steps. Received: "
                f"warm_start_steps={steps}, epochs={self.epochs}. Remove one of them."
            )

    def __post_init__(self):
        for name in ("train_steps", "eval_steps", "batch_size", "steps_per_execution", "gradient_accumulation_steps"):
            if getattr(self, name) < 1:
                raise ValueError(f"`{name}` must be at least 1. Received: {name}={getattr(self, name)}.")
        if self.warmup_steps < 0:
            raise ValueError(f"`warmup_steps` must be 0 or more. Received: warmup_steps={self.warmup_steps}.")
        if self.epochs is not None and self.epochs < 1:
            raise ValueError(
                f"`epochs` must be at least 1. Received: epochs={self.epochs}. Write `epochs: null` to train "
                "for `train_steps` steps instead."
            )
        self._check_warm_start_steps()
        check_upper_bounds(self, "training")
        check_finite({"learning_rate": self.learning_rate})
        if self.learning_rate <= 0:
            raise ValueError(f"`learning_rate` must be above 0. Received: learning_rate={self.learning_rate}.")
        if self.learning_rate > 10:
            raise ValueError(
                f"`learning_rate` must be at most 10. Received: learning_rate={self.learning_rate}. "
                "Typical values are 0.0001 to 0.1."
            )
        if not isinstance(self.mixed_precision, str):
            object.__setattr__(self, "mixed_precision", "off")
        if self.gpus is not None and (any(i < 0 for i in self.gpus) or len(set(self.gpus)) != len(self.gpus)):
            raise ValueError(
                f"`gpus` must list distinct GPU indices, 0 or more. Received: gpus={list(self.gpus)}. "
                "Fix the list, or write `gpus: null` for every visible GPU."
            )
        if self.cache_budget_mb < 0:
            raise ValueError(
                f"`cache_budget_mb` must be 0 (never cache) or more. Received: cache_budget_mb={self.cache_budget_mb}."
            )
        if self.checkpoint_every_steps is not None and self.checkpoint_every_steps < 1:
            raise ValueError(
                f"`checkpoint_every_steps` must be at least 1. Received: checkpoint_every_steps="
                f"{self.checkpoint_every_steps}. Write `checkpoint_every_steps: null` to turn checkpoints off."
            )
        if self.profile_steps is not None and (
            len(self.profile_steps) != 2 or not 1 <= self.profile_steps[0] <= self.profile_steps[1]
        ):
            raise ValueError(
                f"`profile_steps` must be [first, last] with 1 <= first <= last. Received: profile_steps="
                f"{list(self.profile_steps)}. Example: `profile_steps: [100, 110]`."
            )
        if self.metrics_port is not None and not 1 <= self.metrics_port <= 65535:
            raise ValueError(
                f"`metrics_port` must be a TCP port, 1 to 65535. Received: metrics_port={self.metrics_port}. "
                "Example: `metrics_port: 9464`, or null for no metrics server."
            )
        if self.pushgateway_url is not None and not self.pushgateway_url.startswith(("http://", "https://")):
            raise ValueError(
                f"`pushgateway_url` must be an http(s) URL. Received: pushgateway_url={self.pushgateway_url!r}. "
                "Example: `pushgateway_url: http://pushgateway:9091`."
            )
