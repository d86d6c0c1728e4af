"""Tuner test fixtures: the Trainer's small prepared dataset (`tests/components/trainer/trainer_fixtures.py`)."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "trainer"))

from trainer_fixtures import TrainerData, prepare_trainer_data  # noqa: E402


@pytest.fixture(scope="session")
def tuner_data(tmp_path_factory) -> TrainerData:
    """Synthetic taxi rows (600 train, 200 eval) and their real tf.Transform graph."""
    return prepare_trainer_data(str(tmp_path_factory.mktemp("tuner_data")), train_rows=600, eval_rows=200)
