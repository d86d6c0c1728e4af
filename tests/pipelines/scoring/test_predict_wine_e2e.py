"""End to end: `python -m pipelines predict` on wine data whose column names hold spaces, as a new user's is.

One module fixture trains the smallest pipeline the spec allows (300 rows of Parquet, 20 training steps, a
threshold any model meets: about 20 s) on `Malic Acid`, `Magnesium` and `Vineyard Region`. Then `predict`
scores copies of its file: kept columns keep their Parquet types in Parquet and CSV output, TensorFlow's
warnings about the renamed inputs stay off the console, and text in a numeric column or a list column is one
`error:` line naming the file and column, with no output written.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from taxi_fixtures import REPO, run_cli, write_spec

pytestmark = pytest.mark.e2e


def predict_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=REPO)
    return subprocess.run(
        [sys.executable, "-m", "pipelines", "predict", *args], capture_output=True, text=True, env=env, timeout=600
    )


def _wine(rows: int) -> pa.Table:
    rng = np.random.default_rng(0)
    acid = rng.normal(2.3, 1.0, rows).round(2)
    region = rng.choice(["North", "South", "Coast"], rows)
    good = (acid < 2.3) ^ (region == "Coast")
    return pa.table(
        {
            "Wine ID": np.arange(1, rows + 1, dtype=np.int64),
            "Malic Acid": acid,
            "Magnesium": rng.normal(100, 14, rows).round(1),
            "Vineyard Region": region,
            "Quality": np.where(good, "good", "plain"),
        }
    )


@pytest.fixture(scope="module")
def wine(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wine_predict")
    table = _wine(300)
    pq.write_table(table, folder / "wine.parquet")
    spec = {
        "pipeline": {"name": "wine_predict", "root": str(folder / "root")},
        "data": {"path": "wine.parquet"},
        "features": {
            "Malic Acid": {"transform": "zscore"},
            "Magnesium": {"transform": "zscore"},
            "Vineyard Region": {"transform": "vocabulary"},
        },
        "label": {"name": "quality", "column": "Quality", "task": "classification", "classes": ["plain", "good"]},
        "model": {"type": "dnn", "hidden_units": [4]},
        "training": {"train_steps": 20, "eval_steps": 2, "batch_size": 32},
        "evaluation": {"metrics": ["accuracy"], "thresholds": {"accuracy": {"min": 0.0}}},
        "push": {"model_name": "wine_predict"},
    }
    spec_file = write_spec(folder / "spec.yaml", spec)
    completed = run_cli(spec_file)
    assert completed.returncode == 0, completed.stdout + completed.stderr[-3000:]
    small = table.slice(0, 20)
    pq.write_table(small, folder / "small.parquet")
    return {"folder": folder, "spec": spec_file, "small": small}


def test_kept_columns_keep_their_types_and_no_tensorflow_warning_reaches_the_console(wine):
    folder, small = wine["folder"], wine["small"]
    for output in ("scores.parquet", "scores.csv"):
        args = [wine["spec"], str(folder / "small.parquet"), "--output", str(folder / output)]
        completed = predict_cli(*args, "--keep", "Wine ID", "--keep", "Malic Acid")
        assert completed.returncode == 0, completed.stderr[-3000:]
        assert completed.stderr == ""  # no `WARNING:absl: `Malic Acid_values` is not a valid tf.function ...`
    scores = pq.read_table(folder / "scores.parquet")
    assert scores.schema.field("Wine ID").type == pa.int64()
    assert scores.schema.field("Malic Acid").type == pa.float64()
    assert scores.column("Wine ID").to_pylist() == small.column("Wine ID").to_pylist()
    header, first, *_ = (folder / "scores.csv").read_text(encoding="utf-8").splitlines()
    assert header.startswith('"Wine ID","Malic Acid","label",')
    assert first.startswith(f'1,{small.column("Malic Acid")[0].as_py()},"')  # numbers unquoted


def test_text_in_a_numeric_column_is_one_error_line_naming_file_row_and_column(wine):
    folder, small = wine["folder"], wine["small"]
    magnesium = [str(value) for value in small.column("Magnesium").to_pylist()]
    magnesium[7] = "abc"
    path = str(folder / "text.parquet")
    pq.write_table(small.set_column(2, "Magnesium", pa.array(magnesium)), path)
    output = folder / "text_scores.csv"
    completed = predict_cli(wine["spec"], path, "--output", str(output))
    assert completed.returncode == 1
    assert completed.stderr.splitlines() == [
        f"error: {path} row 8: column `Magnesium` holds a cell that is not a number. Expected a number or a "
        "missing value in every row of `Magnesium` (the model was trained on it as FLOAT). Received: 'abc'. "
        "Correct the cell, or make it missing (empty, null, or a `data.na_values` marker)."
    ]
    assert not os.path.exists(output) and not list(folder.glob("*.tmp-*"))


def test_a_list_column_is_one_error_line_in_validates_words(wine):
    folder, small = wine["folder"], wine["small"]
    regions = pa.array([[region] for region in small.column("Vineyard Region").to_pylist()])
    path = str(folder / "list.parquet")
    pq.write_table(small.set_column(3, "Vineyard Region", regions), path)
    completed = predict_cli(wine["spec"], path, "--output", str(folder / "list_scores.parquet"))
    assert completed.returncode == 1
    (line,) = completed.stderr.splitlines()
    assert line.startswith(
        f"error: {path}: column `Vineyard Region` holds list<item: string> values. Expected one number or text "
        "per row in every column the spec uses. Received a list column."
    )
    assert not os.path.exists(folder / "list_scores.parquet")
