"""Which strategy trains on which devices: TF_CONFIG, GPU lists, learning-rate scaling, global batch."""

from __future__ import annotations

import dataclasses
import json

import pytest
import tensorflow as tf

from components.trainer.devices.gpu_monitor import nvml_indices
from components.trainer.devices.strategy import (
    choose_strategy,
    cluster_task_count,
    create_strategy,
    is_chief,
    read_tf_config,
    select_gpus,
)
from components.trainer.options import TrainingOptions
from pipelines.spec.models import TrainingSpec

TWO_WORKERS = {"cluster": {"worker": ["127.0.0.1:1", "127.0.0.1:2"]}, "task": {"type": "worker", "index": 1}}


@pytest.mark.parametrize(
    ("requested", "tasks", "gpus", "expected"),
    [
        ("auto", 0, 0, "one_device"),
        ("auto", 1, 1, "one_device"),
        ("auto", 1, 2, "mirrored"),
        ("auto", 2, 0, "multi_worker"),
        ("auto", 3, 8, "multi_worker"),
        ("one_device", 1, 4, "one_device"),
        ("mirrored", 1, 0, "mirrored"),
        ("multi_worker", 1, 0, "multi_worker"),
    ],
)
def test_auto_picks_multi_worker_for_a_cluster_then_mirrored_for_several_gpus(requested, tasks, gpus, expected):
    assert choose_strategy(requested, task_count=tasks, gpu_count=gpus) == expected


def test_an_unknown_strategy_names_the_choices():
    with pytest.raises(ValueError, match=r"unknown strategy\. Expected one of auto, one_device, .*Received: "):
        choose_strategy("horovod", 1, 0)


def test_tf_config_is_read_from_the_environment():
    assert read_tf_config({}) == {}
    assert read_tf_config({"TF_CONFIG": json.dumps(TWO_WORKERS)}) == TWO_WORKERS
    with pytest.raises(ValueError, match=r"TF_CONFIG is not valid JSON .*Expected .*Received: '\{worker'"):
        read_tf_config({"TF_CONFIG": "{worker"})


@pytest.mark.parametrize(
    ("tf_config", "tasks", "chief"),
    [
        ({}, 0, True),
        (TWO_WORKERS, 2, False),
        ({**TWO_WORKERS, "task": {"type": "worker", "index": 0}}, 2, True),
        ({"cluster": {"chief": ["a:1"], "worker": ["b:1"]}, "task": {"type": "worker", "index": 0}}, 2, False),
        ({"cluster": {"chief": ["a:1"], "worker": ["b:1"]}, "task": {"type": "chief", "index": 0}}, 2, True),
        ({"cluster": {"worker": ["a:1"], "ps": ["p:1"], "evaluator": ["e:1"]}, "task": {"type": "worker"}}, 1, True),
    ],
)
def test_cluster_size_and_chief_come_from_tf_config(tf_config, tasks, chief):
    assert cluster_task_count(tf_config) == tasks
    assert is_chief(tf_config) is chief


def test_without_gpus_auto_trains_on_the_default_cpu_strategy():
    choice = create_strategy("auto", environ={"TF_CONFIG": json.dumps({"cluster": {"worker": ["a:1"]}})})
    assert (choice.kind, choice.replicas, choice.gpus, choice.is_chief) == ("one_device", 1, (), True)
    assert choice.strategy is tf.distribute.get_strategy()


@pytest.mark.parametrize(
    ("requested", "visible", "expected"), [(None, 0, ()), (None, 3, (0, 1, 2)), ([2, 0], 4, (2, 0))]
)
def test_gpu_list_selects_among_visible_gpus(requested, visible, expected):
    assert select_gpus(requested, visible) == expected


@pytest.mark.parametrize("requested", [[2], [0, 0], [-1]])
def test_a_gpu_list_naming_missing_gpus_says_how_many_are_visible(requested):
    with pytest.raises(
        ValueError, match=r"Expected distinct indices below 2 \(2 visible, after CUDA_VISIBLE_DEVICES\)"
    ):
        select_gpus(requested, 2)


def test_asking_for_a_gpu_on_a_cpu_machine_fails_before_training():
    with pytest.raises(ValueError, match=r"Received: gpus=\[0\]\. Fix `training.gpus`, or set it to null"):
        create_strategy("auto", gpus=[0], environ={})


@pytest.mark.parametrize(
    ("tf_indices", "cuda_visible_devices", "expected"),
    [([0, 1], None, [0, 1]), ([0, 1], "2,3", [2, 3]), ([1], "5, 7", [7]), ([0], "GPU-8f2a,GPU-11c3", [0])],
)
def test_gpu_metrics_map_tensorflow_indices_through_cuda_visible_devices(tf_indices, cuda_visible_devices, expected):
    environ = {} if cuda_visible_devices is None else {"CUDA_VISIBLE_DEVICES": cuda_visible_devices}
    assert nvml_indices(tf_indices, environ) == expected


@pytest.mark.parametrize(
    ("settings", "replicas", "global_batch", "learning_rate"),
    [
        ({"batch_size": 64}, 1, 64, 0.001),
        ({"batch_size": 64}, 4, 256, 0.001),
        ({"batch_size": 64, "scale_learning_rate": True}, 4, 256, 0.004),
        ({"batch_size": 32, "gradient_accumulation_steps": 4, "scale_learning_rate": True}, 2, 256, 0.008),
    ],
)
def test_global_batch_and_linear_learning_rate_scaling(settings, replicas, global_batch, learning_rate):
    options = TrainingOptions.from_dict(settings)
    assert options.global_batch(replicas) == global_batch
    assert options.scaled_learning_rate(replicas) == pytest.approx(learning_rate)


def test_trainer_defaults_match_the_spec_defaults():
    spec = dataclasses.asdict(TrainingSpec())
    options = dataclasses.asdict(TrainingOptions())
    assert set(options) <= set(spec)
    assert {name: spec[name] for name in options} == options
    assert TrainingOptions.from_dict(spec) == TrainingOptions()
