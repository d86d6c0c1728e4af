"""The tf.data input pipeline: built to keep the trainer busy.

Order of operations: files are read in parallel (interleave); records are
parsed in one vectorised `parse_example` per batch and, when transformed
examples are not materialised, transformed with the tf.Transform graph.

When the split fits `cache_budget_bytes` and the run reads all of it (whole
epochs, or at least as many rows as it holds), that happens once, in batches of
1024, and the whole split is kept in memory as one tensor per feature
(joined batch by batch: `unbatch().batch(all)` would first hold
each row's each feature as a tensor of its own, 2.7 GB and 41 s for one
million rows of 18 tensors that take 92 MB). Each
epoch then draws a full random permutation of the rows and cuts it into
batches with one `gather` per feature: no per-example work after the first
epoch, and a uniform shuffle rather than a shuffle buffer. (Examples in the
last, incomplete batch of an epoch are left out of that epoch only; a split
smaller than one batch fills each batch by taking its rows again.)
Otherwise records go through a shuffle buffer, then are batched, parsed and
transformed on their way. Then prefetch. Training order is
non-deterministic (faster); evaluation is deterministic.

With several input pipelines (one per worker under
`strategy.distribute_datasets_from_function`), each reads a disjoint part:
whole files when there are at least as many files as pipelines, else every
n-th record of each file. `batch_size` is then the per-replica batch.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Optional

import tensorflow as tf

__all__ = [
    "InputOptions",
    "make_dataset",
    "list_files",
    "total_bytes",
    "shard_plan",
    "fits_in_memory",
    "worth_caching",
    "count_records",
    "require_rows",
]

_PREPARE_BATCH = 1024
_WHOLE_SPLIT = 1 << 40  # a batch size larger than any split: "all rows"
_COUNT_BATCH = 8192
_READ_BUFFER = 4 << 20


@dataclasses.dataclass(frozen=True)
class InputOptions:
    """Knobs of the input pipeline.

    `num_shards`/`shard_index`: this pipeline reads shard `shard_index` of
    `num_shards` (one shard per worker; see `shard_plan`). `row_bytes`: the
    size of one parsed (and transformed) row when it is far larger than its
    record, as decoded images are; the cache budget then counts rows x
    `row_bytes` instead of the files' size. `rows_needed`: how many rows this
    pipeline hands out over the whole run (steps x batch); None: the whole
    split, each epoch. When it is fewer than the shard holds, caching would
    parse rows that are never used, so the rows stream (see `worth_caching`).
    """

    batch_size: int
    shuffle: bool = True
    shuffle_buffer: int = 10_000
    cache_budget_bytes: int = 1 << 30
    seed: Optional[int] = None
    repeat: bool = True
    num_shards: int = 1
    shard_index: int = 0
    row_bytes: Optional[int] = None
    rows_needed: Optional[int] = None

    def __post_init__(self):
        if not 0 <= self.shard_index < self.num_shards:
            raise ValueError(
                f"`shard_index` must be in [0, num_shards). Received: shard_index={self.shard_index}, "
                f"num_shards={self.num_shards}. Pass the input context's `input_pipeline_id`."
            )


def list_files(patterns: Sequence[str]) -> list[str]:
    """Expands file patterns (TFX passes `.../Split-train/*`) into sorted file names."""
    files: list[str] = []
    for pattern in patterns:
        files.extend(tf.io.gfile.glob(pattern))
    if not files:
        raise FileNotFoundError(f"no input files match {list(patterns)}. Check the upstream component's output.")
    return sorted(files)


def require_rows(patterns: Sequence[str], split: str) -> None:
    """Raises a ValueError naming `split` and the fix when its files hold no record (reads at most one)."""
    try:
        files = list_files(patterns)
    except FileNotFoundError:
        files = []
    if files:
        records = tf.data.TFRecordDataset(files, compression_type=_compression(files))
        if any(True for _ in records.take(1)):
            return
    raise ValueError(
        f"the `{split}` split holds no rows, so the Trainer has nothing to read. Expected at least one row in each "
        f"split (rows go to splits by a hash of their cells). Received: no records in {list(patterns)}. Raise "
        f"`{split}`'s weight in `data.splits` (e.g. `{{train: 2, eval: 1}}`), or add rows."
    )


def total_bytes(files: Sequence[str]) -> int:
    """Size on disk of `files`, in bytes."""
    return sum(tf.io.gfile.stat(f).length for f in files)


def count_records(files: Sequence[str]) -> int:
    """Records in the TFRecord `files` (GZIP or not), read without parsing them; remembered per file version."""
    stats = [(f, tf.io.gfile.stat(f)) for f in files]
    return _count_records(tuple((f, stat.length, stat.mtime_nsec) for f, stat in stats))


@functools.lru_cache(maxsize=64)
def _count_records(versions: tuple[tuple[str, int, int], ...]) -> int:
    files = [name for name, _, _ in versions]
    # One file after the other, in batches: parallel reads (interleave) and `reduce` on single records cost
    # ~30 us per record (41 s for a million records; 3.3 s this way).
    dataset = tf.data.TFRecordDataset(files, compression_type=_compression(files), buffer_size=_READ_BUFFER)
    batches = dataset.batch(_COUNT_BATCH)
    return int(batches.reduce(tf.constant(0, tf.int64), lambda count, b: count + tf.size(b, tf.int64)).numpy())


def shard_plan(file_count: int, num_shards: int) -> str:
    """How `num_shards` pipelines split `file_count` files: `none`, `files` or `records`."""
    if num_shards == 1:
        return "none"
    return "files" if file_count >= num_shards else "records"


def _compression(files: Sequence[str]) -> str:
    return "GZIP" if all(f.endswith(".gz") for f in files) else ""


def fits_in_memory(
    files: Sequence[str], budget_bytes: int, num_shards: int = 1, row_bytes: Optional[int] = None
) -> bool:
    """Whether one shard of `files` fits the cache budget.

    Args:
      files: the split's files.
      budget_bytes: the cache budget.
      num_shards: input pipelines sharing the split.
      row_bytes: one parsed row's size when it is known to dwarf its record (decoded images): the split then
        counts rows x `row_bytes`; None: the files' size (GZIP files count 4x).

    Returns:
      True when the largest shard fits.
    """
    if shard_plan(len(files), num_shards) == "files":
        files = files[::num_shards]  # the largest shard has this many files
        num_shards = 1
    if row_bytes is not None:
        if total_bytes(files) // num_shards > budget_bytes:
            return False  # the rows are larger than their records: no need to count them
        size = count_records(files) * row_bytes
    else:
        size = total_bytes(files) * (4 if _compression(files) else 1)
    return size // num_shards <= budget_bytes


def worth_caching(files: Sequence[str], options: InputOptions) -> bool:
    """Whether the pipeline over `files` (all of the split's) caches its shard: it fits and the run reads it all.

    Counting the rows (a read of the files without parsing them) happens only
    when the shard fits and `options.rows_needed` is set.
    """
    plan = shard_plan(len(files), options.num_shards)
    pipelines = 1 if plan == "files" else options.num_shards
    if not fits_in_memory(files, options.cache_budget_bytes, options.num_shards, options.row_bytes):
        return False
    if options.rows_needed is None:
        return True
    mine = files[options.shard_index :: options.num_shards] if plan == "files" else files
    return options.rows_needed >= count_records(mine) // pipelines


def _all_dense(element_spec) -> bool:
    return all(isinstance(spec, tf.TensorSpec) for spec in tf.nest.flatten(element_spec))


def _whole_split(rows: tf.data.Dataset) -> tf.data.Dataset:
    """A dataset of one element: every row of `rows` (a dataset of batches), one tensor per feature.

    Run eagerly (as a dataset function is), the batches are read now and joined
    with one `concat` per feature. In a graph, tf.data joins them itself.
    """
    if not tf.executing_eagerly():
        return rows.unbatch().batch(_WHOLE_SPLIT).cache()
    parts: list[list[tf.Tensor]] = [[] for _ in tf.nest.flatten(rows.element_spec)]
    for batch in rows:
        for part, tensor in zip(parts, tf.nest.flatten(batch)):
            part.append(tensor)
    if not parts[0]:  # an empty split: no element, as before
        return rows.unbatch().batch(_WHOLE_SPLIT)
    whole = [tf.concat(part, axis=0) for part in parts]
    parts.clear()
    return tf.data.Dataset.from_tensors(tf.nest.pack_sequence_as(rows.element_spec, whole))


def _epochs_of_batches(split: tf.data.Dataset, options: InputOptions) -> tf.data.Dataset:
    """Batches from one dataset element that holds the whole split: a fresh permutation per epoch."""
    batch = options.batch_size

    def epoch(*split_tensors):
        rows = tf.shape(tf.nest.flatten(split_tensors)[0])[0]
        order = tf.random.shuffle(tf.range(rows), seed=options.seed) if options.shuffle else tf.range(rows)
        if options.repeat:
            # A split smaller than one batch would yield no full batch per epoch, and the repeat below would
            # then look for one forever: its rows are taken as many times as one batch needs, as the
            # streamed path's repeat-then-batch does.
            order = tf.tile(order, [-(-batch // tf.maximum(rows, 1))])
            rows = tf.size(order)
        full = rows // batch * batch

        def cut(tensor):
            taken = tf.gather(tensor, order[:full])
            return tf.reshape(taken, tf.concat([[-1, batch], tf.shape(tensor)[1:]], axis=0))

        batches = tf.data.Dataset.from_tensor_slices(tf.nest.map_structure(cut, split_tensors))
        if not options.repeat:
            rest = tf.nest.map_structure(lambda t: tf.gather(t, order[full:]), split_tensors)
            batches = batches.concatenate(tf.data.Dataset.from_tensors(rest).filter(lambda *_: full < rows))
        return batches

    if options.repeat:
        split = split.repeat()
    return split.flat_map(epoch)


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
      options: batch size, shuffling, caching, sharding.
      transform: applied to each parsed batch (the tf.Transform layer when
        transformed examples are not materialised).
      feature_keys: keys kept as model inputs; default all but the label.

    Returns:
      A dataset of (dict of [batch] tensors, [batch] labels).
    """
    files = all_files = list_files(patterns)
    compression = _compression(files)
    deterministic = not options.shuffle
    plan = shard_plan(len(files), options.num_shards)
    if plan == "files":
        files = files[options.shard_index :: options.num_shards]

    def read(name: tf.Tensor) -> tf.data.Dataset:
        records = tf.data.TFRecordDataset(name, compression_type=compression)
        if plan == "records":
            records = records.shard(options.num_shards, options.shard_index)
        return records

    dataset = tf.data.Dataset.from_tensor_slices(files)
    if options.shuffle:
        dataset = dataset.shuffle(len(files), seed=options.seed)
    dataset = dataset.interleave(
        read, cycle_length=min(len(files), 8), num_parallel_calls=tf.data.AUTOTUNE, deterministic=deterministic
    )
    cache = worth_caching(all_files, options)

    def parse(serialized: tf.Tensor):
        features = tf.io.parse_example(serialized, feature_spec)
        if transform is not None:
            features = transform(features)
        label = features[label_key]
        keys = feature_keys if feature_keys is not None else [k for k in features if k != label_key]
        return {k: features[k] for k in keys}, label

    if cache:
        # Parse (and transform) each record once, in large batches.
        rows = dataset.batch(_PREPARE_BATCH).map(parse, num_parallel_calls=tf.data.AUTOTUNE)
        cache = _all_dense(rows.element_spec)
    if cache:
        dataset = _epochs_of_batches(_whole_split(rows), options)
    else:
        if options.shuffle:
            dataset = dataset.shuffle(options.shuffle_buffer, seed=options.seed, reshuffle_each_iteration=True)
        if options.repeat:
            dataset = dataset.repeat()
        dataset = dataset.batch(options.batch_size, drop_remainder=options.repeat)
        dataset = dataset.map(parse, num_parallel_calls=tf.data.AUTOTUNE, deterministic=deterministic)
    options_tf = tf.data.Options()
    options_tf.deterministic = deterministic
    # When sharded above, a strategy must not shard again.
    sharded = options.num_shards > 1
    options_tf.experimental_distribute.auto_shard_policy = (
        tf.data.experimental.AutoShardPolicy.OFF if sharded else tf.data.experimental.AutoShardPolicy.AUTO
    )
    return dataset.with_options(options_tf).prefetch(tf.data.AUTOTUNE)
