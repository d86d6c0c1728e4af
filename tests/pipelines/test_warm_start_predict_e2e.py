"""End to end: `training.warm_start`, `predict.enabled` (TFX's BulkInferrer) and `python -m pipelines predict`.

One module fixture, two runs of the taxi sample on one root with both on: the first starts cold (no
blessed model yet), the second (`--force`) starts from the first's blessed model, and its first loss
is lower than the cold start's. Each run's BulkInferrer scores every example on the model's
`serving_default`. Then the `predict` command scores the CSV with the newest blessed model into
Parquet and CSV, and refuses, in one line each, a --keep column the file lacks, a file without a
feature column, a root that never ran and an output folder that does not exist.
"""

from __future__ import annotations

import csv
import glob
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import yaml
from mlmd_queries import store_for
from taxi_fixtures import REPO, run_cli, taxi_spec, write_spec

pytestmark = pytest.mark.e2e

KEEP = ["trip_start_hour", "company"]


def predict_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=REPO)
    return subprocess.run(
        [sys.executable, "-m", "pipelines", "predict", *args], capture_output=True, text=True, env=env, timeout=600
    )


def last_training(root) -> dict:
    with open(os.path.join(root, "last_run.json"), encoding="utf-8") as handle:
        return json.load(handle)["summary"]["training"]


@pytest.fixture(scope="module")
def runs(taxi_sample_csv, tmp_path_factory):
    folder = tmp_path_factory.mktemp("warm_predict")
    root = folder / "root"
    spec = taxi_spec(taxi_sample_csv, str(root), pipeline={"name": "warm_predict"})
    spec["training"].update(train_steps=100, eval_steps=5, warm_start=True)
    spec["predict"] = {"enabled": True}
    spec_file = write_spec(folder / "spec.yaml", spec)
    result = {"folder": folder, "root": root, "spec": spec_file, "first": run_cli(spec_file)}
    result["first_training"] = last_training(root)
    result["second"] = run_cli(spec_file, "--force")
    result["second_training"] = last_training(root)
    result["parquet"] = predict_cli(
        spec_file, taxi_sample_csv, "--output", str(folder / "scores.parquet"), *(f"--keep={c}" for c in KEEP)
    )
    result["csv"] = predict_cli(spec_file, taxi_sample_csv, "--output", str(folder / "scores.csv"), "--keep", "company")
    return result


def test_the_first_run_starts_cold_and_the_second_from_the_first_blessed_model(runs):
    assert runs["first"].returncode == 0, runs["first"].stderr[-3000:]
    assert runs["second"].returncode == 0, runs["second"].stderr[-3000:]
    first, second = runs["first_training"], runs["second_training"]
    assert first["warm_started_from"] is None
    assert first["cold_start"] == "no blessed model yet (a first run)"
    assert "cold start (no blessed model yet (a first run))" in runs["first"].stdout
    # The first run's model (its Trainer output), blessed: the second run's base.
    first_models = glob.glob(os.path.join(runs["root"], "artifacts", "Trainer", "model", "*", "Format-Serving"))
    assert second["warm_started_from"] == min(first_models, key=lambda p: int(p.split(os.sep)[-2]))
    assert "cold_start" not in second
    assert f"warm-started from {second['warm_started_from']}" in runs["second"].stdout
    assert second["first_loss"] < first["first_loss"], (first["first_loss"], second["first_loss"])


def test_the_bulk_inferrer_scores_every_example_of_each_run(runs, taxi_sample_csv):
    rows = sum(1 for _ in open(taxi_sample_csv, encoding="utf-8")) - 1
    store = store_for(os.path.join(runs["root"], "metadata.sqlite"))
    results = store.get_artifacts_by_type("InferenceResult")
    assert len(results) == 2  # one per run
    for artifact in results:
        assert artifact.custom_properties["predictions"].int_value == rows
        predictions = pd.read_parquet(os.path.join(artifact.uri, "predictions.parquet"))
        assert len(predictions) == rows
        assert list(predictions.columns) == ["label", "probability", "score_0", "score_1"]
        assert set(predictions["label"]) <= {"0", "1"}
        np.testing.assert_allclose(predictions["score_1"], predictions["probability"], rtol=1e-6)


def _direct_probabilities(model_dir: str, rows: list[dict]) -> list[float]:
    """The SavedModel's `serving_raw` signature on `rows` (typed as it declares), without our scoring code."""
    import tensorflow as tf

    from components.common.names import tensor_name

    signature = tf.saved_model.load(model_dir).signatures["serving_raw"]
    feeds = {}
    for argument, spec in signature.structured_input_signature[1].items():  # argument: tensor_name(column)
        column = next(c for c in rows[0] if tensor_name(c) == argument)
        text = tf.constant([row[column] for row in rows])
        feeds[argument] = text if spec.dtype == tf.string else tf.strings.to_number(text, spec.dtype)
    return signature(**feeds)["probability"].numpy().tolist()


def test_predict_writes_one_row_per_input_row_with_kept_columns_and_the_models_scores(runs, taxi_sample_csv):
    assert runs["parquet"].returncode == 0, runs["parquet"].stderr[-3000:]
    scores = pd.read_parquet(runs["folder"] / "scores.parquet")
    source = pd.read_csv(taxi_sample_csv, dtype=str, keep_default_na=False)
    assert len(scores) == len(source)
    assert list(scores.columns) == [*KEEP, "label", "probability", "score_0", "score_1"]
    assert scores["company"].fillna("").tolist() == source["company"].tolist()
    assert scores["trip_start_hour"].tolist() == source["trip_start_hour"].tolist()
    assert f"Scored {len(source):,} rows" in runs["parquet"].stdout
    # The newest blessed model: the second run's, not the first's (the second one's base).
    assert runs["second_training"]["warm_started_from"] not in runs["parquet"].stdout
    model_dir = runs["parquet"].stdout.split("with the blessed model ")[1].split(" into ")[0]
    assert model_dir.endswith("Format-Serving") and os.path.exists(model_dir)
    # The same probabilities as the SavedModel called directly, on rows with every cell present.
    with open(taxi_sample_csv, encoding="utf-8") as handle:
        features = list(yaml.safe_load(open(runs["spec"], encoding="utf-8"))["features"])
        complete = [(i, row) for i, row in enumerate(csv.DictReader(handle)) if all(row[c] for c in features)][:5]
    assert len(complete) == 5
    direct = _direct_probabilities(model_dir, [row for _, row in complete])
    np.testing.assert_allclose(scores["probability"].iloc[[i for i, _ in complete]], direct, rtol=1e-5, atol=1e-6)
    assert runs["csv"].returncode == 0, runs["csv"].stderr[-3000:]
    as_csv = pd.read_csv(runs["folder"] / "scores.csv", dtype={"company": str})
    assert list(as_csv.columns) == ["company", "label", "probability", "score_0", "score_1"]
    np.testing.assert_allclose(as_csv["probability"], scores["probability"], rtol=1e-6)
    assert not glob.glob(str(runs["folder"] / "*.tmp-*"))  # nothing half-written left


def test_predict_refuses_bad_input_in_one_line(runs, taxi_sample_csv, tmp_path):
    output = str(tmp_path / "out.parquet")
    unknown = predict_cli(runs["spec"], taxi_sample_csv, "--output", output, "--keep", "no_such_column")
    assert unknown.returncode == 1
    assert "lacks the --keep column(s) ['no_such_column']" in unknown.stderr
    assert "Traceback" not in unknown.stderr and not os.path.exists(output)

    source = pd.read_csv(taxi_sample_csv, dtype=str, keep_default_na=False)
    source.drop(columns=["trip_miles"]).head(20).to_csv(tmp_path / "no_miles.csv", index=False)
    missing = predict_cli(runs["spec"], str(tmp_path / "no_miles.csv"), "--output", output)
    assert missing.returncode == 1
    assert "lacks the model's feature column(s) ['trip_miles']" in missing.stderr

    fresh = json.loads(json.dumps(taxi_spec(taxi_sample_csv, str(tmp_path / "never_ran"))))
    never = predict_cli(write_spec(tmp_path / "fresh.yaml", fresh), taxi_sample_csv, "--output", output)
    assert never.returncode == 1
    assert "has not run yet" in never.stderr and "Run the pipeline first" in never.stderr

    nowhere = predict_cli(runs["spec"], taxi_sample_csv, "--output", str(tmp_path / "absent" / "x.csv"))
    assert nowhere.returncode == 1
    assert "the folder" in nowhere.stderr and "does not exist" in nowhere.stderr
