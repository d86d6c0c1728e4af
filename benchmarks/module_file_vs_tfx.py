"""A TFX module file in our pipeline against TFX's own penguin example pipeline, side by side.

Both run TFX's `penguin_utils_keras.py`, copied unchanged from the installed
`tfx` package, on the same penguin CSV (docs/custom_code.md's worked example
writes it) with the same steps (the module's `tuner_fn`, 20 steps a trial,
then 100 train steps, 5 eval steps): stock TFX through
`penguin_pipeline_local.create_pipeline` under its LocalDagRunner (tuning on,
bulk inference and example diff off), ours through
`python -m pipelines run` on the doc's spec. Each runs in a fresh process; we
report wall time and the eval split's accuracy each Evaluator computed. The
two split the rows by different hashes, so their eval splits differ: both
pushed models are therefore also scored on the same rows, each eval split
(`split_accuracy`: the serving signature on the split's examples).

    .venv/bin/python benchmarks/module_file_vs_tfx.py [--workdir DIR]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(REPO, "docs", "custom_code.md")

STOCK_DRIVER = """
import os, sys
from tfx.examples.penguin import penguin_pipeline_local as example
from tfx.orchestration.local.local_dag_runner import LocalDagRunner
root, data_root, module_file = sys.argv[1:4]
LocalDagRunner().run(example.create_pipeline(
    pipeline_name="penguin_local_keras", pipeline_root=os.path.join(root, "pipeline"), data_root=data_root,
    module_file=module_file, accuracy_threshold=0.6, serving_model_dir=os.path.join(root, "serving"),
    metadata_path=os.path.join(root, "metadata.db"), user_provided_schema_path=None, enable_tuning=True,
    enable_bulk_inferrer=False, enable_example_diff=False, examplegen_input_config=None,
    examplegen_range_config_date=None, resolver_range_config=None, beam_pipeline_args=[],
    enable_transform_input_cache=False))
"""


def doc_block(kind: str) -> str:
    """docs/custom_code.md's `module-file-example` block of `kind` (`python` or `yaml`)."""
    with open(DOC, encoding="utf-8") as handle:
        found = re.search(rf"<!-- module-file-example: {kind} -->\n```{kind}\n(.*?)```", handle.read(), re.S)
    if not found:
        raise ValueError(f"{DOC} has no `module-file-example: {kind}` block")
    return found.group(1)


def write_example(folder: str) -> None:
    """Writes the doc's penguin CSV and TFX's module file into `folder` (the doc's Python block)."""
    subprocess.run([sys.executable, "-c", doc_block("python")], cwd=folder, check=True)


def _environment() -> dict:
    return dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")


def stock_accuracy(root: str) -> float:
    """The sparse categorical accuracy stock TFX's Evaluator computed under `root`."""
    import tensorflow_model_analysis as tfma

    (uri,) = glob.glob(os.path.join(root, "pipeline", "Evaluator", "evaluation", "*"))
    for metrics in tfma.load_metrics(uri):
        for key in metrics.metric_keys_and_values:
            if key.key.name == "sparse_categorical_accuracy" and not key.key.HasField("sub_key"):
                return key.value.double_value.value
    raise ValueError(f"no sparse_categorical_accuracy in {uri}")


def run_stock(folder: str, log_path: str) -> dict:
    """Runs TFX's penguin pipeline on `folder`'s CSV and module file; returns its seconds and accuracy."""
    root = os.path.join(folder, "stock")
    data_root = os.path.join(folder, "stock_data")
    os.makedirs(os.path.join(data_root, "labelled"), exist_ok=True)  # where TFX's example reads its CSV
    shutil.copy(os.path.join(folder, "penguins_processed.csv"), os.path.join(data_root, "labelled"))
    driver = os.path.join(folder, "stock_driver.py")
    with open(driver, "w", encoding="utf-8") as handle:
        handle.write(STOCK_DRIVER)
    module_file = os.path.join(folder, "penguin_utils_keras.py")
    started = time.perf_counter()
    with open(log_path, "a", encoding="utf-8") as log:
        subprocess.run(
            [sys.executable, driver, root, data_root, module_file],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=_environment(),
            check=True,
        )
    return {"seconds": time.perf_counter() - started, "accuracy": stock_accuracy(root)}


PENGUIN_FEATURES = ("culmen_length_mm", "culmen_depth_mm", "flipper_length_mm", "body_mass_g")


def split_accuracy(model_dir: str, split_dir: str) -> float:
    """The share of a split's examples whose argmax of the model's `serving_default` output is the label."""
    import numpy as np
    import tensorflow as tf

    examples, labels = [], []
    for path in sorted(glob.glob(os.path.join(split_dir, "*"))):
        for record in tf.data.TFRecordDataset(path, compression_type="GZIP" if path.endswith(".gz") else ""):
            example = tf.train.Example.FromString(record.numpy())
            values = {k: (v.float_list.value or v.int64_list.value) for k, v in example.features.feature.items()}
            # TFX's CSV reader writes body_mass_g as an integer; the module parses every feature as a float.
            features = {
                k: tf.train.Feature(float_list=tf.train.FloatList(value=[float(values[k][0])]))
                for k in PENGUIN_FEATURES
            }
            examples.append(tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString())
            labels.append(int(values["species"][0]))
    serve = tf.saved_model.load(model_dir).signatures["serving_default"]
    (scores,) = serve(examples=tf.constant(examples)).values()
    return float(np.mean(scores.numpy().argmax(axis=1) == np.array(labels)))


def same_rows(folder: str) -> dict[str, dict[str, float]]:
    """Each pushed model's accuracy on each pipeline's eval split (`stock`, `ours`)."""
    models = {
        "stock TFX penguin_pipeline_local": glob.glob(os.path.join(folder, "stock", "serving", "*"))[0],
        "ours": glob.glob(os.path.join(folder, "ours", "serving", "penguins", "*"))[0],
    }
    splits = {
        "stock": glob.glob(os.path.join(folder, "stock", "pipeline", "CsvExampleGen", "examples", "*"))[0],
        "ours": glob.glob(os.path.join(folder, "ours", "artifacts", "ExampleGen", "examples", "*"))[0],
    }
    return {
        name: {split: split_accuracy(model, os.path.join(uri, "Split-eval")) for split, uri in splits.items()}
        for name, model in models.items()
    }


def run_ours(folder: str, log_path: str) -> dict:
    """Runs the doc's spec on `folder` with `python -m pipelines run`; returns seconds, accuracy, blessing."""
    import yaml

    spec = yaml.safe_load(doc_block("yaml"))
    spec["pipeline"]["root"] = os.path.join(folder, "ours")
    spec_file = os.path.join(folder, "spec.yaml")
    with open(spec_file, "w", encoding="utf-8") as handle:
        yaml.safe_dump(spec, handle)
    started = time.perf_counter()
    with open(log_path, "a", encoding="utf-8") as log:
        subprocess.run(
            [sys.executable, "-m", "pipelines", "run", spec_file],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=dict(_environment(), PYTHONPATH=os.pathsep.join(filter(None, (REPO, os.environ.get("PYTHONPATH"))))),
            cwd=folder,
            check=True,
        )
    with open(os.path.join(spec["pipeline"]["root"], "last_run.json"), encoding="utf-8") as handle:
        summary = json.load(handle)["summary"]
    return {
        "seconds": time.perf_counter() - started,
        "accuracy": summary["metrics"]["accuracy"],
        "blessed": summary["blessed"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", help="folder for both runs (default: a new temporary folder)")
    args = parser.parse_args()
    folder = args.workdir or tempfile.mkdtemp(prefix="bench_module_file_")
    os.makedirs(folder, exist_ok=True)
    log = os.path.join(folder, "bench.log")
    print(f"logs: {log}", flush=True)
    write_example(folder)
    results = {"stock TFX penguin_pipeline_local": run_stock(folder, log), "ours": run_ours(folder, log)}
    scored = same_rows(folder)
    print("\n| pipeline | wall (s) | eval accuracy (its Evaluator) | on stock's eval split | on our eval split |")
    print("|---|---|---|---|---|")
    for name, result in results.items():
        on = scored[name]
        print(f"| {name} | {result['seconds']:.1f} | {result['accuracy']:.4f} | {on['stock']:.4f} | {on['ours']:.4f} |")


if __name__ == "__main__":
    main()
