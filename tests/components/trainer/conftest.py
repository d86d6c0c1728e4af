"""Trainer test fixtures: one small prepared dataset (raw, transformed, Transform graph) per session."""

from __future__ import annotations

import pytest
from ports import free_port
from trainer_fixtures import (
    ObservedRun,
    PrometheusScraper,
    TrainerData,
    make_fn_args,
    prepare_trainer_data,
    run_generic_executor,
)


@pytest.fixture(scope="session")
def trainer_data(tmp_path_factory) -> TrainerData:
    """2,000 train and 400 eval synthetic taxi rows, written by a real tf.Transform Beam run."""
    return prepare_trainer_data(str(tmp_path_factory.mktemp("trainer_data")))


@pytest.fixture(scope="session")
def observed_run(trainer_data, tmp_path_factory) -> ObservedRun:
    """One training through TFX's own `GenericExecutor`, watched from outside.

    Metrics served on a free 127.0.0.1 port (scraped over HTTP while it
    trains), a profiler trace of steps 6-10, TensorBoard logs.
    """
    root = tmp_path_factory.mktemp("observed")
    port = free_port()
    training = {"train_steps": 30, "steps_per_execution": 5, "metrics_port": port, "profile_steps": [6, 10]}
    fn_args = make_fn_args(trainer_data, str(root), training, materialized=True)
    with PrometheusScraper(port) as scraper:
        model = run_generic_executor(trainer_data, str(root), fn_args.custom_config)
    return ObservedRun(model=model, model_run_dir=fn_args.model_run_dir, scrapes=scraper.bodies, port=port)
