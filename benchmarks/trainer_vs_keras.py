"""The Trainer's `run_fn` against a hand-written Keras `model.fit`: same model, same data, same steps.

Both train the taxi spec's wide-and-deep model (built by
`components.trainer.models.model_builder`) on the same materialized transformed
examples (trainer_common.py), with Adam and batch 256, for the same number
of steps, one after the other in this process. The hand-written side is
what a Keras user writes: TFRecordDataset -> shuffle -> batch -> map(parse)
-> repeat -> prefetch, `compile()` with Keras's defaults, `fit()`. The
Trainer uses the spec's defaults (steps_per_execution 50, its own input
pipeline); a third row gives the hand-written loop those same settings,
which isolates what the framework itself costs. Throughput is steady state: from the end of the first
execution (tracing done) to the end of training.

    .venv/bin/python benchmarks/trainer_vs_keras.py [--steps 1500] [--batch 256] [--rounds 1]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from trainer_common import last_run_outputs, materialize, print_table, taxi_fn_args, tf


class SteadyRate(tf.keras.callbacks.Callback):
    """Examples/sec from the end of the first batch call to the end of training."""

    def __init__(self, batch: int):
        super().__init__()
        self.batch, self.first, self.first_step, self.last, self.last_step = batch, 0.0, 0, 0.0, 0

    def on_train_batch_end(self, batch, logs=None):
        now, step = time.perf_counter(), int(self.model.optimizer.iterations.numpy())
        if not self.first:
            self.first, self.first_step = now, step
        self.last, self.last_step = now, step

    def rate(self) -> float:
        return (self.last_step - self.first_step) * self.batch / (self.last - self.first)


def hand_written_keras(fn_args, batch: int, tuned: bool = False) -> float:
    """`tuned`: the same settings the Trainer uses (cache parsed batches, steps_per_execution 50)."""
    import tensorflow_transform as tft

    from components.trainer.models import model_builder
    from components.trainer.run_fn import _vocabulary_sizes
    from components.transform.config import TransformConfig, transformed_name

    custom = fn_args.custom_config
    config = TransformConfig.from_dict(custom["transform"])
    output = tft.TFTransformOutput(fn_args.transform_output)
    spec = output.transformed_feature_spec()
    keys = [transformed_name(name) for name in config.features]

    def parse(serialized):
        features = tf.io.parse_example(serialized, spec)
        return {k: features[k] for k in keys}, tf.cast(features[config.label_name], tf.float32)

    files = tf.io.gfile.glob(fn_args.train_files[0])
    dataset = (
        tf.data.TFRecordDataset(files)
        .shuffle(10_000)
        .batch(batch, drop_remainder=True)
        .map(parse, num_parallel_calls=tf.data.AUTOTUNE)
    )
    if tuned:
        dataset = dataset.cache()
    dataset = dataset.repeat().prefetch(tf.data.AUTOTUNE)
    tf.keras.utils.set_random_seed(0)
    model = model_builder.build_model(config, custom["model"], _vocabulary_sizes(config, output))
    model.compile(
        tf.keras.optimizers.Adam(0.001),
        "binary_crossentropy",
        metrics=["binary_accuracy"],
        steps_per_execution=50 if tuned else 1,
    )
    timer = SteadyRate(batch)
    model.fit(dataset, steps_per_epoch=fn_args.train_steps, epochs=1, verbose=0, callbacks=[timer])
    return timer.rate()


def trainer(fn_args) -> float:
    from components.trainer.run_fn import run_fn

    run_fn(fn_args)
    with open(f"{fn_args.model_run_dir}/training_summary.json", encoding="utf-8") as handle:
        import json

        return json.load(handle)["examples_per_second"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--work-dir", default=None)
    args = parser.parse_args()
    examples_dir, graph_dir = last_run_outputs()
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="trainer_vs_keras_")
    patterns = materialize(examples_dir, graph_dir, work_dir)
    training = {"train_steps": args.steps, "batch_size": args.batch, "eval_steps": 5, "checkpoint_every_steps": None}
    keras_rates, tuned_rates, trainer_rates = [], [], []
    for round_index in range(args.rounds):
        keras_rates.append(
            hand_written_keras(
                taxi_fn_args(work_dir, f"keras_{round_index}", training, patterns, graph_dir), args.batch
            )
        )
        tuned_rates.append(
            hand_written_keras(
                taxi_fn_args(work_dir, f"tuned_{round_index}", training, patterns, graph_dir), args.batch, tuned=True
            )
        )
        trainer_rates.append(trainer(taxi_fn_args(work_dir, f"trainer_{round_index}", training, patterns, graph_dir)))
    keras, tuned, ours = (statistics.median(r) for r in (keras_rates, tuned_rates, trainer_rates))
    print(f"\n{args.steps} steps of batch {args.batch}, taxi wide-and-deep, CPU, median of {args.rounds} round(s)\n")
    print_table(
        ["training loop", "steady examples/sec", "vs Keras"],
        [
            ["hand-written Keras model.fit", f"{keras:,.0f}", "1.00x"],
            [
                "hand-written, Trainer's settings (cache, steps_per_execution 50)",
                f"{tuned:,.0f}",
                f"{tuned / keras:.2f}x",
            ],
            ["Trainer run_fn", f"{ours:,.0f}", f"{ours / keras:.2f}x"],
        ],
    )


if __name__ == "__main__":
    main()
