"""Our tf.data input pipeline against TFX's `data_accessor.tf_dataset_factory`, side by side.

Both read the same transformed taxi examples (materialized from the last
local run, see trainer_common.py) in batches of 256 for 5 epochs, shuffled,
as a trainer would. TFX's side is what its taxi example's `_input_fn` does:
`fn_args.data_accessor.tf_dataset_factory(files, TensorFlowDatasetOptions(
batch_size, label_key), schema)` (tfx_bsl TFXIO). Elements are pulled in a
`tf.function` loop, so Python does not slow either side. Epoch 1 includes
start-up (and our in-memory cache filling); "steady" is epochs 2-5.

    .venv/bin/python benchmarks/trainer_input_pipeline.py [--work-dir DIR] [--epochs 5] [--batch 256] [--run ROOT]

`--run` takes another taxi run's root, e.g. the x100 run `benchmarks/scale.py
--workdir W` keeps at `W/ours-x100/run`.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from trainer_common import RUN_DIR, last_run_outputs, materialize, print_table, tf, transform_config


def ours(pattern: str, spec: dict, label: str, batch: int) -> tf.data.Dataset:
    from components.trainer.input.input_pipeline import InputOptions, make_dataset

    return make_dataset([pattern], spec, label, InputOptions(batch_size=batch, shuffle=True, seed=0))


def tfx_data_accessor(examples_root: str, schema, label: str, batch: int) -> tf.data.Dataset:
    from tfx.components.trainer.fn_args_utils import DataAccessor
    from tfx.components.util import tfxio_utils
    from tfx.types import artifact_utils, standard_artifacts
    from tfx_bsl.public import tfxio

    examples = standard_artifacts.Examples()
    examples.uri = examples_root
    examples.split_names = artifact_utils.encode_split_names(["train", "eval"])
    accessor = DataAccessor(
        tf_dataset_factory=tfxio_utils.get_tf_dataset_factory_from_artifact([examples], []),
        record_batch_factory=None,
        data_view_decode_fn=None,
    )
    files = tf.io.gfile.glob(f"{examples_root}/Split-train/*")
    return accessor.tf_dataset_factory(files, tfxio.TensorFlowDatasetOptions(batch_size=batch, label_key=label), schema)


@tf.function
def _drain(iterator, steps):
    rows = tf.constant(0, tf.int64)
    for _ in tf.range(steps):
        _, label = next(iterator)
        rows += tf.cast(tf.shape(label)[0], tf.int64)
    return rows


def measure(dataset: tf.data.Dataset, steps_per_epoch: int, epochs: int) -> list[float]:
    """Examples per second of each epoch."""
    iterator = iter(dataset)
    rates = []
    for _ in range(epochs):
        started = time.perf_counter()
        rows = int(_drain(iterator, tf.constant(steps_per_epoch)))
        rates.append(rows / (time.perf_counter() - started))
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work-dir", default=None)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--run", default=RUN_DIR, help="the taxi run's root (default: the bundled spec's)")
    args = parser.parse_args()
    import tensorflow_transform as tft

    examples_dir, graph_dir = last_run_outputs(args.run)
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="trainer_input_bench_")
    patterns = materialize(examples_dir, graph_dir, work_dir)
    output = tft.TFTransformOutput(graph_dir)
    label = transform_config().label_name
    rows = sum(1 for _ in tf.data.TFRecordDataset(tf.io.gfile.glob(patterns["train"])))
    steps = rows // args.batch
    print(f"{rows} transformed train examples, batch {args.batch}, {steps} batches/epoch, {args.epochs} epochs\n")
    results = {
        "TFX data_accessor.tf_dataset_factory": measure(
            tfx_data_accessor(work_dir, output.transformed_metadata.schema, label, args.batch), steps, args.epochs
        ),
        "ours (components.trainer.input.input_pipeline)": measure(
            ours(patterns["train"], output.transformed_feature_spec(), label, args.batch), steps, args.epochs
        ),
    }
    baseline = statistics.mean(results["TFX data_accessor.tf_dataset_factory"][1:])
    table = []
    for name, rates in results.items():
        steady = statistics.mean(rates[1:])
        table.append(
            [name, f"{rates[0]:,.0f}", f"{steady:,.0f}", f"{min(rates[1:]):,.0f}", f"{steady / baseline:.1f}x"]
        )
    print_table(
        ["input pipeline", "epoch 1 ex/s", f"steady ex/s (epochs 2-{args.epochs})", "slowest steady epoch", "vs TFX"],
        table,
    )


if __name__ == "__main__":
    main()
