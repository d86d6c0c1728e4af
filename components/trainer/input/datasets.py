"""The train and eval datasets of `run_fn`, distributed by the strategy.

Each worker builds its own input pipeline through
`strategy.distribute_datasets_from_function`: it reads its shard of the
files (or records) and yields per-replica batches, which the strategy hands
to its local replicas. A training element holds
`batch_size x gradient_accumulation_steps` examples (the micro-batches of
one optimizer step); an eval element holds `batch_size`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Optional

import tensorflow as tf

from components.trainer.input import input_pipeline
from components.trainer.models import model_inputs
from components.trainer.options import TrainingOptions
from components.transform.config import TransformConfig

__all__ = ["DatasetPlan", "build_datasets"]


@dataclasses.dataclass(frozen=True)
class DatasetPlan:
    """How the training input is read: what the summary and advice need."""

    materialized: bool
    cached: bool
    shards: int
    fits: bool = True  # the training split fits `cache_budget_mb` (False: raising it would let it be cached)


def _decoded_row_bytes(inputs: Sequence[model_inputs.ModelInput]) -> Optional[int]:
    """One transformed row's size when it holds decoded images (far larger than the encoded record); else None."""
    if not any(used.media == "image" for used in inputs):
        return None
    size = 4  # the label
    for used in inputs:
        values = 1
        for dim in used.shape:
            values *= dim
        size += values * used.dtype.size
    return size


def build_datasets(
    fn_args,
    config: TransformConfig,
    tf_transform_output,
    training: TrainingOptions,
    materialized: bool,
    strategy: Optional[tf.distribute.Strategy] = None,
    input_pipelines: int = 1,
) -> tuple[tf.data.Dataset, tf.data.Dataset, DatasetPlan]:
    """Returns (train, eval, plan); datasets yield (features, [batch, 1] float labels).

    Args:
      fn_args: TFX FnArgs (`train_files`, `eval_files`).
      config: the feature table and label.
      tf_transform_output: the Transform graph.
      training: batch size, accumulation, cache budget, seed.
      materialized: whether the files hold transformed examples.
      strategy: distributes the datasets; None: plain datasets.
      input_pipelines: how many workers each read a shard (for the plan).
    """
    # Every transform output but the label: a user transform's extra outputs reach the model too.
    feature_keys = model_inputs.input_keys(model_inputs.from_transform_output(config, tf_transform_output, {}))
    label = config.label_name
    if materialized:
        spec, layer = tf_transform_output.transformed_feature_spec(), None
    else:
        spec, layer = tf_transform_output.raw_feature_spec(), tf_transform_output.transform_features_layer()

    def transform(features: dict) -> dict:
        # Done while parsing, so cached rows already hold the [batch, 1] float label.
        features = dict(layer(features)) if layer is not None else dict(features)
        features[label] = tf.reshape(tf.cast(features[label], tf.float32), [-1, 1])
        return features

    budget = training.cache_budget_mb << 20
    row_bytes = _decoded_row_bytes(model_inputs.from_transform_output(config, tf_transform_output, {}))

    def options_for(batch: int, steps: Optional[int], shuffle: bool, context: Optional[tf.distribute.InputContext]):
        pipelines = context.num_input_pipelines if context else 1
        replicas_per_pipeline = max(1, context.num_replicas_in_sync // pipelines) if context else 1
        return input_pipeline.InputOptions(
            batch_size=batch,
            shuffle=shuffle,
            seed=training.seed,
            cache_budget_bytes=budget,
            num_shards=pipelines,
            shard_index=context.input_pipeline_id if context else 0,
            row_bytes=row_bytes,
            rows_needed=steps * batch * replicas_per_pipeline if steps else None,
        )

    # Rows each split hands out over the run: whole epochs (None), or steps x batch.
    train_steps = None if training.epochs else getattr(fn_args, "train_steps", None)
    eval_steps = getattr(fn_args, "eval_steps", None)

    def make(patterns: Sequence[str], shuffle: bool, batch: int, context: Optional[tf.distribute.InputContext]):
        steps = train_steps if shuffle else eval_steps
        options = options_for(batch, steps, shuffle, context)
        return input_pipeline.make_dataset(
            patterns, spec, label, options, transform=transform, feature_keys=feature_keys
        )

    train_batch = training.batch_size * training.gradient_accumulation_steps
    if strategy is None:
        train = make(fn_args.train_files, True, train_batch, None)
        evaluation = make(fn_args.eval_files, False, training.batch_size, None)
    else:
        train = strategy.distribute_datasets_from_function(lambda c: make(fn_args.train_files, True, train_batch, c))
        evaluation = strategy.distribute_datasets_from_function(
            lambda c: make(fn_args.eval_files, False, training.batch_size, c)
        )
    files = input_pipeline.list_files(fn_args.train_files)
    plan_context = tf.distribute.InputContext(num_input_pipelines=input_pipelines) if input_pipelines > 1 else None
    train_options = options_for(train_batch, train_steps, True, plan_context)
    cached = input_pipeline.worth_caching(files, train_options)
    fits = cached or input_pipeline.fits_in_memory(files, budget, input_pipelines, row_bytes)
    return train, evaluation, DatasetPlan(materialized=materialized, cached=cached, shards=input_pipelines, fits=fits)
