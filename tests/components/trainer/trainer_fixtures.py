"""Small real Trainer inputs: raw tf.Examples, a real tf.Transform graph, and FnArgs over them.

A plain module (not conftest.py) so tests and benchmarks can import it. The
Transform graph comes from tf.Transform's Beam implementation running the
framework's own `preprocessing_fn` over an in-memory dataset (in-process
Beam), exactly what the Transform component runs, minus TFX around it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Sequence
from typing import Any, Optional

import numpy as np
import tensorflow as tf

from components.transform.config import TransformConfig

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PROCESS_SCRIPT = os.path.join(HERE, "trainer_process.py")

CONFIG = TransformConfig(
    features={
        "company": {"transform": "vocabulary", "top_k": 10, "oov_buckets": 1},
        "fare": {"transform": "zscore"},
        "trip_miles": {"transform": "zscore"},
        "trip_start_hour": {"transform": "categorical", "num_buckets": 24},
    },
    label_name="big_tipper",
    task="classification",
    label_expression="tips > 0.2 * fare",
)
RAW_SPEC = {
    "company": tf.io.FixedLenFeature([], tf.string),
    "fare": tf.io.FixedLenFeature([], tf.float32),
    "trip_miles": tf.io.FixedLenFeature([], tf.float32),
    "trip_start_hour": tf.io.FixedLenFeature([], tf.int64),
    "tips": tf.io.FixedLenFeature([], tf.float32),
}


@dataclasses.dataclass(frozen=True)
class TrainerData:
    """Paths of one prepared dataset (each split in two GZIP files)."""

    raw_train: str
    raw_eval: str
    transformed_train: str
    transformed_eval: str
    transform_output: str


def synthetic_rows(count: int, seed: int) -> list[dict[str, Any]]:
    """Taxi-like rows whose label (tips > 20% of fare) depends on company and hour."""
    rng = np.random.default_rng(seed)
    companies = [f"company_{i}" for i in range(8)]
    rows = []
    for _ in range(count):
        miles = float(rng.exponential(3.0))
        fare = 3.0 + 2.0 * miles + float(rng.normal(0, 1))
        company = int(rng.integers(0, 8))
        hour = int(rng.integers(0, 24))
        generous = (company % 2 == 0) != (hour < 6)
        tips = fare * (0.25 if generous else 0.1) + float(rng.normal(0, 0.3))
        rows.append(
            {"company": companies[company], "fare": fare, "trip_miles": miles, "trip_start_hour": hour, "tips": tips}
        )
    return rows


def _example(row: dict[str, Any]) -> bytes:
    feature = {}
    for name, value in row.items():
        array = np.asarray(value).reshape(-1)
        if array.dtype.kind in "SUO":
            values = [v if isinstance(v, bytes) else str(v).encode() for v in array.tolist()]
            feature[name] = tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
        elif array.dtype.kind in "iub":
            feature[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=array.astype(np.int64).tolist()))
        else:
            feature[name] = tf.train.Feature(float_list=tf.train.FloatList(value=array.astype(np.float32).tolist()))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def _write_split(directory: str, rows: list[dict[str, Any]], files: int = 2) -> str:
    os.makedirs(directory, exist_ok=True)
    for shard in range(files):
        path = os.path.join(directory, f"part-{shard:05d}-of-{files:05d}.gz")
        with tf.io.TFRecordWriter(path, options="GZIP") as writer:
            for row in rows[shard::files]:
                writer.write(_example(row))
    return os.path.join(directory, "*")


def prepare_trainer_data(root: str, train_rows: int = 2000, eval_rows: int = 400) -> TrainerData:
    """Writes raw and transformed examples and the transform graph under `root`."""
    import apache_beam as beam
    import tensorflow_transform.beam as tft_beam
    from tensorflow_transform.tf_metadata import dataset_metadata, metadata_io, schema_utils

    from components.transform.preprocessing import preprocessing_fn

    train, evaluation = synthetic_rows(train_rows, seed=1), synthetic_rows(eval_rows, seed=2)
    metadata = dataset_metadata.DatasetMetadata(schema_utils.schema_from_feature_spec(RAW_SPEC))
    custom_config = CONFIG.to_dict()
    options = beam.options.pipeline_options.PipelineOptions(
        ["--runner=apache_beam.runners.portability.fn_api_runner.FnApiRunner"]
    )
    transform_output = os.path.join(root, "transform_graph")
    with beam.Pipeline(options=options) as pipeline, tft_beam.Context(temp_dir=os.path.join(root, "tft_tmp")):
        raw_train = pipeline | "Train" >> beam.Create(train)
        raw_eval = pipeline | "Eval" >> beam.Create(evaluation)
        (transformed_train, transformed_metadata), transform_fn = (
            raw_train,
            metadata,
        ) | tft_beam.AnalyzeAndTransformDataset(lambda inputs: preprocessing_fn(inputs, custom_config))
        transformed_eval, _ = ((raw_eval, metadata), transform_fn) | tft_beam.TransformDataset()
        _ = transform_fn | tft_beam.WriteTransformFn(transform_output)
        transformed = {"train": transformed_train, "eval": transformed_eval}
        collected = {name: rows | f"List{name}" >> beam.combiners.ToList() for name, rows in transformed.items()}
        written = {}
        for name, rows in collected.items():
            directory = os.path.join(root, "transformed", f"Split-{name}")
            written[name] = directory
            _ = rows | f"Write{name}" >> beam.Map(lambda r, d=directory: _write_split(d, r))
    metadata_io.write_metadata(metadata, os.path.join(transform_output, "metadata"))  # as TFX's Transform does
    return TrainerData(
        raw_train=_write_split(os.path.join(root, "raw", "Split-train"), train),
        raw_eval=_write_split(os.path.join(root, "raw", "Split-eval"), evaluation),
        transformed_train=os.path.join(written["train"], "*"),
        transformed_eval=os.path.join(written["eval"], "*"),
        transform_output=transform_output,
    )


def make_fn_args(
    data: TrainerData,
    run_dir: str,
    training: Optional[dict[str, Any]] = None,
    materialized: bool = False,
    model: Optional[dict[str, Any]] = None,
):
    """A real TFX `FnArgs` for `run_fn`, with small defaults (40 steps of 32, 4 eval steps, CPU)."""
    from tfx.components.trainer.fn_args_utils import FnArgs

    settings = {"train_steps": 40, "eval_steps": 4, "batch_size": 32, "steps_per_execution": 10, "seed": 0}
    settings.update(training or {})
    return FnArgs(
        working_dir=run_dir,
        train_files=[data.transformed_train if materialized else data.raw_train],
        eval_files=[data.transformed_eval if materialized else data.raw_eval],
        train_steps=settings["train_steps"],
        eval_steps=settings["eval_steps"],
        transform_output=data.transform_output,
        transform_graph_path=data.transform_output,
        serving_model_dir=os.path.join(run_dir, "model", "Format-Serving"),
        model_run_dir=os.path.join(run_dir, "model_run"),
        custom_config={
            "transform": CONFIG.to_dict(),
            "model": model or {"type": "wide_and_deep", "hidden_units": [16, 8], "embedding_dim": 4},
            "training": settings,
            "materialized": materialized,
            "metrics": ["binary_accuracy"],
        },
    )


def read_summary(fn_args) -> dict[str, Any]:
    """The `training_summary.json` a run wrote."""
    with open(os.path.join(fn_args.model_run_dir, "training_summary.json"), encoding="utf-8") as handle:
        return json.load(handle)


def start_trainer_process(
    fn_args_files: Sequence[str],
    logical_cpus: int = 0,
    tf_config: Optional[dict] = None,
    log_file: Optional[str] = None,
) -> subprocess.Popen:
    """Starts `trainer_process.py` (run_fn over each FnArgs file, in one fresh process)."""
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=REPO)
    env.pop("TF_CONFIG", None)
    if tf_config is not None:
        env["TF_CONFIG"] = json.dumps(tf_config)
    output = open(log_file, "w") if log_file else subprocess.DEVNULL  # noqa: SIM115 - the child owns it
    return subprocess.Popen(
        [sys.executable, PROCESS_SCRIPT, *fn_args_files, "--logical-cpus", str(logical_cpus)],
        stdout=output,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=REPO,
    )


def finish(process: subprocess.Popen, log_file: str, timeout: float = 240) -> None:
    """Waits for a trainer process; fails with the end of its log when it did not exit 0."""
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        code = "timeout"
    if code != 0:
        with open(log_file, encoding="utf-8", errors="replace") as handle:
            tail = handle.read()[-4000:]
        raise AssertionError(f"trainer process ended with {code}:\n{tail}")


@dataclasses.dataclass(frozen=True)
class ObservedRun:
    """What one watched training left behind: the TFX Model artifact, its logs, the metrics scraped."""

    model: Any
    model_run_dir: str
    scrapes: list[str]
    port: int


class PrometheusScraper:
    """Scrapes `http://127.0.0.1:<port>/metrics` every 20 ms in a thread, keeping each body that answered."""

    def __init__(self, port: int):
        self.url = f"http://127.0.0.1:{port}/metrics"
        self.bodies: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._scrape, daemon=True)

    def _scrape(self) -> None:
        while not self._stop.is_set():
            try:
                with urllib.request.urlopen(self.url, timeout=1) as response:
                    self.bodies.append(response.read().decode())
            except OSError:
                pass
            time.sleep(0.02)

    def __enter__(self) -> PrometheusScraper:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def run_generic_executor(data: TrainerData, root: str, custom_config: dict[str, Any]):
    """Runs TFX's Trainer `GenericExecutor` with our `run_fn` on materialized examples; returns the Model artifact."""
    from google.protobuf import json_format
    from tfx.components.trainer.executor import GenericExecutor
    from tfx.proto import trainer_pb2
    from tfx.types import artifact_utils, standard_artifacts

    examples = standard_artifacts.Examples()
    examples.uri = os.path.dirname(os.path.dirname(data.transformed_train))
    examples.split_names = artifact_utils.encode_split_names(["train", "eval"])
    graph = standard_artifacts.TransformGraph()
    graph.uri = data.transform_output
    model, model_run = standard_artifacts.Model(), standard_artifacts.ModelRun()
    model.uri, model_run.uri = os.path.join(root, "model"), os.path.join(root, "model_run")
    training = custom_config["training"]
    GenericExecutor().Do(
        {"examples": [examples], "transform_graph": [graph]},
        {"model": [model], "model_run": [model_run]},
        {
            "train_args": json_format.MessageToJson(trainer_pb2.TrainArgs(num_steps=training["train_steps"])),
            "eval_args": json_format.MessageToJson(trainer_pb2.EvalArgs(num_steps=training["eval_steps"])),
            "run_fn": "components.trainer.run_fn.run_fn",
            "custom_config": json.dumps(custom_config),
        },
    )
    return model
