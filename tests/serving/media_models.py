"""Real image and text models for the serving tests, trained by the real pipeline.

`image_run(tmp_path_factory)` writes a TFRecord of tf.Examples holding 16x16
coloured squares (three classes, PNG and JPEG; `image` bytes + `label`), runs
the pipeline (ExampleGen .. Pusher, and the Deployer against an embedded
server) through `pipelines/run_local.py`, and returns where everything went;
`text_run` does the same for a CSV of short reviews. Each runs once per test
session, in whichever pytest-xdist worker asks first (the results are kept in
the folder the workers share), so every test module can ask for them.

A plain module (not conftest.py) with a unique name; tests/conftest.py puts
tests/ on sys.path.
"""

from __future__ import annotations

import base64
import csv
import dataclasses
import glob
import io
import os
import random
from collections.abc import Callable
from pathlib import Path

import tensorflow as tf
from example_runs import exported_model_dir
from PIL import Image
from taxi_fixtures import made_once_per_session, run_cli, write_spec

__all__ = [
    "CLASSES",
    "IMAGE_MODEL",
    "TEXT_MODEL",
    "MediaRun",
    "encoded_square",
    "example",
    "image_run",
    "text_run",
]

CLASSES = ("blue", "green", "red")
_COLOURS = {"red": (220, 30, 30), "green": (30, 200, 40), "blue": (30, 40, 220)}
IMAGE_MODEL = "squares"
TEXT_MODEL = "reviews"
_WORDS = {
    "pos": ["good", "great", "lovely", "excellent", "fine", "superb"],
    "neg": ["bad", "awful", "poor", "terrible", "dull", "broken"],
}
_FILLER = ["the", "film", "was", "really", "quite", "plot", "and", "acting"]


@dataclasses.dataclass(frozen=True)
class MediaRun:
    """A finished pipeline run.

    Attributes:
        root: The pipeline root.
        export_dir: The Trainer's serving model (`Format-Serving`).
        serving_dir: `<serving_dir>` holding `<model>/<version>/` (the Pusher's output).
        model_name: The pushed model's name.
        version: The pushed version.
        eval_rows: A few serialized tf.Examples of the data (as the eval split holds them).
        stdout: The CLI's output.
    """

    root: Path
    export_dir: Path
    serving_dir: Path
    model_name: str
    version: int
    eval_rows: list[bytes]
    stdout: str


def encoded_square(colour: str, *, fmt: str = "PNG", size: int = 16, seed: int = 0) -> bytes:
    """A `size` x `size` square of `colour` with a little noise, encoded as PNG or JPEG."""
    rng = random.Random(seed)
    base = _COLOURS[colour]
    image = Image.new("RGB", (size, size))
    image.putdata(
        [tuple(max(0, min(255, c + rng.randint(-25, 25))) for c in base) for _ in range(size * size)]  # type: ignore[misc]
    )
    buffer = io.BytesIO()
    image.save(buffer, format=fmt)
    return buffer.getvalue()


def example(**features: bytes | str) -> bytes:
    """A serialized tf.Example of bytes/str features."""
    return tf.train.Example(
        features=tf.train.Features(
            feature={
                name: tf.train.Feature(
                    bytes_list=tf.train.BytesList(value=[value.encode() if isinstance(value, str) else value])
                )
                for name, value in features.items()
            }
        )
    ).SerializeToString()


def _image_rows(count: int) -> list[bytes]:
    return [
        example(image=encoded_square(colour, fmt="PNG" if i % 2 else "JPEG", seed=i), label=colour)
        for i in range(count)
        for colour in (CLASSES[i % len(CLASSES)],)
    ]


def _text_rows(count: int) -> list[tuple[str, str]]:
    """Short reviews, all different.

    More than 100 distinct texts in the train split: with fewer, SchemaGen
    infers a string domain for the text column and DataGate refuses the eval
    split's unseen texts (reported to the lead).
    """
    rng = random.Random(7)
    rows = []
    for i in range(count):
        label = "pos" if i % 2 else "neg"
        words = rng.sample(_FILLER, 4) + rng.sample(_WORDS[label], 2)
        rng.shuffle(words)
        rows.append((" ".join(words).capitalize() + "!", label))
    return rows


def _spec(root: Path, data: Path, fmt: str, features: dict, label: dict, model: dict, name: str) -> dict:
    return {
        "pipeline": {"name": name, "root": str(root)},
        "data": {"path": str(data), "format": fmt, "splits": {"train": 2, "eval": 1}},
        "features": features,
        "label": label,
        "model": model,
        "training": {"train_steps": 40, "eval_steps": 2, "batch_size": 16, "learning_rate": 0.01},
        "evaluation": {"metrics": ["accuracy"], "thresholds": {"accuracy": {"min": 0.0}}},
        "push": {"model_name": name},
        "deploy": {"enabled": True, "p99_budget_ms": 5000.0, "sample_rows": 8},
    }


def _run(root: Path, spec: dict, rows: list[bytes]) -> MediaRun:
    completed = run_cli(write_spec(root.parent / f"{spec['pipeline']['name']}.yaml", spec))
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-5000:]
    serving_dir = root / "serving"
    name = spec["push"]["model_name"]
    versions = sorted(int(os.path.basename(p)) for p in glob.glob(str(serving_dir / name / "[0-9]*")))
    assert versions, f"nothing pushed under {serving_dir / name}: {completed.stdout[-2000:]}"
    return MediaRun(
        root=root,
        export_dir=Path(exported_model_dir(str(root))),
        serving_dir=serving_dir,
        model_name=name,
        version=versions[-1],
        eval_rows=rows,
        stdout=completed.stdout,
    )


_RUNS: dict[str, MediaRun] = {}


def _record(run: MediaRun) -> dict:
    fields = dataclasses.asdict(run)
    fields.update({key: str(value) for key, value in fields.items() if isinstance(value, Path)})
    fields["eval_rows"] = [base64.b64encode(row).decode() for row in run.eval_rows]
    return fields


def _from_record(fields: dict) -> MediaRun:
    paths = {field.name for field in dataclasses.fields(MediaRun) if field.type in (Path, "Path")}
    return MediaRun(
        **{key: Path(value) if key in paths else value for key, value in fields.items() if key != "eval_rows"},
        eval_rows=[base64.b64decode(row) for row in fields["eval_rows"]],
    )


def _once(tmp_path_factory, name: str, make: Callable[[Path], MediaRun]) -> MediaRun:
    """`make(folder)` once per session across the xdist workers, then cached in this process."""
    if name not in _RUNS:
        record = made_once_per_session(tmp_path_factory, f"{name}-pipeline", lambda base: _record(make(base)))
        _RUNS[name] = _from_record(record)
    return _RUNS[name]


def image_run(tmp_path_factory) -> MediaRun:
    """The image pipeline's run (once per session): MobileNetV2, random weights, 32x32 input."""
    return _once(tmp_path_factory, IMAGE_MODEL, _make_image_run)


def _make_image_run(base: Path) -> MediaRun:
    rows = _image_rows(60)
    data = base / "squares.tfrecord"
    with tf.io.TFRecordWriter(str(data)) as writer:
        for row in rows:
            writer.write(row)
    spec = _spec(
        base / "root",
        data,
        "tfrecord",
        {"image": {"transform": "image", "image_size": [32, 32], "channels": 3}},
        {"name": "label", "column": "label", "task": "classification", "classes": list(CLASSES)},
        {"type": "image_classifier", "backbone": "MobileNetV2", "weights": None, "hidden_units": [8]},
        IMAGE_MODEL,
    )
    return _run(base / "root", spec, rows[:12])


def text_run(tmp_path_factory) -> MediaRun:
    """The text pipeline's run (once per session): bag of embeddings over 8 words."""
    return _once(tmp_path_factory, TEXT_MODEL, _make_text_run)


def _make_text_run(base: Path) -> MediaRun:
    rows = _text_rows(240)  # over 100 distinct texts: see the note in _text_rows
    data = base / "reviews.csv"
    with open(data, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["review", "sentiment"])
        writer.writerows(rows)
    spec = _spec(
        base / "root",
        data,
        "csv",
        {"review": {"transform": "text", "sequence_length": 8, "top_k": 100}},
        {"name": "sentiment", "column": "sentiment", "task": "classification", "classes": ["neg", "pos"]},
        {"type": "text_classifier", "encoder": "bag_of_embeddings", "embedding_dim": 8, "hidden_units": [8]},
        TEXT_MODEL,
    )
    return _run(base / "root", spec, [example(review=text, sentiment=label) for text, label in rows[:12]])
