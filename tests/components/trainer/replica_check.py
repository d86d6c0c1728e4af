"""Trains one small `TrainerModel` on one device and on 2 logical CPUs; prints the results as JSON.

    python replica_check.py [FN_ARGS.json ...]

Then runs the real `run_fn` over each FnArgs file, on the same 2 logical
CPUs (`training.strategy: mirrored` uses both). Run in a fresh process: the logical CPU devices must be configured before
TensorFlow initialises. Every case starts from the same weights and sees the
same examples in the same order (no shuffling), so synchronous data
parallelism must give the same weights as one device on the same global
batch, and gradient accumulation the same as one step on the whole batch.
"""

from __future__ import annotations

import json
import sys

from components import ensure_legacy_keras  # noqa: F401 - Keras 2 before TensorFlow loads

CASES = {
    # name: (replicas, gradient accumulation steps, global batch)
    "one_device_batch_64": (1, 1, 64),
    "mirrored_batch_64": (2, 1, 64),
    "one_device_batch_128": (1, 1, 128),
    "mirrored_accumulate_2_batch_128": (2, 2, 128),
}
STEPS = 6


def main() -> int:
    import numpy as np
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    from components.common.autograph_rules import skip_autograph_for_tf_keras
    from components.trainer.training.trainer_model import StepTimer, as_trainer_model

    skip_autograph_for_tf_keras()  # as run_fn does: tracing is then seconds, not half a minute

    rng = np.random.default_rng(0)
    x = rng.normal(size=(1024, 4)).astype("float32")
    y = (x[:, :1] + x[:, 1:2] > 0).astype("float32")

    def train(replicas: int, accumulation: int, global_batch: int) -> dict:
        strategy = (
            tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]) if replicas == 2 else tf.distribute.get_strategy()
        )
        tf.keras.utils.set_random_seed(0)
        with strategy.scope():
            inputs = tf.keras.Input((4,))
            hidden = tf.keras.layers.Dense(8, activation="relu")(inputs)
            model = as_trainer_model(tf.keras.Model(inputs, tf.keras.layers.Dense(1, activation="sigmoid")(hidden)))
            model.accumulation_steps = accumulation
            model.step_timer = StepTimer()
            model.compile(tf.keras.optimizers.SGD(0.5), "binary_crossentropy", steps_per_execution=2)
        initial = [w.tolist() for w in model.get_weights()]
        dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(global_batch, drop_remainder=True).repeat()
        history = model.fit(dataset, steps_per_epoch=STEPS, epochs=1, verbose=0)
        return {
            "replicas": strategy.num_replicas_in_sync,
            "initial": initial,
            "weights": [w.tolist() for w in model.get_weights()],
            "loss": history.history["loss"][-1],
            "optimizer_steps": int(model.optimizer.iterations.numpy()),
            "timed_steps": model.step_timer.totals()["steps"],
        }

    results = {name: train(*case) for name, case in CASES.items()}
    from components.trainer import worker

    for path in sys.argv[1:]:
        worker.main([path])
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
