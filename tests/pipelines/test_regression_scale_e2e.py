"""End to end: a regression label in the hundreds of thousands is learned with the default settings.

House prices (mean ~340k): before the built-in models predicted `mean + std * output`,
1,000 steps at the default rate left the prediction near 0 and the model lost to the
mean baseline (NOT BLESSED, MAE ~330k). The run here declares no thresholds, so it is
blessed only when it beats predicting the mean.
"""

from __future__ import annotations

import csv

import numpy as np
import pytest
import yaml

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def housing_run(tmp_path_factory):
    import pipelines

    root = tmp_path_factory.mktemp("housing")
    rng = np.random.default_rng(6)
    prices = []
    with open(root / "housing.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["median_income", "ocean_proximity", "median_house_value"])
        for i in range(1200):
            income, place = rng.uniform(0.5, 15), ["INLAND", "NEAR BAY", "<1H OCEAN"][i % 3]
            price = 40_000 * income + (50_000 if place != "INLAND" else 0) + rng.normal() * 20_000
            prices.append(round(price))
            writer.writerow([round(income, 4), place, prices[-1]])
    spec = {
        "pipeline": {"name": "housing", "root": str(root / "run")},
        "data": {"path": str(root / "housing.csv")},
        "features": {"median_income": {"transform": "zscore"}, "ocean_proximity": {"transform": "vocabulary"}},
        "label": {"name": "value", "column": "median_house_value", "task": "regression"},
        "model": {"type": "wide_and_deep", "hidden_units": [16, 8]},
        "training": {"train_steps": 500},
        "evaluation": {"metrics": ["mean_absolute_error"]},
    }
    (root / "spec.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    outcome = pipelines.run(pipelines.load(str(root / "spec.yaml")))
    return outcome, float(np.std(prices))


def test_house_prices_beat_the_mean_and_are_pushed(housing_run):
    outcome, spread = housing_run
    assert outcome.summary.pushed_path, outcome.summary
    assert outcome.summary.metrics["mean_absolute_error"] < 0.3 * spread, (outcome.summary.metrics, spread)
