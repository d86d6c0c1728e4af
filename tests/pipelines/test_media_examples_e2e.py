"""The image and text examples run end to end, and their pushed models answer through the embedded server.

`digits.yaml`: scikit-learn's digits written as PNG files in class folders
(`data/write_digits_images.py`), an `image_classifier`. `topics.yaml`: standard
library docstrings labelled by package (`data/topics.csv`), a `text_classifier`.
One pipeline run per example (module-scoped, fewer steps than the shipped
specs), then one embedded server (REST and gRPC on 127.0.0.1) serving the
pushed version: raw PNG bytes and raw strings go in, class names come out.
"""

from __future__ import annotations

import base64
import collections
import csv
import importlib
import os
import sys

import pytest
from example_runs import EXAMPLES, example_spec, run_example

DATA = os.path.join(EXAMPLES, "data")
DIGITS = [str(digit) for digit in range(10)]
# The shipped topics.csv (CPython 3.10.13's sources): rows per package, as data/README.md documents.
TOPIC_ROWS = {
    "asyncio": 185,
    "distutils": 250,
    "email": 228,
    "http": 97,
    "idlelib": 496,
    "importlib": 171,
    "lib2to3": 170,
    "logging": 163,
    "multiprocessing": 108,
    "tkinter": 585,
    "unittest": 111,
    "urllib": 71,
    "xml": 180,
}


def _data_module(name: str):
    sys.path.insert(0, DATA)
    try:
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)


def _files(folder) -> dict[str, bytes]:
    found = {}
    for parent, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(parent, name)
            with open(path, "rb") as handle:
                found[os.path.relpath(path, folder)] = handle.read()
    return found


def test_the_digits_writer_writes_the_same_png_files_twice(tmp_path):
    writer = _data_module("write_digits_images")
    assert writer.write_digits(str(tmp_path / "a")) == 1797
    (tmp_path / "b" / "stale").mkdir(parents=True)  # an old folder's leftovers go
    writer.write_digits(str(tmp_path / "b"))

    first, second = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert first == second
    assert sorted(os.listdir(tmp_path / "a")) == DIGITS
    assert collections.Counter(path.split(os.sep)[0] for path in first)["8"] == 174  # scikit-learn's count
    from PIL import Image

    with Image.open(tmp_path / "a" / "0" / "0000.png") as image:
        assert (image.format, image.mode, image.size) == ("PNG", "L", (32, 32))
        low, high = image.getextrema()
        assert low == 0 and high > 200  # 0-16 scaled to 0-255 (then smoothed by the enlarging)


def test_the_digits_writer_refuses_a_file_as_its_folder(tmp_path):
    writer = _data_module("write_digits_images")
    target = tmp_path / "digits"
    target.write_text("not a folder")
    with pytest.raises(NotADirectoryError, match=r"expected a folder .*Received: .*digits.*Pass another folder"):
        writer.write_digits(str(target))
    assert target.read_text() == "not a folder"


def _topics() -> list[dict]:
    with open(os.path.join(DATA, "topics.csv"), encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_shipped_topics_csv_has_the_documented_topics_and_rows():
    rows = _topics()
    assert list(rows[0]) == ["text", "topic"]
    assert collections.Counter(row["topic"] for row in rows) == TOPIC_ROWS
    texts = [row["text"] for row in rows]
    assert len(set(texts)) == len(texts) == 2815
    assert min(len(text.split()) for text in texts) >= 5
    assert all(text == " ".join(text.split()) for text in texts)  # one line, whitespace collapsed
    order = [row["topic"] for row in rows]
    assert order == sorted(order)  # grouped by package, in order


def test_the_shipped_topics_csv_is_what_the_script_writes():
    if sys.version_info[:3] != (3, 10, 13):
        pytest.skip(f"topics.csv was written from CPython 3.10.13's sources; this is {sys.version.split()[0]}")
    writer = _data_module("write_docstring_topics")
    with open(writer.CSV_PATH, encoding="utf-8", newline="") as handle:
        assert handle.read() == writer.topics_csv_text()


def test_the_topics_writer_names_a_missing_package_folder(tmp_path):
    writer = _data_module("write_docstring_topics")
    with pytest.raises(FileNotFoundError, match=r"no `asyncio` package folder\. Expected .*asyncio\. Use a Python"):
        writer.topic_rows(str(tmp_path), topics=("asyncio",))


# --- end to end ---------------------------------------------------------------------------------


class _Served:
    """The pushed model of a run behind an embedded server (REST + gRPC on 127.0.0.1)."""

    def __init__(self, pushed: str, name: str, config_dir: str) -> None:
        from serving import config as cfg
        from serving.server import EmbeddedServer

        self.name, self.pushed = name, pushed
        config = cfg.server_config(cfg.model_config(name, os.path.dirname(pushed)))
        files = cfg.write_server_files(config_dir, config)
        self.server = EmbeddedServer.from_files(
            files, rest_port=0, grpc_port=0, allow_version_labels_for_unavailable_models=True
        ).start()

    def predict_raw(self, instances: list[dict]) -> list[dict]:
        from serving.client import RestClient

        with RestClient(self.server.rest_url, timeout=60) as client:
            body = {"signature_name": "serving_raw", "instances": instances}
            return client.predict(self.name, body)["predictions"]

    def classify(self, examples: list[bytes]) -> list[list[tuple[str, float]]]:
        """(class name, score) per class, for each serialized tf.Example, through gRPC Classify."""
        import grpc
        from tensorflow_serving.apis import classification_pb2, prediction_service_pb2_grpc

        request = classification_pb2.ClassificationRequest()
        request.model_spec.name = self.name
        request.model_spec.signature_name = "classification"
        for example in examples:
            request.input.example_list.examples.add().ParseFromString(example)
        with grpc.insecure_channel(self.server.grpc_address) as channel:
            response = prediction_service_pb2_grpc.PredictionServiceStub(channel).Classify(request, timeout=60)
        return [[(c.label, c.score) for c in row.classes] for row in response.result.classifications]

    def stop(self) -> None:
        self.server.stop()


def _bytes_example(column: str, value: bytes) -> bytes:
    import tensorflow as tf

    feature = {column: tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))}
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def _best(classes: list[tuple[str, float]]) -> str:
    return max(classes, key=lambda pair: pair[1])[0]


def _run_and_serve(tmp_path_factory, name: str, data_path: str, training: dict):
    tmp_path = tmp_path_factory.mktemp(name)
    root = str(tmp_path / "root")
    spec = example_spec(name, root, training=training)
    spec["data"]["path"] = data_path
    summary, stdout = run_example(tmp_path, spec)
    assert summary.get("pushed_path"), stdout
    served = _Served(summary["pushed_path"], spec["push"]["model_name"], str(tmp_path / "serving_config"))
    return summary, stdout, served


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    """The digits example (its PNG files written afresh), run with fewer steps, and its model served."""
    folder = str(tmp_path_factory.mktemp("digits_data") / "digits")
    _data_module("write_digits_images").write_digits(folder)
    summary, stdout, served = _run_and_serve(tmp_path_factory, "digits", folder, {"train_steps": 150})
    yield {"summary": summary, "stdout": stdout, "served": served, "folder": folder}
    served.stop()


@pytest.fixture(scope="module")
def topics(tmp_path_factory):
    """The topics example on the shipped CSV, run with fewer steps, and its model served."""
    summary, stdout, served = _run_and_serve(
        tmp_path_factory, "topics", os.path.join(DATA, "topics.csv"), {"train_steps": 300}
    )
    yield {"summary": summary, "stdout": stdout, "served": served}
    served.stop()


def _one_png_per_digit(folder: str) -> list[tuple[str, bytes]]:
    """(digit, PNG bytes) of the first two files of each class folder."""
    pairs = []
    for digit in DIGITS:
        for name in sorted(os.listdir(os.path.join(folder, digit)))[:2]:
            with open(os.path.join(folder, digit, name), "rb") as handle:
                pairs.append((digit, handle.read()))
    return pairs


@pytest.mark.e2e
def test_the_digits_example_is_blessed_and_pushed(digits):
    summary = digits["summary"]
    assert summary["blessed"], digits["stdout"]
    assert summary["metrics"]["accuracy"] >= 0.8, summary["metrics"]
    # The Trainer's accelerator memory estimate reaches the console before training, not only the log file.
    stdout = digits["stdout"]
    estimate = stdout.index("Trainer: about ")
    assert "of accelerator memory per step at batch" in stdout[estimate:] and estimate < stdout.index("] Trainer ")
    assert os.path.isdir(summary["pushed_path"])


@pytest.mark.e2e
def test_the_pushed_digits_model_names_the_digit_in_png_bytes_over_rest(digits):
    pairs = _one_png_per_digit(digits["folder"])
    instances = [{"image": {"b64": base64.b64encode(png).decode("ascii")}} for _, png in pairs]

    predictions = digits["served"].predict_raw(instances)

    assert all(p["classes"] == DIGITS for p in predictions), predictions[0]
    assert all(p["label"] == DIGITS[max(range(10), key=p["scores"].__getitem__)] for p in predictions)
    right = sum(p["label"] == digit for p, (digit, _) in zip(predictions, pairs))
    # Chance is 2 of 20; the eval split's accuracy (>= 0.8, the test above) leaves room for a few misses here.
    assert right >= 12, [(digit, p["label"]) for p, (digit, _) in zip(predictions, pairs)]


@pytest.mark.e2e
def test_the_pushed_digits_model_classifies_tf_examples_over_grpc(digits):
    pairs = _one_png_per_digit(digits["folder"])
    served = digits["served"]

    classified = served.classify([_bytes_example("image", png) for _, png in pairs])
    rest = served.predict_raw([{"image": {"b64": base64.b64encode(png).decode("ascii")}} for _, png in pairs])

    assert [[label for label, _ in row] for row in classified] == [DIGITS] * len(pairs)
    assert [_best(row) for row in classified] == [p["label"] for p in rest]  # the same model either way
    for row, p in zip(classified, rest):
        assert [score for _, score in row] == pytest.approx(p["scores"], abs=1e-5)


def _topic_samples(per_topic: int = 3) -> list[tuple[str, str]]:
    """(topic, text) of the longest `per_topic` rows of each topic: the clearest cases."""
    by_topic = collections.defaultdict(list)
    for row in _topics():
        by_topic[row["topic"]].append(row["text"])
    return [(topic, text) for topic in sorted(by_topic) for text in sorted(by_topic[topic], key=len)[-per_topic:]]


@pytest.mark.e2e
def test_the_topics_example_is_blessed_and_pushed(topics):
    summary = topics["summary"]
    assert summary["blessed"], topics["stdout"]
    assert summary["metrics"]["accuracy"] >= 0.6, summary["metrics"]
    assert os.path.isdir(summary["pushed_path"])


@pytest.mark.e2e
def test_the_pushed_topics_model_names_the_package_of_raw_text_over_rest(topics):
    samples = _topic_samples()

    predictions = topics["served"].predict_raw([{"text": text} for _, text in samples])

    assert all(p["classes"] == sorted(TOPIC_ROWS) for p in predictions), predictions[0]
    right = sum(p["label"] == topic for p, (topic, _) in zip(predictions, samples))
    assert right >= 0.7 * len(samples), [(topic, p["label"]) for p, (topic, _) in zip(predictions, samples)]


@pytest.mark.e2e
def test_the_pushed_topics_model_classifies_tf_examples_over_grpc(topics):
    samples = _topic_samples(1)
    served = topics["served"]

    classified = served.classify([_bytes_example("text", text.encode("utf-8")) for _, text in samples])
    rest = served.predict_raw([{"text": text} for _, text in samples])

    assert [[label for label, _ in row] for row in classified] == [sorted(TOPIC_ROWS)] * len(samples)
    assert [_best(row) for row in classified] == [p["label"] for p in rest]
    for row, p in zip(classified, rest):
        assert [score for _, score in row] == pytest.approx(p["scores"], abs=1e-5)
