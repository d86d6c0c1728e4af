"""The Trainer's dataset plan: a split is cached when the run reads all of it (components/trainer/input/datasets.py)."""

from __future__ import annotations

import pytest
import tensorflow_transform as tft
from trainer_fixtures import CONFIG, make_fn_args

from components.trainer.input.datasets import build_datasets
from components.trainer.options import TrainingOptions


@pytest.mark.parametrize(
    "training, cached",
    [
        ({"train_steps": 40, "batch_size": 32}, False),  # 1,280 of the 2,000 train rows: they stream
        ({"train_steps": 70, "batch_size": 32}, True),  # 2,240 rows: the split is read whole, so it is cached
        ({"train_steps": 40, "batch_size": 32, "epochs": 1}, True),  # whole epochs
    ],
    ids=["few-steps", "more-than-the-split", "epochs"],
)
def test_the_plan_caches_a_split_only_when_the_run_reads_all_of_it(trainer_data, tmp_path, training, cached):
    fn_args = make_fn_args(trainer_data, str(tmp_path), training)
    options = TrainingOptions.from_dict(fn_args.custom_config["training"])
    _, _, plan = build_datasets(
        fn_args, CONFIG, tft.TFTransformOutput(trainer_data.transform_output), options, materialized=False
    )
    assert plan.cached is cached
    assert plan.fits  # a few hundred KB against the 1 GB default budget: never the reason to stream
