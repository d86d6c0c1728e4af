"""The tf.data input pipeline: built to keep the trainer busy.

Order of operations: files are read in parallel (interleave); records are
parsed in one vectorised `parse_example` per batch and, when transformed
examples are not materialised, transformed with the tf.Transform graph. When
the split fits `cache_budget_bytes`, that happens once, in batches of 1024,
and the model-ready rows are cached in memory before shuffle/repeat/batch;
otherwise each training batch is parsed and transformed on its way. Then
prefetch. Training order is non-deterministic (faster); evaluation is
deterministic. With several workers, files (or, when too few, records) are
sharded by the distribution strategy's auto-shard policy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Optional

import tensorflow as tf

__all__ = ["InputOptions", "make_dataset", "list_files", "total_bytes"]

_PREPARE_BATCH = 1024


@dataclasses.dataclass(frozen=True)
class InputOptions:
    """Knobs of the input pipeline."""

    batch_size: int
    shuffle: bool = True
    shuffle_buffer: int = 10_000
    cache_budget_bytes: int = 1 << 30
    seed: Optional[int] = None
    repeat: bool = True


def list_files(patterns: Sequence[str]) -> list[str]:
    """Expands file patterns (TFX passes `.../Split-train/*`) into sorted file names."""
    files: list[str] = []
    for pattern in patterns:
        files.extend(tf.io.gfile.glob(pattern))
    if not files:
        raise FileNotFoundError(f"no input files match {list(patterns)}. Check the upstream component's output.")
    return sorted(files)


def total_bytes(files: Sequence[str]) -> int:
    return sum(tf.io.gfile.stat(f).length for f in files)


def _compression(files: Sequence[str]) -> str:
    return "GZIP" if all(f.endswith(".gz") for f in files) else ""


def make_dataset(
    patterns: Sequence[str],
    feature_spec: dict,
    label_key: str,
    options: InputOptions,
    transform: Optional[Callable[[dict], dict]] = None,
    feature_keys: Optional[Sequence[str]] = None,
) -> tf.data.Dataset:
    """Builds (features, label) batches from TFRecord files of tf.Example.

    Args:
      patterns: file patterns of one split.
      feature_spec: parse spec of the records (raw or transformed).
      label_key: key of the label in the (transformed) features.
      options: batch size, shuffling, caching.
      transform: applied to each parsed batch (the tf.Transform layer when
        transformed examples are not materialised).
      feature_keys: keys kept as model inputs; default all but the label.

    Returns:
      A dataset of (dict of [batch] tensors, [batch] labels).
    """
    files = list_files(patterns)
    compression = _compression(files)
    deterministic = not options.shuffle
    dataset = tf.data.Dataset.from_tensor_slices(files)
    if options.shuffle:
        dataset = dataset.shuffle(len(files), seed=options.seed)
    dataset = dataset.interleave(
        lambda name: tf.data.TFRecordDataset(name, compression_type=compression),
        cycle_length=min(len(files), 8),
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=deterministic,
    )
    fits_in_memory = total_bytes(files) * (4 if compression else 1) <= options.cache_budget_bytes

    def parse(serialized: tf.Tensor):
        features = tf.io.parse_example(serialized, feature_spec)
        if transform is not None:
            features = transform(features)
        label = features[label_key]
        keys = feature_keys if feature_keys is not None else [k for k in features if k != label_key]
        return {k: features[k] for k in keys}, label

    if fits_in_memory:
        # Parse (and transform) each record once, in large batches, and keep
        # the model-ready rows in memory; later epochs only shuffle and batch.
        dataset = dataset.batch(_PREPARE_BATCH).map(parse, num_parallel_calls=tf.data.AUTOTUNE).unbatch().cache()
    if options.shuffle:
        dataset = dataset.shuffle(options.shuffle_buffer, seed=options.seed, reshuffle_each_iteration=True)
    if options.repeat:
        dataset = dataset.repeat()
    dataset = dataset.batch(options.batch_size, drop_remainder=options.repeat)
    if not fits_in_memory:
        dataset = dataset.map(parse, num_parallel_calls=tf.data.AUTOTUNE, deterministic=deterministic)
    options_tf = tf.data.Options()
    options_tf.deterministic = deterministic
    options_tf.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.AUTO
    return dataset.with_options(options_tf).prefetch(tf.data.AUTOTUNE)
