"""Shared by the trainer benchmarks: the taxi run's transformed examples, FnArgs and a table printer.

The inputs come from the last local run of the bundled taxi spec
(`runs/chicago_taxi/last_run.json`: ExampleGen's examples and Transform's
graph). The raw train/eval splits are transformed once with that graph and
written as TFRecord files of transformed tf.Examples under a work directory,
which is what Transform writes with `transform.materialize: true`.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from components import ensure_legacy_keras  # noqa: E402

ensure_legacy_keras()

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

RUN_DIR = os.path.join(REPO, "runs", "chicago_taxi")
SPEC = os.path.join(REPO, "pipelines", "examples", "chicago_taxi.yaml")


def last_run_outputs(run_dir: str = RUN_DIR) -> tuple[str, str]:
    """(ExampleGen examples dir, Transform graph dir) of the last taxi run under `run_dir` (the spec's root)."""
    path = os.path.join(run_dir, "last_run.json")
    if not os.path.exists(path):
        raise SystemExit(
            f"no taxi run to benchmark on. Expected {path}. Received: nothing there. "
            "Run `.venv/bin/python -m pipelines run` first (about 3 minutes)."
        )
    with open(path, encoding="utf-8") as handle:
        outputs = json.load(handle)["outputs"]
    examples = next(o for o in outputs if "/ExampleGen/examples/" in o)
    graph = next(o for o in outputs if "/Transform/transform_graph/" in o)
    return examples, graph


def transform_config():
    from pipelines.api import load
    from pipelines.compiler import transform_config as config_of

    return config_of(load(SPEC))


def _feature(values: np.ndarray) -> tf.train.Feature:
    if values.dtype.kind in "iub":
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values.astype(np.int64).reshape(-1).tolist()))
    return tf.train.Feature(float_list=tf.train.FloatList(value=values.astype(np.float32).reshape(-1).tolist()))


def materialize(examples_dir: str, graph_dir: str, out_dir: str, files: int = 4) -> dict[str, str]:
    """Writes transformed tf.Examples of each split to `out_dir/Split-<name>/`; returns split -> file pattern."""
    import tensorflow_transform as tft

    output = tft.TFTransformOutput(graph_dir)
    layer = output.transform_features_layer()
    spec = output.raw_feature_spec()
    patterns = {}
    for split in ("train", "eval"):
        directory = os.path.join(out_dir, f"Split-{split}")
        patterns[split] = os.path.join(directory, "*")
        if os.path.isdir(directory):
            continue
        os.makedirs(directory)
        raw = tf.data.TFRecordDataset(tf.io.gfile.glob(os.path.join(examples_dir, f"Split-{split}", "*")), "GZIP")
        writers = [tf.io.TFRecordWriter(os.path.join(directory, f"part-{i:05d}.tfrecord")) for i in range(files)]
        row = 0
        for batch in raw.batch(1024):
            transformed = {k: v.numpy() for k, v in layer(tf.io.parse_example(batch, spec)).items()}
            for i in range(len(batch)):
                feature = {name: _feature(values[i]) for name, values in transformed.items()}
                example = tf.train.Example(features=tf.train.Features(feature=feature))
                writers[row % files].write(example.SerializeToString())
                row += 1
        for writer in writers:
            writer.close()
    return patterns


def taxi_fn_args(work_dir: str, run_name: str, training: dict, patterns: dict[str, str], graph_dir: str):
    """A TFX FnArgs for `run_fn` on the materialized taxi examples, with the spec's model."""
    import dataclasses

    from tfx.components.trainer.fn_args_utils import FnArgs

    from pipelines.api import load

    spec = load(SPEC).spec
    settings = {**dataclasses.asdict(spec.training), **training}
    run_dir = os.path.join(work_dir, run_name)
    return FnArgs(
        working_dir=run_dir,
        train_files=[patterns["train"]],
        eval_files=[patterns["eval"]],
        train_steps=settings["train_steps"],
        eval_steps=settings["eval_steps"],
        transform_output=graph_dir,
        transform_graph_path=graph_dir,
        serving_model_dir=os.path.join(run_dir, "model", "Format-Serving"),
        model_run_dir=os.path.join(run_dir, "model_run"),
        custom_config={
            "transform": transform_config().to_dict(),
            "model": dataclasses.asdict(spec.model),
            "training": settings,
            "materialized": True,
            "metrics": list(spec.evaluation.metrics),
        },
    )


def print_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A Markdown table (pastes into the README as is)."""
    cells = [[str(c) for c in row] for row in [headers, *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    line = lambda row: "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |"  # noqa: E731
    print(line(cells[0]))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in cells[1:]:
        print(line(row))
