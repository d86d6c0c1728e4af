"""Fault tolerance: a training process killed with SIGKILL resumes from its last checkpoint."""

from __future__ import annotations

import os
import re
import signal
import time

import pytest
import tensorflow as tf
from trainer_fixtures import make_fn_args, read_summary, start_trainer_process

from components.trainer.run_fn import run_fn
from components.trainer.training.checkpoints import checkpoint_dir, checkpoint_interval, remove_empty_checkpoint_dirs
from components.trainer.worker import save_fn_args

TRAIN_STEPS = 400
EVERY_STEPS = 10


@pytest.mark.parametrize(
    ("every_steps", "steps_per_execution", "expected"),
    [(500, 50, (10, 500)), (10, 1, (10, 10)), (30, 50, (1, 50)), (120, 50, (2, 100))],
)
def test_checkpoint_interval_counts_whole_executions(every_steps, steps_per_execution, expected):
    assert checkpoint_interval(every_steps, steps_per_execution) == expected


def test_completed_runs_leave_no_empty_checkpoint_directories(tmp_path):
    root = tmp_path / "checkpoints"
    (root / "workertemp_1" / "chief").mkdir(parents=True)
    (root / "chief").mkdir()
    (root / "chief" / "ckpt-1.index").write_text("kept")
    remove_empty_checkpoint_dirs(str(tmp_path))
    assert sorted(os.listdir(root)) == ["chief"]


def _latest_checkpoint(model_run_dir: str):
    for directory, _, names in os.walk(checkpoint_dir(model_run_dir)):
        if "checkpoint" in names:
            return tf.train.latest_checkpoint(directory)
    return None


def _saved_step(checkpoint: str) -> int:
    reader = tf.train.load_checkpoint(checkpoint)
    keys = [key for key in reader.get_variable_to_shape_map() if re.search(r"optimizer/_?iter(ations)?/", key)]
    assert len(keys) == 1, [key for key in reader.get_variable_to_shape_map() if "optimizer" in key]
    return int(reader.get_tensor(keys[0]))


def _wait_for_checkpoint(process, model_run_dir: str, log: str, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while _latest_checkpoint(model_run_dir) is None:
        if process.poll() is not None:
            with open(log, encoding="utf-8", errors="replace") as handle:
                pytest.fail(f"training ended (code {process.returncode}) before a checkpoint:\n{handle.read()[-3000:]}")
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail("no checkpoint was written in time")
        time.sleep(0.02)


def test_training_killed_with_sigkill_resumes_from_its_checkpoint(trainer_data, tmp_path):
    fn_args = make_fn_args(
        trainer_data,
        str(tmp_path / "run"),
        {
            "train_steps": TRAIN_STEPS,
            "steps_per_execution": 1,
            "eval_steps": 1,
            "checkpoint_every_steps": EVERY_STEPS,
        },
        materialized=True,
        model={"type": "dnn", "hidden_units": [8]},
    )
    save_fn_args(fn_args, str(tmp_path / "fn_args.json"))
    log = str(tmp_path / "killed.log")
    process = start_trainer_process([str(tmp_path / "fn_args.json")], log_file=log)
    _wait_for_checkpoint(process, fn_args.model_run_dir, log)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    saved_step = _saved_step(_latest_checkpoint(fn_args.model_run_dir))
    assert 0 < saved_step < TRAIN_STEPS and saved_step % EVERY_STEPS == 0
    assert not os.path.exists(fn_args.serving_model_dir)

    run_fn(fn_args)  # the restarted trainer, same run directories

    summary = read_summary(fn_args)
    assert summary["resumed_from_step"] == saved_step
    assert summary["optimizer_steps"] == TRAIN_STEPS
    assert os.path.isfile(os.path.join(fn_args.serving_model_dir, "saved_model.pb"))
    assert not os.path.exists(checkpoint_dir(fn_args.model_run_dir))  # removed once training completed
