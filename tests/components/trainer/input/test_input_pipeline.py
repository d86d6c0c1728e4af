"""The tf.data input pipeline: batches, labels, caching and transform paths agree."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import tensorflow as tf

from components.trainer.input.input_pipeline import InputOptions, make_dataset, require_rows

SPEC = {"x": tf.io.FixedLenFeature([], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64)}


@pytest.fixture
def records(tmp_path):
    paths = []
    for shard in range(3):
        path = str(tmp_path / f"part-{shard}.gz")
        with tf.io.TFRecordWriter(path, options="GZIP") as writer:
            for i in range(shard * 100, shard * 100 + 100):
                example = tf.train.Example(
                    features=tf.train.Features(
                        feature={
                            "x": tf.train.Feature(float_list=tf.train.FloatList(value=[float(i)])),
                            "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 2])),
                        }
                    )
                )
                writer.write(example.SerializeToString())
        paths.append(path)
    return str(tmp_path / "part-*")


def _collect(dataset, batches):
    xs, ys = [], []
    for features, label in dataset.take(batches):
        xs.extend(features["x"].numpy().tolist())
        ys.extend(label.numpy().tolist())
    return xs, ys


@pytest.mark.parametrize("budget", [1 << 30, 0], ids=["cached", "streamed"])
def test_one_epoch_yields_every_example_once_with_its_label(records, budget):
    options = InputOptions(batch_size=30, shuffle=True, seed=1, cache_budget_bytes=budget)
    xs, ys = _collect(make_dataset([records], SPEC, "y", options), 10)
    assert sorted(xs) == [float(i) for i in range(300)]
    assert all(int(x) % 2 == y for x, y in zip(xs, ys))


def test_training_order_is_shuffled_and_evaluation_order_is_not(records):
    shuffled, _ = _collect(make_dataset([records], SPEC, "y", InputOptions(batch_size=50, seed=3)), 6)
    ordered, _ = _collect(make_dataset([records], SPEC, "y", InputOptions(batch_size=50, shuffle=False)), 6)
    again, _ = _collect(make_dataset([records], SPEC, "y", InputOptions(batch_size=50, shuffle=False)), 6)
    assert ordered == again
    assert ordered[:6] == [0.0, 100.0, 200.0, 1.0, 101.0, 201.0]  # files interleaved, records in order
    assert shuffled != ordered and sorted(shuffled) == sorted(ordered)


@pytest.mark.parametrize("budget", [1 << 30, 0], ids=["cached", "streamed"])
def test_transform_is_applied_on_the_fly(records, budget):
    def transform(features):
        return {"x_xf": features["x"] * 2.0, "x": features["x"], "y": features["y"]}

    options = InputOptions(batch_size=25, shuffle=False, cache_budget_bytes=budget)
    dataset = make_dataset([records], SPEC, "y", options, transform=transform, feature_keys=["x_xf", "x"])
    features, label = next(iter(dataset))
    assert sorted(features) == ["x", "x_xf"]
    np.testing.assert_allclose(features["x_xf"].numpy(), features["x"].numpy() * 2.0)
    assert label.shape == (25,)


def test_missing_files_name_the_pattern(tmp_path):
    with pytest.raises(FileNotFoundError, match="no input files match"):
        make_dataset([str(tmp_path / "nothing-*")], SPEC, "y", InputOptions(batch_size=4))


def test_the_cache_budget_counts_decoded_rows_when_rows_dwarf_their_records(records):
    from components.trainer.input.input_pipeline import fits_in_memory, list_files, total_bytes

    files = list_files([records])
    on_disk = total_bytes(files) * 4  # GZIP files count 4x their size
    assert fits_in_memory(files, on_disk)
    # 300 rows of a 32x32x3 float image each: 3.7 MB, far more than the files.
    assert not fits_in_memory(files, on_disk, row_bytes=32 * 32 * 3 * 4)
    assert fits_in_memory(files, 300 * 32 * 32 * 3 * 4, row_bytes=32 * 32 * 3 * 4)
    assert not fits_in_memory(files, 300 * 32 * 32 * 3 * 4 - 1, row_bytes=32 * 32 * 3 * 4)


def test_a_split_is_cached_only_when_the_run_reads_all_of_it(records):
    from components.trainer.input.input_pipeline import list_files, worth_caching

    files = list_files([records])  # 3 files of 100 rows
    assert worth_caching(files, InputOptions(batch_size=10))  # whole epochs
    assert worth_caching(files, InputOptions(batch_size=10, rows_needed=300))
    assert not worth_caching(files, InputOptions(batch_size=10, rows_needed=299))
    assert not worth_caching(files, InputOptions(batch_size=10, rows_needed=10_000, cache_budget_bytes=0))
    # One file per pipeline: each reads 100 rows.
    assert worth_caching(files, InputOptions(batch_size=10, rows_needed=100, num_shards=3, shard_index=1))
    assert not worth_caching(files, InputOptions(batch_size=10, rows_needed=99, num_shards=3, shard_index=1))


@pytest.mark.parametrize("rows_needed, cached", [(None, True), (300, True), (60, False)])
def test_a_cached_split_is_read_when_the_dataset_is_built_and_a_streamed_one_later(
    records, tmp_path, rows_needed, cached
):
    options = InputOptions(batch_size=30, shuffle=True, seed=1, rows_needed=rows_needed)
    dataset = make_dataset([records], SPEC, "y", options)
    for path in tmp_path.glob("part-*"):
        path.unlink()
    if cached:
        xs, _ = _collect(dataset, 10)
        assert sorted(xs) == [float(i) for i in range(300)]
    else:
        with pytest.raises(tf.errors.NotFoundError):
            _collect(dataset, 2)


def _write_rows(path, count):
    with tf.io.TFRecordWriter(str(path)) as writer:
        for i in range(count):
            example = tf.train.Example(
                features=tf.train.Features(
                    feature={
                        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[float(i)])),
                        "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 2])),
                    }
                )
            )
            writer.write(example.SerializeToString())
    return str(path)


def _batches_within(dataset, batches: int, seconds: float = 120.0):
    """Takes `batches` batches on a thread; a dataset that yields none spins forever, so wait a bounded time."""
    taken: list = []
    worker = threading.Thread(target=lambda: taken.extend(_collect(dataset, batches)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"no {batches} batches in {seconds:.0f} s: the input pipeline spins"
    return taken


@pytest.mark.parametrize("budget", [1 << 30, 0], ids=["cached", "streamed"])
@pytest.mark.parametrize("shuffle", [True, False], ids=["train", "eval"])
def test_a_split_smaller_than_one_batch_still_yields_full_batches(tmp_path, budget, shuffle):
    # Penguins with `splits: {train: 30, eval: 1}` leave ~11 eval rows for a batch of 32: the cached path
    # yielded no batch per epoch and repeated epochs forever, at 100% CPU.
    path = _write_rows(tmp_path / "eleven.tfrecord", 11)
    options = InputOptions(batch_size=32, shuffle=shuffle, seed=2, cache_budget_bytes=budget)
    xs, ys = _batches_within(make_dataset([path], SPEC, "y", options), 3)
    assert len(xs) == 3 * 32
    assert set(xs) == {float(i) for i in range(11)}  # every row, taken again to fill each batch
    assert all(int(x) % 2 == y for x, y in zip(xs, ys))


def test_a_split_without_rows_is_named_with_the_fix(tmp_path):
    empty = _write_rows(tmp_path / "empty.tfrecord", 0)
    with pytest.raises(ValueError, match=r"the `eval` split holds no rows.*Raise `eval`'s weight in `data.splits`"):
        require_rows([empty], "eval")
    with pytest.raises(ValueError, match=r"the `train` split holds no rows"):
        require_rows([str(tmp_path / "missing-*")], "train")
    require_rows([_write_rows(tmp_path / "one.tfrecord", 1)], "eval")  # one row is enough
