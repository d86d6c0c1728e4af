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
and on the rows both held out (`row_sets`; the serving signature on them). The module
seeds nothing, so last the module's `run_fn` trains again in this process on
each pipeline's transformed examples with the same seeds (`retrained`): what
is left between the two is then the data each pipeline hands it.

    .venv/bin/python benchmarks/module_file_vs_tfx.py [--workdir DIR] [--seeds N]
"""

from __future__ import annotations

import argparse
import contextlib
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


def split_rows(split_dir: str) -> dict[tuple, tuple[bytes, int]]:
    """A split's rows: (the four measurements, the label) -> (a tf.Example of the measurements as floats, label).

    TFX's CSV reader writes body_mass_g as an integer; the module parses every feature as a float.
    """
    import tensorflow as tf

    rows = {}
    for path in sorted(glob.glob(os.path.join(split_dir, "*"))):
        for record in tf.data.TFRecordDataset(path, compression_type="GZIP" if path.endswith(".gz") else ""):
            example = tf.train.Example.FromString(record.numpy())
            values = {k: (v.float_list.value or v.int64_list.value) for k, v in example.features.feature.items()}
            measured = tuple(round(float(values[k][0]), 3) for k in PENGUIN_FEATURES)
            features = {
                k: tf.train.Feature(float_list=tf.train.FloatList(value=[value]))
                for k, value in zip(PENGUIN_FEATURES, measured)
            }
            label = int(values["species"][0])
            serialized = tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()
            rows[(*measured, label)] = (serialized, label)
    return rows


def rows_accuracy(model_dir: str, rows: list[tuple[bytes, int]]) -> float:
    """The share of `rows` whose argmax of the model's `serving_default` output is the label."""
    import numpy as np
    import tensorflow as tf

    serve = tf.saved_model.load(model_dir).signatures["serving_default"]
    (scores,) = serve(examples=tf.constant([example for example, _ in rows])).values()
    return float(np.mean(scores.numpy().argmax(axis=1) == np.array([label for _, label in rows])))


def row_sets(stock_eval: str, our_eval: str) -> dict[str, list[tuple[bytes, int]]]:
    """Stock's eval split, ours, and the rows in both (held out by both pipelines: the fair comparison)."""
    stock, ours = split_rows(stock_eval), split_rows(our_eval)
    return {"stock": list(stock.values()), "ours": list(ours.values()), "both": [stock[k] for k in stock if k in ours]}


def same_rows(folder: str) -> dict[str, dict[str, float]]:
    """Each pushed model's accuracy on each pipeline's eval split (`stock`, `ours`) and on the rows in both."""
    models = {
        "stock TFX penguin_pipeline_local": glob.glob(os.path.join(folder, "stock", "serving", "*"))[0],
        "ours": glob.glob(os.path.join(folder, "ours", "serving", "penguins", "*"))[0],
    }
    sets = row_sets(
        _pipeline_artifacts(folder, "stock")["eval_split"], _pipeline_artifacts(folder, "ours")["eval_split"]
    )
    return {name: {rows: rows_accuracy(model, sets[rows]) for rows in sets} for name, model in models.items()}


def _pipeline_artifacts(folder: str, name: str) -> dict[str, str]:
    """The transformed examples, Transform graph, schema and Tuner values one pipeline wrote under `folder`."""
    base = os.path.join(folder, "stock", "pipeline") if name == "stock" else os.path.join(folder, "ours", "artifacts")
    found = {
        key: glob.glob(os.path.join(base, *parts, "*"))[0]
        for key, parts in {
            "examples": ("Transform", "transformed_examples"),
            "transform_graph": ("Transform", "transform_graph"),
            "schema": ("SchemaGen", "schema"),
            "hyperparameters": ("Tuner", "best_hyperparameters"),
        }.items()
    }
    example_gen = ("CsvExampleGen",) if name == "stock" else ("ExampleGen",)
    found["eval_split"] = os.path.join(glob.glob(os.path.join(base, *example_gen, "examples", "*"))[0], "Split-eval")
    return found


def retrained(folder: str, seeds: tuple[int, ...]) -> dict[str, list[dict[str, float]]]:
    """Per pipeline, per seed: the module's `run_fn` trained here on that pipeline's transformed examples (TFX's
    FnArgs, its train/eval steps and tuned values), scored on each pipeline's eval split."""
    import importlib.util

    import tensorflow as tf
    from tfx.components.trainer import fn_args_utils
    from tfx.types import artifact_utils, standard_artifacts
    from tfx.types import standard_component_specs as keys

    loader = importlib.util.spec_from_file_location("penguin_module", os.path.join(folder, "penguin_utils_keras.py"))
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    pipelines = {name: _pipeline_artifacts(folder, name) for name in ("stock", "ours")}
    sets = row_sets(pipelines["stock"]["eval_split"], pipelines["ours"]["eval_split"])
    results: dict[str, list[dict[str, float]]] = {}
    for name, found in pipelines.items():
        examples = standard_artifacts.Examples()
        examples.uri = found["examples"]
        examples.split_names = artifact_utils.encode_split_names(["train", "eval"])
        graph, schema = standard_artifacts.TransformGraph(), standard_artifacts.Schema()
        graph.uri, schema.uri = found["transform_graph"], found["schema"]
        with open(os.path.join(found["hyperparameters"], "best_hyperparameters.txt"), encoding="utf-8") as handle:
            tuned = json.load(handle)
        results[name] = []
        for seed in seeds:
            out = tempfile.mkdtemp(prefix=f"retrained_{name}_")
            fn_args = fn_args_utils.get_common_fn_args(
                {keys.EXAMPLES_KEY: [examples], keys.TRANSFORM_GRAPH_KEY: [graph], keys.SCHEMA_KEY: [schema]},
                {keys.TRAIN_ARGS_KEY: '{"num_steps": 100}', keys.EVAL_ARGS_KEY: '{"num_steps": 5}'},
                working_dir=out,
            )
            fn_args.transform_output = fn_args.transform_graph_path = found["transform_graph"]
            fn_args.serving_model_dir, fn_args.model_run_dir = os.path.join(out, "serving"), os.path.join(out, "run")
            fn_args.hyperparameters = tuned
            tf.keras.utils.set_random_seed(seed)
            with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):  # Keras's progress bars
                module.run_fn(fn_args)
            results[name].append({rows: rows_accuracy(fn_args.serving_model_dir, sets[rows]) for rows in sets})
            shutil.rmtree(out, ignore_errors=True)
    return results


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
    parser.add_argument("--seeds", type=int, default=3, help="seeded trainings per pipeline's examples (default: 3)")
    args = parser.parse_args()
    folder = args.workdir or tempfile.mkdtemp(prefix="bench_module_file_")
    os.makedirs(folder, exist_ok=True)
    log = os.path.join(folder, "bench.log")
    print(f"logs: {log}", flush=True)
    write_example(folder)
    results = {"stock TFX penguin_pipeline_local": run_stock(folder, log), "ours": run_ours(folder, log)}
    scored = same_rows(folder)
    header = "on stock's eval split | on our eval split | on rows both held out"
    print(f"\n| pipeline | wall (s) | eval accuracy (its Evaluator) | {header} |")
    print("|---|---|---|---|---|---|")
    for name, result in results.items():
        on = scored[name]
        print(
            f"| {name} | {result['seconds']:.1f} | {result['accuracy']:.4f} | {on['stock']:.4f} | {on['ours']:.4f} "
            f"| {on['both']:.4f} |"
        )
    seeds = tuple(range(1, args.seeds + 1))
    print(f"\nThe module's run_fn trained here on each pipeline's transformed examples, seeds {list(seeds)}:")
    print(f"\n| examples from | {header} |")
    print("|---|---|---|---|")
    for name, runs in retrained(folder, seeds).items():
        cells = [" / ".join(f"{run[rows]:.4f}" for run in runs) for rows in ("stock", "ours", "both")]
        print(f"| {name} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
