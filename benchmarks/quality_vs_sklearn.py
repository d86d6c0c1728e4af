"""Model quality: our pipeline's eval metric against scikit-learn baselines on the same split.

For each dataset the pipeline runs from its spec in a fresh temporary root
(a subprocess running `pipelines/run_local.py`, as a user would). Then the
train and eval splits that our ExampleGen made are read back from its
tf.Examples, and scikit-learn fits a linear model (logistic regression for
classification, ridge for regression) and gradient boosting on the train
split, with the same feature columns, and scores them on the eval split.
scikit-learn's preprocessing: mean-imputed, standardised numbers; text
one-hot encoded, missing text as its own value.

Datasets: the examples `pipelines/examples/penguins.yaml` (multi-class, text
label, NA cells) and `diabetes.yaml` (regression; scikit-learn's bundled
regression set), and scikit-learn's bundled classification sets
`breast_cancer` (binary) and `wine` (three classes), written to CSVs in the
temporary root with their own column names (spaces, slashes).

Targets (issue 11): accuracy within 1 point of the better baseline; RMSE
within 5% of the better baseline.

    .venv/bin/python benchmarks/quality_vs_sklearn.py [--datasets penguins diabetes breast_cancer wine]
        [--train-steps N]   # override every spec's train_steps (a quick smoke run)
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import glob
import json
import os
import subprocess
import sys
import tempfile
from typing import Optional

import numpy as np
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(REPO, "pipelines", "examples")

__all__ = ["Dataset", "DATASETS", "read_split", "baselines", "verdict", "main"]


@dataclasses.dataclass(frozen=True)
class Dataset:
    """One benchmark row: a spec (shipped, or written by `write`) and the metric compared."""

    name: str
    metric: str  # the spec's evaluation metric we compare (higher is better unless regression)
    spec: Optional[str] = None  # a shipped example spec
    write: Optional[str] = None  # name of a function writing (csv, spec) into a folder


def _write_bundled(folder: str, name: str, loader: str, label: str, metric: str) -> str:
    """Writes one of scikit-learn's bundled sets as a CSV and a spec; returns the spec path.

    Column names stay scikit-learn's own (`mean radius`, `od280/od315_of_diluted_wines`): any header
    text is a column name. The label is the integer target (classes found in the data).
    """
    import sklearn.datasets

    data = getattr(sklearn.datasets, loader)()
    columns = [str(name) for name in data.feature_names]
    csv_path = os.path.join(folder, f"{name}.csv")
    with open(csv_path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*columns, label])
        for row, target in zip(data.data, data.target):
            writer.writerow([f"{value:g}" for value in row] + [int(target)])
    spec = {
        "pipeline": {"name": name},
        "data": {"path": csv_path, "splits": {"train": 2, "eval": 1}},
        "features": {column: {"transform": "zscore"} for column in columns},
        "label": {"name": label, "column": label, "task": "classification"},
        "model": {"type": "dnn", "hidden_units": [16]},
        "training": {
            "train_steps": 1000,
            "eval_steps": 5,
            "batch_size": 32,
            "learning_rate": 0.01,
            "steps_per_execution": 100,
        },
        "evaluation": {"metrics": [metric], "thresholds": {metric: {"min": 0.8}}},
    }
    spec_path = os.path.join(folder, f"{name}.yaml")
    with open(spec_path, "w", encoding="utf-8") as handle:
        yaml.safe_dump(spec, handle, sort_keys=False)
    return spec_path


def write_breast_cancer(folder: str) -> str:
    """scikit-learn's breast cancer set (binary; `benign` is 1 for benign, 0 for malignant)."""
    return _write_bundled(folder, "breast_cancer", "load_breast_cancer", "benign", "binary_accuracy")


def write_wine(folder: str) -> str:
    """scikit-learn's wine set (three cultivars, integer labels 0-2)."""
    return _write_bundled(folder, "wine", "load_wine", "cultivar", "accuracy")


DATASETS = {
    "penguins": Dataset("penguins", "accuracy", spec="penguins.yaml"),
    "diabetes": Dataset("diabetes", "root_mean_squared_error", spec="diabetes.yaml"),
    "breast_cancer": Dataset("breast_cancer", "binary_accuracy", write="write_breast_cancer"),
    "wine": Dataset("wine", "accuracy", write="write_wine"),
}


def _prepare_spec(dataset: Dataset, folder: str, train_steps: Optional[int]) -> tuple[str, dict]:
    """Writes the spec to run (root inside `folder`, absolute data path); returns (path, spec)."""
    if dataset.write:
        source = globals()[dataset.write](folder)
        base = folder
    else:
        source = os.path.join(EXAMPLES, dataset.spec)
        base = EXAMPLES
    with open(source, encoding="utf-8") as handle:
        spec = yaml.safe_load(handle)
    spec["pipeline"]["root"] = os.path.join(folder, "root")
    if not spec["data"]["path"].startswith("package://"):
        spec["data"]["path"] = os.path.join(base, spec["data"]["path"])
    if train_steps:
        spec["training"]["train_steps"] = train_steps
    path = os.path.join(folder, f"{dataset.name}.run.yaml")
    with open(path, "w", encoding="utf-8") as handle:
        yaml.safe_dump(spec, handle, sort_keys=False)
    return path, spec


def run_pipeline(spec_path: str, root: str) -> dict:
    """Runs the spec like a user; returns the run summary (`last_run.json`).

    Raises:
      RuntimeError: the run failed (the message holds the end of its output).
    """
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (EXAMPLES, REPO, env.get("PYTHONPATH")) if p)
    completed = subprocess.run(
        [sys.executable, os.path.join(REPO, "pipelines", "run_local.py"), spec_path],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"{spec_path} failed:\n{(completed.stdout + completed.stderr)[-2000:]}")
    with open(os.path.join(root, "last_run.json"), encoding="utf-8") as handle:
        return json.load(handle)["summary"]


def _value(feature) -> object:
    kind = feature.WhichOneof("kind")
    values = getattr(feature, kind).value if kind else []
    if not values:
        return None
    value = values[0]
    return value.decode("utf-8") if isinstance(value, bytes) else value


def read_split(root: str, split: str, columns: list[str]) -> dict[str, list]:
    """The raw rows of one split that our ExampleGen wrote: column -> values (None where missing).

    Args:
      root: the pipeline root.
      split: `train` or `eval`.
      columns: the columns to read.

    Returns:
      Column -> list of values, one per example.
    """
    import tensorflow as tf

    files = sorted(glob.glob(os.path.join(root, "artifacts", "ExampleGen", "examples", "*", f"Split-{split}", "*")))
    if not files:
        raise FileNotFoundError(f"no ExampleGen {split} split under {root}: did the run finish?")
    rows: dict[str, list] = {column: [] for column in columns}
    for record in tf.data.TFRecordDataset(files, compression_type="GZIP"):
        features = tf.train.Example.FromString(record.numpy()).features.feature
        for column in columns:
            rows[column].append(_value(features[column]) if column in features else None)
    return rows


def _design(train: dict, evaluation: dict, features: list[str]):
    """Feature matrices for scikit-learn: numbers mean-imputed and standardised, text one-hot."""
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    train_frame, eval_frame = (
        pd.DataFrame({c: train[c] for c in features}),
        pd.DataFrame({c: evaluation[c] for c in features}),
    )
    text = [c for c in features if any(isinstance(v, str) for v in train[c])]
    numbers = [c for c in features if c not in text]
    for frame in (train_frame, eval_frame):
        frame[numbers] = frame[numbers].astype(float)
        frame[text] = frame[text].fillna("(missing)").astype(str)
    columns = ColumnTransformer(
        [
            ("numbers", make_pipeline(SimpleImputer(strategy="mean"), StandardScaler()), numbers),
            ("text", OneHotEncoder(handle_unknown="ignore"), text),
        ]
    )
    return columns.fit_transform(train_frame), columns.transform(eval_frame)


def baselines(task: str, x_train, y_train, x_eval, y_eval) -> dict[str, float]:
    """Scores of the linear and gradient boosting baselines on the eval split.

    Returns:
      {"linear": score, "boosting": score}: accuracy for classification, RMSE for regression.
    """
    from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
    from sklearn.linear_model import LogisticRegression, RidgeCV
    from sklearn.metrics import accuracy_score, mean_squared_error

    if task == "classification":
        models = {"linear": LogisticRegression(max_iter=5000), "boosting": GradientBoostingClassifier(random_state=0)}
        score = accuracy_score
    else:
        models = {
            "linear": RidgeCV(alphas=np.logspace(-3, 3, 13)),
            "boosting": GradientBoostingRegressor(random_state=0),
        }

        def score(truth, predicted):
            return float(np.sqrt(mean_squared_error(truth, predicted)))

    return {name: float(score(y_eval, model.fit(x_train, y_train).predict(x_eval))) for name, model in models.items()}


def verdict(task: str, ours: float, best: float) -> str:
    """`met` when accuracy is within 1 point of the better baseline, or RMSE within 5% of it; else `missed`."""
    if task == "classification":
        return "met" if ours >= best - 0.01 else "missed"
    return "met" if ours <= best * 1.05 else "missed"


def benchmark(dataset: Dataset, folder: str, train_steps: Optional[int]) -> dict:
    """Runs one dataset; returns its table row."""
    spec_path, spec = _prepare_spec(dataset, folder, train_steps)
    summary = run_pipeline(spec_path, spec["pipeline"]["root"])
    features, label = list(spec["features"]), spec["label"]["column"]
    train = read_split(spec["pipeline"]["root"], "train", [*features, label])
    evaluation = read_split(spec["pipeline"]["root"], "eval", [*features, label])
    task = spec["label"]["task"]
    keep_train = [i for i, v in enumerate(train[label]) if v is not None]
    keep_eval = [i for i, v in enumerate(evaluation[label]) if v is not None]
    train = {c: [v[i] for i in keep_train] for c, v in train.items()}
    evaluation = {c: [v[i] for i in keep_eval] for c, v in evaluation.items()}
    x_train, x_eval = _design(train, evaluation, features)
    scores = baselines(task, x_train, np.asarray(train[label]), x_eval, np.asarray(evaluation[label]))
    ours = summary["metrics"].get(dataset.metric)
    if ours is None:
        raise KeyError(
            f"{dataset.name}: the run reported no `{dataset.metric}`. Received: {sorted(summary['metrics'])}"
        )
    best = max(scores.values()) if task == "classification" else min(scores.values())
    return {
        "dataset": dataset.name,
        "rows": f"{len(keep_train)}/{len(keep_eval)}",
        "metric": "accuracy" if task == "classification" else "RMSE",
        "ours": float(ours),
        **scores,
        "verdict": verdict(task, float(ours), best),
    }


def print_table(rows: list[dict]) -> None:
    header = ["dataset", "train/eval rows", "metric", "ours", "logistic/ridge", "gradient boosting", "verdict"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        cells = [row["dataset"], row["rows"], row["metric"]]
        cells += [f"{row[k]:.4f}" for k in ("ours", "linear", "boosting")]
        cells.append(row["verdict"])
        print("| " + " | ".join(cells) + " |")


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", choices=sorted(DATASETS), default=list(DATASETS))
    parser.add_argument("--train-steps", type=int, default=None, help="override train_steps (a smoke run)")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="quality_vs_sklearn-") as folder:
        for name in args.datasets:
            os.makedirs(os.path.join(folder, name))
            rows.append(benchmark(DATASETS[name], os.path.join(folder, name), args.train_steps))
            print(f"{name}: done", file=sys.stderr, flush=True)
    print_table(rows)
    return 0 if all(row["verdict"] == "met" for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
