"""The training summary: on the TFX Model artifact, in training_summary.json; TensorBoard logs and traces."""

from __future__ import annotations

import glob
import json
import os

import pytest
import tensorflow as tf

from components.trainer.monitoring.summary import SUMMARY_FILE, accelerator_hours, profile_batches


def test_accelerator_hours_count_every_gpu_of_every_worker():
    assert accelerator_hours(4, 2, 1800.0) == 4.0
    assert accelerator_hours(0, 3, 3600.0) == 0.0


@pytest.mark.parametrize(
    ("steps", "steps_per_execution", "expected"),
    [(None, 50, 0), ((101, 150), 50, (3, 3)), ((6, 10), 5, (2, 2)), ((1, 100), 10, (1, 10))],
)
def test_profile_steps_become_tensorboard_executions(steps, steps_per_execution, expected):
    assert profile_batches(steps, steps_per_execution) == expected


def test_summary_is_recorded_on_the_tfx_model_artifact(observed_run):
    properties = {
        name: observed_run.model.get_custom_property(name)
        for name in (
            "training_examples_per_second",
            "training_mean_step_seconds",
            "training_input_wait_fraction",
            "training_replicas",
            "training_precision_policy",
            "training_accelerator_hours",
            "training_strategy",
            "training_optimizer_steps",
        )
    }
    assert properties["training_examples_per_second"] > 0
    assert 0 < properties["training_mean_step_seconds"] < 10
    assert 0 <= properties["training_input_wait_fraction"] <= 1
    assert properties["training_replicas"] == 1
    assert properties["training_precision_policy"] == "float32"
    assert properties["training_accelerator_hours"] == 0.0  # no GPU here
    assert properties["training_strategy"] == "one_device"
    assert properties["training_optimizer_steps"] == 30


def test_summary_file_matches_the_artifact(observed_run):
    with open(os.path.join(observed_run.model_run_dir, SUMMARY_FILE), encoding="utf-8") as handle:
        summary = json.load(handle)
    assert summary["examples_per_second"] == observed_run.model.get_custom_property("training_examples_per_second")
    assert summary["global_batch"] == 32 and summary["workers"] == 1 and summary["resumed_from_step"] == 0
    assert set(summary["final"]) >= {"loss", "binary_accuracy", "val_loss"}


def _scalar_tags(directory: str) -> set[str]:
    tags = set()
    for path in glob.glob(os.path.join(directory, "events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            tags.update(value.tag for value in event.summary.value)
    return tags


def test_tensorboard_scalars_are_written_per_execution_and_per_epoch(observed_run):
    assert {"batch_loss", "epoch_loss", "epoch_binary_accuracy"} <= _scalar_tags(
        os.path.join(observed_run.model_run_dir, "train")
    )
    assert "epoch_loss" in _scalar_tags(os.path.join(observed_run.model_run_dir, "validation"))


def test_profile_steps_write_a_profiler_trace(observed_run):
    traces = glob.glob(os.path.join(observed_run.model_run_dir, "plugins", "profile", "*", "*.xplane.pb"))
    assert len(traces) == 1 and os.path.getsize(traces[0]) > 0
