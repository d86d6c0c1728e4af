"""The penguins example as Parquet runs end to end and is blessed: docs/data.md's worked example, as written.

One pipeline run for the module: the doc's Python block writes the Parquet
file (two measurements in a struct column `body`), its YAML block replaces the
example spec's `data` (with `flatten: true`) and `features` sections, which
name the struct's fields `body__flipper_length_mm` and `body__body_mass_g`.
`predict` then scores the same file, reading the struct as those columns.
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys

import pytest
import yaml
from example_runs import example_spec, exported_model_dir, run_example
from taxi_fixtures import REPO

pytestmark = pytest.mark.e2e

DOC = os.path.join(REPO, "docs", "data.md")


def _doc_block(kind: str) -> str:
    with open(DOC, encoding="utf-8") as handle:
        found = re.search(rf"<!-- formats-example: {kind} -->\n```{kind}\n(.*?)```", handle.read(), re.S)
    assert found, f"docs/data.md has no `formats-example: {kind}` block"
    return found.group(1)


@pytest.fixture(scope="module")
def parquet_run(tmp_path_factory):
    pytest.importorskip("palmerpenguins", reason="pip install palmerpenguins (the CSV ships in the wheel)")
    folder = tmp_path_factory.mktemp("penguins_parquet")
    subprocess.run([sys.executable, "-c", _doc_block("python")], cwd=folder, check=True)
    root = str(folder / "root")
    spec = example_spec("penguins", root, training={"train_steps": 300})
    block = yaml.safe_load(_doc_block("yaml"))
    spec["data"], spec["features"] = block["data"], block["features"]
    spec["data"]["path"] = str(folder / spec["data"]["path"])
    summary, stdout = run_example(folder, spec)
    return root, summary, stdout, folder


def test_the_parquet_penguins_are_blessed(parquet_run):
    _, summary, stdout, _ = parquet_run
    assert summary["blessed"], stdout
    assert summary["metrics"]["accuracy"] >= 0.9


def test_example_gen_took_the_fast_path_and_wrote_the_columnar_copy(parquet_run):
    root, _, _, _ = parquet_run
    (examples,) = [
        os.path.join(dirpath, "manifest.json")
        for dirpath, _, names in os.walk(os.path.join(root, "artifacts", "ExampleGen"))
        if "manifest.json" in names
    ]
    with open(examples, encoding="utf-8") as handle:
        rows = json.load(handle)["rows"]
    assert sum(rows.values()) == 344 and rows["train"] > rows["eval"] > 0  # every penguin, nulls included


FLATTENED = {"body__flipper_length_mm", "body__body_mass_g"}


def test_the_struct_fields_are_columns_of_the_examples_and_inputs_of_the_model(parquet_run):
    root, _, _, _ = parquet_run
    from tensorflow.core.protobuf import saved_model_pb2

    from components.common import columnar_copy

    (examples,) = glob.glob(os.path.join(root, "artifacts", "ExampleGen", "examples", "*"))
    (copy, *_) = columnar_copy.split_files(examples, "train")
    names = set(columnar_copy.read_batches(copy)[0].schema.names)
    assert FLATTENED <= names and "body" not in names
    model = saved_model_pb2.SavedModel()
    with open(os.path.join(exported_model_dir(root), "saved_model.pb"), "rb") as handle:
        model.ParseFromString(handle.read())
    assert FLATTENED <= set(model.meta_graphs[0].signature_def["serving_raw"].inputs)


def test_predict_reads_the_struct_as_its_flattened_columns(parquet_run):
    import pandas as pd

    _, _, _, folder = parquet_run
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=REPO)
    output = str(folder / "scores.parquet")
    args = [str(folder / "spec.yaml"), str(folder / "penguins.parquet"), "--output", output]
    completed = subprocess.run(
        [sys.executable, "-m", "pipelines", "predict", *args, "--keep", "species", "--keep", "body__body_mass_g"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr[-3000:]
    scores = pd.read_parquet(output)
    assert len(scores) == 344 and list(scores.columns[:2]) == ["species", "body__body_mass_g"]
    assert scores["body__body_mass_g"].iloc[0] == 3750.0  # the first penguin's body.body_mass_g, typed as in the file
    assert (scores["label"] == scores["species"]).mean() >= 0.9
