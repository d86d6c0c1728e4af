"""Data parallelism for real: 2 logical CPU devices (MirroredStrategy) and 2 worker processes (multi-worker).

Each case runs in fresh processes: logical devices and
MultiWorkerMirroredStrategy must be set up before TensorFlow starts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from ports import free_port
from trainer_fixtures import HERE, REPO, finish, make_fn_args, read_summary, start_trainer_process

from components.trainer.worker import save_fn_args

MODEL = {"type": "dnn", "hidden_units": [8]}


@pytest.fixture(scope="module")
def two_cpu_runs(trainer_data, tmp_path_factory) -> tuple[dict, object]:
    """The replica cases of `replica_check.py`, then a run_fn `mirrored` run in the same 2-CPU process.

    Running `run_fn` after other MirroredStrategies in one process is on
    purpose: their collective keys used to collide ("Shape mismatch in the
    collective instance"), see `strategy._mirrored`.
    """
    root = tmp_path_factory.mktemp("two_cpus")
    training = {"strategy": "mirrored", "batch_size": 16, "train_steps": 20, "steps_per_execution": 5}
    fn_args = make_fn_args(trainer_data, str(root / "run"), {**training, "eval_steps": 2}, True, MODEL)
    save_fn_args(fn_args, str(root / "fn_args.json"))
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=REPO)
    result = subprocess.run(
        [sys.executable, os.path.join(HERE, "replica_check.py"), str(root / "fn_args.json")],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads(result.stdout.strip().splitlines()[-1]), fn_args


@pytest.fixture(scope="module")
def replica_runs(two_cpu_runs) -> dict:
    return two_cpu_runs[0]


def _largest_difference(first: dict, second: dict) -> float:
    return max(float(np.abs(np.array(a) - np.array(b)).max()) for a, b in zip(first["weights"], second["weights"]))


def test_two_replicas_train_exactly_like_one_device_on_the_same_global_batch(replica_runs):
    one, mirrored = replica_runs["one_device_batch_64"], replica_runs["mirrored_batch_64"]
    assert (one["replicas"], mirrored["replicas"]) == (1, 2)
    assert _largest_difference(one, {"weights": one["initial"]}) > 1e-2  # it trained
    assert _largest_difference(one, mirrored) < 1e-5
    assert mirrored["loss"] == pytest.approx(one["loss"], abs=1e-5)
    assert mirrored["optimizer_steps"] == mirrored["timed_steps"] == 6


def test_gradient_accumulation_on_two_replicas_equals_one_step_on_the_whole_batch(replica_runs):
    whole, accumulated = replica_runs["one_device_batch_128"], replica_runs["mirrored_accumulate_2_batch_128"]
    assert _largest_difference(whole, accumulated) < 1e-5
    assert accumulated["optimizer_steps"] == 6  # one update per 2 micro-batches
    assert _largest_difference(whole, replica_runs["one_device_batch_64"]) > 1e-3  # the batch size matters


def test_run_fn_mirrored_uses_both_logical_cpus_after_other_strategies_in_the_process(two_cpu_runs):
    _, fn_args = two_cpu_runs
    summary = read_summary(fn_args)
    assert (summary["strategy"], summary["replicas"], summary["global_batch"]) == ("mirrored", 2, 32)
    assert summary["optimizer_steps"] == 20
    assert summary["final"]["loss"] < 0.8  # binary cross-entropy from about log(2): it did not diverge
    assert os.path.isfile(os.path.join(fn_args.serving_model_dir, "saved_model.pb"))
    assert not os.path.exists(os.path.join(fn_args.model_run_dir, "checkpoints"))  # removed once complete


def test_two_worker_processes_train_together_and_only_the_chief_exports(trainer_data, tmp_path):
    run_dir = str(tmp_path / "run")
    fn_args = make_fn_args(
        trainer_data,
        run_dir,
        {
            "strategy": "auto",
            "train_steps": 10,
            "steps_per_execution": 5,
            "eval_steps": 1,
            "batch_size": 16,
            "learning_rate": 0.01,
            "scale_learning_rate": True,
            "checkpoint_every_steps": 5,
        },
        materialized=True,
        model=MODEL,
    )
    fn_args_file = str(tmp_path / "fn_args.json")
    save_fn_args(fn_args, fn_args_file)
    cluster = {"worker": [f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"]}
    logs = [str(tmp_path / f"worker_{i}.log") for i in range(2)]
    workers = [
        start_trainer_process(
            [fn_args_file], tf_config={"cluster": cluster, "task": {"type": "worker", "index": i}}, log_file=logs[i]
        )
        for i in range(2)
    ]
    for process, log in zip(workers, logs):
        finish(process, log)

    saved_models = [root for root, _, names in os.walk(run_dir) if "saved_model.pb" in names]
    assert saved_models == [fn_args.serving_model_dir]
    assert not [name for name in os.listdir(os.path.dirname(fn_args.serving_model_dir)) if "workertemp" in name]
    summary = read_summary(fn_args)
    assert (summary["strategy"], summary["replicas"], summary["workers"]) == ("multi_worker", 2, 2)
    assert summary["global_batch"] == 32
    assert summary["learning_rate"] == pytest.approx(0.02)  # scaled by 2 replicas
    assert summary["optimizer_steps"] == 10
    assert not os.path.exists(os.path.join(fn_args.model_run_dir, "checkpoints"))  # deleted once complete
