"""TFX's own penguin module file, unchanged, runs end to end: docs/custom_code.md's worked example, as written.

The example tunes with the module's own `tuner_fn` (KerasTuner over tf-keras models) before its `run_fn`.

One pipeline run for the module: the doc's Python block copies
`penguin_utils_keras.py` from the installed tfx package and writes the penguin
CSV; its YAML block is the spec. Stock TFX's own pipeline on the same file and
data runs in `benchmarks/module_file_vs_tfx.py` (too slow for the suite).
"""

from __future__ import annotations

import csv
import glob
import os
import re
import subprocess
import sys

import pytest
import yaml
from example_runs import run_example, trained_variables
from scaffold_fixtures import run_pipelines_cli
from taxi_fixtures import REPO

pytestmark = pytest.mark.e2e

DOC = os.path.join(REPO, "docs", "custom_code.md")
# TFX's penguin_pipeline_local blesses at 0.6; stock TFX reached 0.99 on this data (the benchmark), and
# the module seeds nothing, so runs vary by a few eval rows.
MIN_ACCURACY = 0.9


def _doc_block(kind: str) -> str:
    with open(DOC, encoding="utf-8") as handle:
        found = re.search(rf"<!-- module-file-example: {kind} -->\n```{kind}\n(.*?)```", handle.read(), re.S)
    assert found, f"docs/custom_code.md has no `module-file-example: {kind}` block"
    return found.group(1)


@pytest.fixture(scope="module")
def module_run(tmp_path_factory):
    pytest.importorskip("palmerpenguins", reason="pip install palmerpenguins (the CSV ships in the wheel)")
    folder = tmp_path_factory.mktemp("penguin_module_file")
    subprocess.run([sys.executable, "-c", _doc_block("python")], cwd=folder, check=True)
    spec = yaml.safe_load(_doc_block("yaml"))
    spec["pipeline"]["root"] = str(folder / "root")
    summary, stdout = run_example(folder, spec)  # the spec sits beside the module file and the CSV
    return folder, summary, stdout


def test_the_module_file_is_tfxs_own_unchanged(module_run):
    import tfx.examples.penguin as penguin

    folder, _, _ = module_run
    with open(os.path.join(os.path.dirname(penguin.__file__), "penguin_utils_keras.py"), "rb") as shipped:
        assert (folder / "penguin_utils_keras.py").read_bytes() == shipped.read()


def test_the_run_is_blessed_pushed_and_deployed(module_run):
    _, summary, stdout = module_run
    assert summary["blessed"], stdout
    assert summary["metrics"]["accuracy"] >= MIN_ACCURACY, stdout
    assert "Pushed: " in stdout and "is `stable` (verified" in stdout, stdout
    assert re.search(r"Report: .*\.html", stdout)


def test_the_modules_own_tuner_fn_tunes_and_its_run_fn_trains_the_best_values(module_run):
    folder, summary, stdout = module_run
    trials = summary["tuning"]["trials"]
    # penguin_utils_keras.tuner_fn: RandomSearch(max_trials=6) over learning_rate {1e-2, 1e-3} x num_layers
    # {1, 2, 3}, six combinations. KerasTuner's random oracle ends the search when 21 draws in a row hit tried
    # combinations: the sixth trial is skipped in about 2% of runs ((5/6)**21), the fifth in 0.02%
    # ((4/6)**21), the fourth in 5e-7 ((3/6)**21).
    combinations = [(trial["values"]["learning_rate"], trial["values"]["num_layers"]) for trial in trials]
    assert 4 <= len(trials) <= 6 and len(set(combinations)) == len(trials), trials
    assert {rate for rate, _ in combinations} <= {1e-2, 1e-3} and {n for _, n in combinations} <= {1, 2, 3}
    best = summary["tuning"]["best"]
    assert best == trials[0]["values"] and set(best) == {"num_layers", "learning_rate"}
    assert f"Tuning: best of {len(trials)} trial(s)" in stdout
    shapes = list(trained_variables(str(folder / "root")).values())
    assert shapes.count((8, 8)) == best["num_layers"] - 1  # Dense(8) x num_layers, then Dense(3)


def _examples(path: str) -> tuple[list[bytes], list[int]]:
    import tensorflow as tf

    serialized, labels = [], []
    with open(path, encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            features = {
                name: tf.train.Feature(float_list=tf.train.FloatList(value=[float(value)]))
                for name, value in row.items()
                if name != "species" and value
            }
            if len(features) == 4:
                serialized.append(tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString())
                labels.append(int(row["species"]))
    return serialized, labels


def test_the_pushed_model_is_the_modules_own_serving_tf_examples(module_run):
    import numpy as np
    import tensorflow as tf

    folder, _, _ = module_run
    (pushed,) = glob.glob(str(folder / "root" / "serving" / "penguins" / "*"))
    model = tf.saved_model.load(pushed)
    # TFX's penguin_utils_base.make_serving_signatures: both signatures are the module's, not ours.
    assert set(model.signatures) == {"serving_default", "transform_features"}
    serialized, labels = _examples(str(folder / "penguins_processed.csv"))
    scores = model.signatures["serving_default"](examples=tf.constant(serialized))["outputs"].numpy()
    assert scores.shape == (len(labels), 3)
    assert np.mean(scores.argmax(axis=1) == np.array(labels)) >= MIN_ACCURACY


def test_predict_scores_a_csv_with_the_module_model_typed_by_its_training_schema(module_run, tmp_path):
    """The module's model has no `serving_raw` signature: `predict` types the CSV's columns by the schema its
    Trainer was given, and scores exactly what the model scores on the same tf.Examples built by hand."""
    import numpy as np
    import pandas as pd
    import tensorflow as tf

    folder, _, _ = module_run
    rows = pd.read_csv(folder / "penguins_processed.csv").dropna()
    unlabelled = tmp_path / "new_penguins.csv"
    rows.drop(columns=["species"]).to_csv(unlabelled, index=False)  # new data: no label column
    output = tmp_path / "scores.csv"
    completed = run_pipelines_cli(
        "predict", str(folder / "spec.yaml"), str(unlabelled), "--output", str(output), "--keep", "body_mass_g"
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    scores = pd.read_csv(output)
    assert list(scores.columns) == ["body_mass_g", "outputs_0", "outputs_1", "outputs_2"]
    assert scores["body_mass_g"].tolist() == rows["body_mass_g"].tolist()
    serialized, _ = _examples(str(folder / "penguins_processed.csv"))
    (pushed,) = glob.glob(str(folder / "root" / "serving" / "penguins" / "*"))
    expected = tf.saved_model.load(pushed).signatures["serving_default"](examples=tf.constant(serialized))
    np.testing.assert_allclose(scores[["outputs_0", "outputs_1", "outputs_2"]], expected["outputs"], atol=1e-6)


def test_predict_names_the_raw_input_the_module_needs_and_the_file_lacks(module_run, tmp_path):
    folder, _, _ = module_run
    rows = tmp_path / "one_column.csv"
    rows.write_text("culmen_length_mm\n39.1\n39.5\n", encoding="utf-8")
    completed = run_pipelines_cli("predict", str(folder / "spec.yaml"), str(rows), "--output", str(tmp_path / "o.csv"))
    assert completed.returncode == 1 and "Traceback" not in completed.stderr
    (line,) = [line for line in completed.stderr.splitlines() if line.startswith("error:")]
    assert "is required but could not be found" in line and "Received columns encoded: ['culmen_length_mm']" in line
    assert not (tmp_path / "o.csv").exists()
