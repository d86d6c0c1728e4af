"""docs/trainer.md stays true: its `training:` block is a valid spec section showing the defaults."""

from __future__ import annotations

import dataclasses
import os
import re

import yaml
from trainer_fixtures import REPO

from pipelines.spec.models import TrainingSpec


def test_the_documented_training_block_is_valid_and_shows_the_defaults():
    with open(os.path.join(REPO, "docs", "trainer.md"), encoding="utf-8") as handle:
        block = re.search(r"```yaml\n(training:.*?)```", handle.read(), re.DOTALL).group(1)
    training = yaml.safe_load(block)["training"]
    defaults = dataclasses.asdict(TrainingSpec())
    assert set(training) <= set(defaults)
    assert dataclasses.asdict(TrainingSpec(**training)) == {**defaults, **training}
    assert {name: defaults[name] for name in training} == training
