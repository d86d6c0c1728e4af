"""The Trainer on images: against a hand-written Keras loop, its input pipeline's headroom, precision and XLA.

Data: scikit-learn's bundled digits (1797 grey 8x8 images, no download)
written as PNG files in class folders (`pipelines/examples/data/
write_digits_images.py`, at `--png-size`), read into ExampleGen's image
tf.Examples (`components.example_gen.image_folder.to_example`: the PNG bytes
and the class), 3 of every 4 to train; a real tf.Transform graph (Beam, the
framework's own `preprocessing_fn`) decodes and resizes them to
`--image-size`. The Trainer reads the raw examples and runs that graph in its
tf.data pipeline (`transform.materialize: false`, the default).

(a) Training images/s, steady state (from the end of the first execution):
    the Trainer's `run_fn` against a hand-written Keras loop, the same
    model (`model_builder`: the same backbone and head), batch, steps, Adam
    and learning rate. The hand-written loop is what a Keras user writes:
    TFRecordDataset -> shuffle -> map(parse, decode_image, resize) -> batch ->
    repeat -> prefetch, `compile()` with Keras's defaults, `fit()`. A second
    hand-written row uses the Trainer's settings (the decoded split cached in
    memory, its steps_per_execution), which isolates what the framework costs.
(b) Input images/s: each pipeline read by a consumer that takes no time
    (`next()` only), against the Trainer's training images/s: the headroom.
    A GPU step is many times faster than this CPU's, so the line to read is
    "decode every batch": what feeds a GPU before the split is cached.
(c) The Trainer with `training.mixed_precision` off / float16 / bfloat16
    and `training.xla` off / on, as far as each runs on this machine.

    .venv/bin/python benchmarks/trainer_images.py [--backbone MobileNetV2] [--image-size 64] [--batch 64]
        [--steps 200] [--steps-per-execution 20] [--precisions off float16 bfloat16] [--xla off on]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trainer_common import REPO, print_table, tf  # noqa: E402
from trainer_vs_keras import SteadyRate  # noqa: E402

sys.path.insert(0, os.path.join(REPO, "pipelines", "examples", "data"))
from write_digits_images import write_digits  # noqa: E402

from components.transform.config import TransformConfig, transformed_name  # noqa: E402

LABEL = "digit"
RAW_SPEC = {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.string)}


@dataclasses.dataclass(frozen=True)
class ImageData:
    """Raw image examples (GZIP TFRecords of ExampleGen's tf.Examples) and their Transform graph."""

    train: str
    eval: str
    transform_output: str
    config: TransformConfig
    train_images: int


def _image_config(image_size: int, channels: int) -> TransformConfig:
    feature = {"transform": "image", "image_size": [image_size, image_size], "channels": channels}
    classes = [str(digit) for digit in range(10)]
    return TransformConfig({"image": feature}, LABEL, "classification", label_column="label", classes=classes)


def _write_examples(path: str, rows: Sequence[dict[str, bytes]]) -> None:
    from components.example_gen.image_folder import to_example

    os.makedirs(os.path.dirname(path), exist_ok=True)
    with tf.io.TFRecordWriter(path, options="GZIP") as writer:
        for row in rows:
            writer.write(to_example(row["image"], row["label"].decode(), row["size"], row["size"]).SerializeToString())


def prepare(
    work_dir: str, image_size: int, png_size: int = 32, channels: int = 3, limit: Optional[int] = None
) -> ImageData:
    """Writes the digits as PNG files, their tf.Examples, and a real Transform graph under `work_dir`.

    Args:
      work_dir: where everything goes (created).
      image_size: the side Transform resizes to (at least 32: Keras Applications refuse less).
      png_size: the side of the PNG files.
      channels: 1 (grey) or 3 (the PNGs are grey; decoding to RGB repeats the channel).
      limit: use only the first `limit` images (tests).

    Returns:
      The `ImageData`.
    """
    import apache_beam as beam
    import tensorflow_transform.beam as tft_beam
    from tensorflow_transform.tf_metadata import dataset_metadata, metadata_io, schema_utils

    from components.example_gen.image_files import list_image_folder
    from components.transform.preprocessing import preprocessing_fn

    folder = os.path.join(work_dir, "digits")
    write_digits(folder, png_size)
    listing = list_image_folder(folder)
    rows = []
    for path, label in sorted(listing.images, key=lambda item: os.path.basename(item[0]))[:limit]:  # mixed classes
        with open(path, "rb") as handle:
            rows.append({"image": handle.read(), "label": label.encode(), "size": png_size})
    train = [row for index, row in enumerate(rows) if index % 4]
    evaluation = [row for index, row in enumerate(rows) if not index % 4]
    _write_examples(os.path.join(work_dir, "raw", "Split-train", "part-0.gz"), train)
    _write_examples(os.path.join(work_dir, "raw", "Split-eval", "part-0.gz"), evaluation)
    config = _image_config(image_size, channels)
    metadata = dataset_metadata.DatasetMetadata(schema_utils.schema_from_feature_spec(RAW_SPEC))
    output = os.path.join(work_dir, "transform_graph")
    options = beam.options.pipeline_options.PipelineOptions(
        ["--runner=apache_beam.runners.portability.fn_api_runner.FnApiRunner"]
    )
    instances = [{"image": row["image"], "label": row["label"]} for row in train]
    with beam.Pipeline(options=options) as pipeline, tft_beam.Context(temp_dir=os.path.join(work_dir, "tft_tmp")):
        transform_fn = (pipeline | beam.Create(instances), metadata) | tft_beam.AnalyzeDataset(
            lambda inputs: preprocessing_fn(inputs, config.to_dict())
        )
        _ = transform_fn | tft_beam.WriteTransformFn(output)
    metadata_io.write_metadata(metadata, os.path.join(output, "metadata"))  # as TFX's Transform does
    return ImageData(
        train=os.path.join(work_dir, "raw", "Split-train", "*"),
        eval=os.path.join(work_dir, "raw", "Split-eval", "*"),
        transform_output=output,
        config=config,
        train_images=len(train),
    )


def fn_args(data: ImageData, run_dir: str, training: dict[str, Any], model: dict[str, Any]):
    """A TFX FnArgs for `run_fn` on the raw image examples (Transform's graph in the tf.data pipeline)."""
    from tfx.components.trainer.fn_args_utils import FnArgs

    return FnArgs(
        working_dir=run_dir,
        train_files=[data.train],
        eval_files=[data.eval],
        train_steps=training["train_steps"],
        eval_steps=training["eval_steps"],
        transform_output=data.transform_output,
        transform_graph_path=data.transform_output,
        serving_model_dir=os.path.join(run_dir, "model", "Format-Serving"),
        model_run_dir=os.path.join(run_dir, "model_run"),
        custom_config={
            "transform": data.config.to_dict(),
            "model": model,
            "training": training,
            "materialized": False,
            "metrics": ["accuracy"],
        },
    )


def trainer(args) -> dict[str, Any]:
    """Runs `run_fn`; returns its training summary (`examples_per_second` is steady state)."""
    from components.trainer.run_fn import run_fn

    tf.keras.backend.clear_session()
    run_fn(args)
    with open(os.path.join(args.model_run_dir, "training_summary.json"), encoding="utf-8") as handle:
        return json.load(handle)


def keras_dataset(data: ImageData, batch: int, cache: bool = False) -> tf.data.Dataset:
    """What a Keras user writes: parse, decode and resize each image, batch; `cache` keeps the decoded split."""
    feature = data.config.features["image"]
    height, width = feature["image_size"]
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(data.config.classes, tf.range(len(data.config.classes), dtype=tf.int64)),
        default_value=-1,
    )

    def decode(serialized):
        example = tf.io.parse_single_example(serialized, RAW_SPEC)
        image = tf.io.decode_image(example["image"], channels=feature["channels"], expand_animations=False)
        image.set_shape([None, None, feature["channels"]])
        pixels = tf.image.resize(tf.cast(image, tf.float32), [height, width])
        return {transformed_name("image"): pixels}, table.lookup(example["label"])

    dataset = tf.data.TFRecordDataset(tf.io.gfile.glob(data.train), "GZIP")
    if cache:
        dataset = dataset.map(decode, num_parallel_calls=tf.data.AUTOTUNE).cache().shuffle(10_000)
    else:
        dataset = dataset.shuffle(10_000).map(decode, num_parallel_calls=tf.data.AUTOTUNE)
    return dataset.batch(batch, drop_remainder=True).repeat().prefetch(tf.data.AUTOTUNE)


def hand_written_keras(
    data: ImageData, model: dict[str, Any], batch: int, steps: int, learning_rate: float, tuned_steps: int = 0
) -> float:
    """Steady training images/s of a plain `model.fit`; `tuned_steps` > 0: cached input and that steps_per_execution."""
    from components.trainer.models import model_builder

    tf.keras.backend.clear_session()
    tf.keras.utils.set_random_seed(0)
    keras_model = model_builder.build_model(data.config, model, {})
    keras_model.compile(
        tf.keras.optimizers.Adam(learning_rate),
        "sparse_categorical_crossentropy",
        metrics=["accuracy"],
        steps_per_execution=tuned_steps or 1,
    )
    timer = SteadyRate(batch)
    keras_model.fit(
        keras_dataset(data, batch, cache=bool(tuned_steps)),
        steps_per_epoch=steps,
        epochs=1,
        verbose=0,
        callbacks=[timer],
    )
    return timer.rate()


def input_rate(dataset: tf.data.Dataset, batch: int, batches: int, warmup: int = 3) -> float:
    """Images/s a consumer that takes no time (`next()` only) gets from `dataset`, after `warmup` batches."""
    iterator = iter(dataset)
    for _ in range(warmup):
        next(iterator)
    started = time.perf_counter()
    for _ in range(batches):
        next(iterator)
    return batches * batch / (time.perf_counter() - started)


def trainer_dataset(args, cache: bool) -> tf.data.Dataset:
    """The Trainer's own training dataset for `args`; `cache`: with its cache budget, else decode every batch."""
    import tensorflow_transform as tft

    from components.trainer.input.datasets import build_datasets
    from components.trainer.options import TrainingOptions

    custom = args.custom_config
    training = TrainingOptions.from_dict({**custom["training"], **({} if cache else {"cache_budget_mb": 0})})
    config = TransformConfig.from_dict(custom["transform"])
    train, _, _ = build_datasets(args, config, tft.TFTransformOutput(args.transform_output), training, False)
    return train


def precision_grid(
    data: ImageData,
    work_dir: str,
    training: dict[str, Any],
    model: dict[str, Any],
    precisions: Sequence[str],
    xla_modes: Sequence[str],
    done: Optional[dict[tuple[str, str], dict]] = None,
) -> dict[tuple[str, str], str]:
    """Trainer images/s for each (mixed_precision, xla); a failure is reported as its first line."""
    results = {}
    for precision in precisions:
        for xla in xla_modes:
            key = (precision, xla)
            if done and key in done:
                results[key] = f"{done[key]['examples_per_second']:,.0f}"
                continue
            settings = {**training, "mixed_precision": precision, "xla": xla == "on"}
            try:
                report = trainer(fn_args(data, os.path.join(work_dir, f"grid_{precision}_{xla}"), settings, model))
                results[key] = f"{report['examples_per_second']:,.0f}"
            except Exception as error:  # noqa: BLE001 - "as far as it runs": the table says what failed
                results[key] = f"failed: {type(error).__name__}: {str(error).strip().splitlines()[0][:80]}"
    return results


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backbone", default="MobileNetV2", choices=["MobileNetV2", "EfficientNetB0", "ResNet50"])
    parser.add_argument("--image-size", type=int, default=64)
    parser.add_argument("--png-size", type=int, default=32)
    parser.add_argument("--channels", type=int, default=3, choices=[1, 3])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--steps-per-execution", type=int, default=20)
    parser.add_argument("--input-batches", type=int, default=50, help="batches each input pipeline is timed over")
    parser.add_argument("--precisions", nargs="+", default=["off", "float16", "bfloat16"])
    parser.add_argument("--xla", nargs="+", default=["off", "on"], choices=["off", "on"])
    parser.add_argument("--limit", type=int, default=None, help="use only this many images (tests)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of the three loops (medians)")
    parser.add_argument("--work-dir", default=None)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> None:
    args = _parser().parse_args(argv)
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="trainer_images_")
    data = prepare(work_dir, args.image_size, args.png_size, args.channels, args.limit)
    model = {"type": "image_classifier", "backbone": args.backbone, "weights": None, "hidden_units": [64]}
    learning_rate = 0.001
    training = {
        "train_steps": args.steps,
        "eval_steps": 2,
        "batch_size": args.batch,
        "learning_rate": learning_rate,
        "steps_per_execution": args.steps_per_execution,
        "checkpoint_every_steps": None,
        "mixed_precision": "off",
        "xla": False,
        "seed": 0,
    }
    setting = (
        f"{args.backbone} from random weights at {args.image_size}x{args.image_size}x{args.channels}, batch "
        f"{args.batch}, {args.steps} steps, Adam, {data.train_images} digit PNGs, CPU ({os.cpu_count()} cores)"
    )

    # Alternating rounds, medians: a machine whose load changes during the run favours no loop.
    keras_rates, tuned_rates, reports = [], [], []
    for index in range(args.rounds):
        keras_rates.append(hand_written_keras(data, model, args.batch, args.steps, learning_rate))
        reports.append(trainer(fn_args(data, os.path.join(work_dir, f"trainer_{index}"), training, model)))
        tuned_rates.append(
            hand_written_keras(data, model, args.batch, args.steps, learning_rate, args.steps_per_execution)
        )
        print(
            f"round {index + 1}/{args.rounds}: keras {keras_rates[-1]:,.0f}, trainer "
            f"{reports[-1]['examples_per_second']:,.0f}, tuned {tuned_rates[-1]:,.0f} images/s",
            flush=True,
        )
    keras, tuned = statistics.median(keras_rates), statistics.median(tuned_rates)
    report = sorted(reports, key=lambda r: r["examples_per_second"])[(len(reports) - 1) // 2]
    ours = report["examples_per_second"]
    setting += f", median of {args.rounds} alternating round(s)"
    print(f"\n(a) Training images/s: {setting}\n")
    print_table(
        ["training loop", "steady images/sec", "vs Keras"],
        [
            ["hand-written Keras model.fit (decode per image, steps_per_execution 1)", f"{keras:,.0f}", "1.00x"],
            [
                f"hand-written, Trainer's settings (decoded split cached, steps_per_execution "
                f"{args.steps_per_execution})",
                f"{tuned:,.0f}",
                f"{tuned / keras:.2f}x",
            ],
            ["Trainer run_fn", f"{ours:,.0f}", f"{ours / keras:.2f}x"],
        ],
    )

    trainer_args = fn_args(data, os.path.join(work_dir, "input"), training, model)
    inputs = [
        (
            "Trainer, decode every batch (cache off)",
            input_rate(trainer_dataset(trainer_args, False), args.batch, args.input_batches),
        ),
        (
            "Trainer, its settings (decoded split cached)",
            input_rate(trainer_dataset(trainer_args, True), args.batch, args.input_batches),
        ),
        (
            "hand-written Keras (decode per image)",
            input_rate(keras_dataset(data, args.batch), args.batch, args.input_batches),
        ),
    ]
    print(
        f"\n(b) Input pipeline images/s, consumer that takes no time ({args.input_batches} batches of {args.batch})\n"
    )
    print_table(
        ["input pipeline", "images/sec", "headroom over Trainer training"],
        [[name, f"{rate:,.0f}", f"{rate / ours:.1f}x"] for name, rate in inputs],
    )

    grid = precision_grid(data, work_dir, training, model, args.precisions, args.xla, done={("off", "off"): report})
    print(f"\n(c) Trainer images/s by training.mixed_precision and training.xla: {setting}\n")
    print_table(
        ["mixed_precision", *[f"xla {mode}" for mode in args.xla]],
        [[precision, *[grid[(precision, mode)] for mode in args.xla]] for precision in args.precisions],
    )

    decode = inputs[0][1]
    print("\nREADME:")
    print(
        f"- Trainer vs hand-written Keras on images ({setting}): {ours:,.0f} vs {keras:,.0f} images/s "
        f"({ours / keras:.2f}x); vs the hand-written loop with the Trainer's settings {ours / tuned:.2f}x."
    )
    print(
        f"- Input headroom: decoding every batch gives {decode:,.0f} images/s, {decode / ours:.1f}x what training "
        f"takes here; a GPU training faster than {decode:,.0f} images/s waits for decode until the split is "
        f"cached ({inputs[1][1]:,.0f} images/s once cached)."
    )


if __name__ == "__main__":
    main()
