"""The accelerator memory estimate: hand-computed figures, a measured peak, the batch that fits, the log line."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys

import pytest
import tensorflow as tf
from trainer_fixtures import make_fn_args

from components.trainer.devices import accelerator_memory as memory
from components.trainer.run_fn import run_fn

GIB = 2**30


def _small_cnn() -> tf.keras.Model:
    inputs = tf.keras.Input((8, 8, 3))
    x = tf.keras.layers.Conv2D(4, 3, padding="same")(inputs)
    x = tf.keras.layers.ReLU()(x)
    x = tf.keras.layers.Flatten()(x)
    return tf.keras.Model(inputs, tf.keras.layers.Dense(2)(x))


def test_activations_are_each_layer_output_by_hand():
    # input 8x8x3 + conv 8x8x4 + relu 8x8x4 + dense 2, float32; Flatten is a view of the ReLU's output.
    assert memory.activation_bytes_per_example(_small_cnn()) == (8 * 8 * 3 + 8 * 8 * 4 + 8 * 8 * 4 + 2) * 4


def test_attention_adds_projections_and_the_sequence_squared_scores_by_hand():
    inputs = tf.keras.Input((4, 8))
    outputs = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=3)(inputs, inputs)
    per_head = 4 * 3 * 3 + 2 * 4 * 4 + 4 * 3  # q, k, v projections; scores and probabilities; context
    assert memory.activation_bytes_per_example(tf.keras.Model(inputs, outputs)) == (2 * 4 * 8 + 2 * per_head) * 4


def test_a_nested_backbone_is_counted_layer_by_layer():
    backbone = tf.keras.applications.MobileNetV2(weights=None, include_top=False, input_shape=(32, 32, 3))
    inputs = tf.keras.Input((32, 32, 3))
    pooled = tf.keras.layers.GlobalAveragePooling2D()(backbone(inputs))
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(10)(pooled))
    head = (1280 + 10) * 4  # the pooled features and the logits
    assert memory.activation_bytes_per_example(model) == memory.activation_bytes_per_example(backbone) + head


def test_weights_match_count_params_and_adam_slots_match_the_built_optimizer():
    model = _small_cnn()
    model.compile(tf.keras.optimizers.Adam(), "mse")
    model.optimizer.build(model.trainable_variables)
    estimate = memory.estimate(model, batch_size=16)
    assert estimate.weights == model.count_params() * 4
    slots = sum(v.shape.num_elements() for v in model.optimizer.variables if v.shape.rank > 0)  # not `iterations`
    assert estimate.optimizer == slots * 4 == 2 * estimate.weights
    assert estimate.gradients == estimate.weights
    assert memory.estimate(model, 16, "sgd").optimizer == 0
    assert memory.estimate(model, 16, accumulation_steps=4).gradients == 2 * estimate.weights


def test_mixed_precision_halves_the_activations_and_adds_the_half_precision_weight_copies():
    tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        mixed = tf.keras.applications.MobileNetV2(weights=None, input_shape=(32, 32, 3), classes=10)
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")
    full = tf.keras.applications.MobileNetV2(weights=None, input_shape=(32, 32, 3), classes=10)
    ratio = memory.activation_bytes_per_example(mixed) / memory.activation_bytes_per_example(full)
    assert 0.5 <= ratio < 0.55  # the float32 input and softmax head stay float32
    half_precision_copies = sum(v.shape.num_elements() for v in full.trainable_weights) * 2
    assert memory.estimate(mixed, 8).weights == memory.estimate(full, 8).weights + half_precision_copies


def test_the_largest_batch_is_monotone_in_memory_and_exactly_the_bound():
    model = tf.keras.applications.MobileNetV2(weights=None, input_shape=(64, 64, 3), classes=10)
    estimate = memory.estimate(model, batch_size=32)
    previous = -1
    for gib in (0.01, 0.05, 0.5, 1, 2, 4, 16, 80):
        budget = int(gib * GIB * memory.USABLE_FRACTION)
        largest = estimate.largest_batch(int(gib * GIB))
        assert largest >= previous
        previous = largest
        if largest:
            assert estimate.total(largest) <= budget < estimate.total(largest + 1)
        else:
            assert estimate.total(1) > budget
    assert estimate.total(64) == estimate.fixed + 2 * estimate.activations()


def test_a_model_without_a_layer_graph_has_no_activation_figure_and_no_bound():
    class Subclassed(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(3)

        def call(self, inputs):
            return self.dense(inputs)

    model = Subclassed()
    model(tf.zeros((1, 5)))
    estimate = memory.estimate(model, 4)
    assert estimate.activations_per_example is None and estimate.largest_batch(GIB) is None
    assert estimate.weights == (5 * 3 + 3) * 4
    assert "activations unknown: the model has no layer graph" in memory.describe(estimate, (0, GIB))[0]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"batch_size": 0}, "`batch_size` must be at least 1. Received: batch_size=0."),
        (
            {"batch_size": 8, "optimizer": "lamb"},
            "Expected one of adam, rmsprop, adagrad, sgd. Received: optimizer='lamb'",
        ),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError) as error:
        memory.estimate(_small_cnn(), **kwargs)
    assert message in str(error.value)


def _estimate(fixed: int, per_example: int, batch: int) -> memory.MemoryEstimate:
    return memory.MemoryEstimate(batch, weights=fixed, optimizer=0, gradients=0, activations_per_example=per_example)


def test_the_log_line_on_cpu_says_there_is_no_accelerator():
    message, fits = memory.describe(_estimate(GIB // 10, GIB // 64, 64), None)
    assert fits
    assert message.startswith("Trainer: about 1.1 GiB of accelerator memory per step at batch 64 (weights 102.4 MiB")
    assert message.endswith("activations 1.0 GiB); no accelerator: training runs on the CPU, in host memory.")


def test_the_log_line_on_a_gpu_names_the_batch_that_fits():
    message, fits = memory.describe(_estimate(GIB // 10, GIB // 64, 64), (0, 16 * GIB))
    assert fits
    # (16 GiB x 0.9 - 0.1 GiB) / (1/64 GiB) = 915.2 -> 915, shown as a multiple of 8
    assert message.endswith("; GPU 0 has 16.0 GiB: batch 912 would fit.")


def test_a_batch_too_large_is_a_warning_with_the_batch_that_fits_and_the_fixes():
    message, fits = memory.describe(_estimate(GIB // 10, GIB // 64, 2048), (1, 16 * GIB))
    assert not fits
    assert "GPU 1 has 16.0 GiB (14.4 GiB usable): training will likely run out of memory" in message
    assert "Expected at most 14.4 GiB per step. Received: 32.1 GiB at batch 2048; batch 912 would fit." in message
    assert "Fix: set `training.batch_size: 912`" in message and "mixed_precision: float16" in message


def test_when_not_even_one_example_fits_the_fix_is_a_smaller_model():
    message, fits = memory.describe(_estimate(20 * GIB, GIB // 64, 8), (0, 16 * GIB))
    assert not fits
    assert "not even batch 1 fits: the weights, optimizer and gradients alone take 20.0 GiB" in message
    assert "backbone: MobileNetV2" in message


def test_no_gpu_selected_means_no_device_memory():
    assert memory.device_memory([]) is None


_MEASURE = """
import json
import numpy as np
import tensorflow as tf
from components.trainer.devices import accelerator_memory as memory
inputs = tf.keras.Input((32, 32, 3))
x = inputs
for filters in (16, 32, 32):
    x = tf.keras.layers.Conv2D(filters, 3, padding="same")(x)
    x = tf.keras.layers.BatchNormalization()(x)
    x = tf.keras.layers.ReLU()(x)
x = tf.keras.layers.GlobalAveragePooling2D()(x)
model = tf.keras.Model(inputs, tf.keras.layers.Dense(10, activation="softmax")(x))
model.compile(tf.keras.optimizers.Adam(), "sparse_categorical_crossentropy")
x, y = np.random.rand(32, 32, 32, 3).astype("float32"), np.arange(32) % 10
tf.config.experimental.reset_memory_stats("CPU:0")
model.fit(tf.data.Dataset.from_tensors((x, y)).repeat(), steps_per_epoch=2, verbose=0)
peak = tf.config.experimental.get_memory_info("CPU:0")["peak"]
print(json.dumps({"peak": peak, "estimate": memory.estimate(model, 32).total()}))
"""


def test_the_estimate_is_near_the_measured_peak_of_a_training_step(repo_dir):
    # TensorFlow's BFC allocator on the CPU counts every tensor a step allocates, as on a GPU.
    env = dict(os.environ, TF_CPU_ALLOCATOR_USE_BFC="true", TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, "-c", _MEASURE], capture_output=True, text=True, cwd=repo_dir, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert 0.9 * figures["peak"] <= figures["estimate"] <= 1.6 * figures["peak"], figures


def test_the_trainer_logs_the_estimate_before_training(trainer_data, tmp_path, caplog):
    training = {"train_steps": 2, "eval_steps": 1, "batch_size": 32, "steps_per_execution": 1}
    fn_args = make_fn_args(trainer_data, str(tmp_path), training, materialized=True, model={"type": "dnn"})
    with caplog.at_level(logging.INFO, logger="absl"):
        run_fn(fn_args)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Trainer: about")]
    assert len(lines) == 1
    assert "per step at batch 32 (weights" in lines[0] and lines[0].endswith(
        "no accelerator: training runs on the CPU, in host memory."
    )
