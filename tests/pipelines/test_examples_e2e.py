"""The bundled examples run end to end: diabetes (regression, a user transform's extras) and penguins.

One pipeline run per example (module-scoped), with fewer training steps than
the shipped specs; `benchmarks/quality_vs_sklearn.py` runs them in full.
"""

from __future__ import annotations

import os

import pytest
from example_runs import EXAMPLES, example_spec, run_example, trained_variables


def test_the_shipped_diabetes_csv_is_what_the_script_writes():
    import sys

    sys.path.insert(0, os.path.join(EXAMPLES, "data"))
    try:
        from write_diabetes_csv import CSV_PATH, diabetes_csv_text
    finally:
        sys.path.pop(0)
    with open(CSV_PATH, encoding="utf-8") as handle:
        shipped = handle.read()
    assert shipped == diabetes_csv_text()
    assert shipped.count("\n") == 443  # header + 442 patients


@pytest.fixture(scope="module")
def diabetes_run(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("diabetes")
    root = str(tmp_path / "root")
    spec = example_spec("diabetes", root, training={"train_steps": 300})
    summary, stdout = run_example(tmp_path, spec)
    return root, summary, stdout


@pytest.mark.e2e
def test_diabetes_example_trains_a_regression_model(diabetes_run):
    _, summary, _ = diabetes_run
    assert set(summary["metrics"]) >= {"root_mean_squared_error", "mean_absolute_error"}
    # Predicting the train mean scores about 77; a model that learnt nothing scores ~150 (the label's scale).
    assert summary["metrics"]["root_mean_squared_error"] < 75


@pytest.mark.e2e
def test_the_user_transforms_extra_outputs_reach_the_built_in_model(diabetes_run):
    root, _, _ = diabetes_run
    shapes = trained_variables(root)
    # `age_band` (int64 ids 0-4, range recorded by tft.bucketize) is embedded like a declared categorical.
    assert shapes[next(n for n in shapes if n.startswith("embed_age_band/"))] == (5, 4)
    # The first hidden layer reads 9 numeric features + `bmi_x_bp` + 2 embeddings of 4 (sex, age_band).
    kernels = [shape for name, shape in shapes.items() if name.endswith("kernel:0")]
    assert (9 + 1 + 4 + 4, 16) in kernels, kernels


@pytest.fixture(scope="module")
def penguins_run(tmp_path_factory):
    pytest.importorskip("palmerpenguins", reason="pip install palmerpenguins (the CSV ships in the wheel)")
    tmp_path = tmp_path_factory.mktemp("penguins")
    root = str(tmp_path / "root")
    spec = example_spec("penguins", root, training={"train_steps": 300})
    summary, stdout = run_example(tmp_path, spec)
    return root, summary, stdout


@pytest.mark.e2e
def test_penguins_example_classifies_three_species_from_text_labels_with_na_cells(penguins_run):
    _, summary, stdout = penguins_run
    assert summary["blessed"], stdout
    assert summary["metrics"]["accuracy"] >= 0.9


@pytest.mark.e2e
def test_an_eval_split_smaller_than_one_batch_trains_and_evaluates(tmp_path):
    # The case: `splits: {train: 30, eval: 1}` leaves ~11 eval rows for a batch of 32; the cached
    # eval input yielded no full batch and the Trainer spun forever at 100% CPU (run_cli's 900 s timeout).
    pytest.importorskip("palmerpenguins", reason="pip install palmerpenguins (the CSV ships in the wheel)")
    spec = example_spec("penguins", str(tmp_path / "root"), training={"train_steps": 100, "eval_steps": 2})
    spec["data"]["splits"] = {"train": 30, "eval": 1}
    summary, stdout = run_example(tmp_path, spec)  # exit 0, or it fails naming the output
    assert 0 <= summary["metrics"]["accuracy"] <= 1, stdout  # the Evaluator scored the small split
