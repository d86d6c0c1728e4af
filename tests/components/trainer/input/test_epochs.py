"""`training.epochs`: whole passes over the train split instead of `train_steps`."""

from __future__ import annotations

import math

import pytest
from trainer_fixtures import make_fn_args, read_summary

from components.trainer.input import input_pipeline
from components.trainer.run_fn import run_fn


def test_count_records_counts_every_example_of_every_file(trainer_data):
    files = input_pipeline.list_files([trainer_data.raw_train])
    assert len(files) == 2
    assert input_pipeline.count_records(files) == 2000  # prepare_trainer_data's default train rows
    assert input_pipeline.count_records(files[:1]) == 1000


def test_epochs_train_on_the_whole_split_that_many_times(trainer_data, tmp_path):
    training = {"epochs": 2, "train_steps": 5, "eval_steps": 1, "batch_size": 64, "steps_per_execution": 4}
    fn_args = make_fn_args(
        trainer_data, str(tmp_path), training, materialized=True, model={"type": "dnn", "hidden_units": [4]}
    )
    run_fn(fn_args)
    report = read_summary(fn_args)
    steps_per_epoch = math.ceil(2000 / 64)  # 32, not the 5 of train_steps
    assert report["epochs"] == 2
    assert report["train_examples"] == 2000
    assert report["train_steps"] == report["optimizer_steps"] == 2 * steps_per_epoch
    assert report["examples_per_second"] > 0


def test_without_epochs_train_steps_decide():
    from components.trainer.options import TrainingOptions

    assert TrainingOptions().epochs is None


@pytest.mark.parametrize("epochs", [0, -1])
def test_epochs_below_one_are_refused(epochs):
    from pipelines.spec.models import TrainingSpec

    with pytest.raises(ValueError, match=r"`epochs` must be at least 1\. Received: epochs="):
        TrainingSpec(epochs=epochs)
