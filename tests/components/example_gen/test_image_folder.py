"""ImageFolderExampleGen on a small folder, through real TFX components (LocalDagRunner, ML Metadata in SQLite).

One run per module: ImageFolderExampleGen -> StatisticsGen -> SchemaGen (train
only, as the compiler builds it) -> ExampleValidator -> DataGate. The folder
(`image_folders.write_image_folder`) mixes PNG and JPEG, grey and RGB,
upper-case extensions, a nested folder, one image under two classes, and
files that must be skipped: corrupt, truncated, a GIF named .png, a .txt, a
file outside any class folder.
"""

from __future__ import annotations

import glob
import json
import os
import sqlite3

import pytest
import tensorflow as tf
from image_folders import encode, write_image_folder

from components.example_gen.image_files import ImageFolderError, UnreadableImage, inspect_image, list_image_folder


def _pipeline(data: str, root: str):
    from tfx.components import ExampleValidator, SchemaGen, StatisticsGen
    from tfx.orchestration import metadata, pipeline
    from tfx.proto import example_gen_pb2

    from components.data_gate.component import DataGate
    from components.example_gen.image_component import ImageFolderExampleGen
    from pipelines.compiler import DEFAULT_BEAM_ARGS

    splits = [("train", 2), ("eval", 1)]
    output = example_gen_pb2.Output(
        split_config=example_gen_pb2.SplitConfig(
            splits=[example_gen_pb2.SplitConfig.Split(name=n, hash_buckets=w) for n, w in splits]
        )
    )
    example_gen = ImageFolderExampleGen(input_base=data, output_config=output).with_id("ExampleGen")
    statistics = StatisticsGen(examples=example_gen.outputs["examples"]).with_id("StatisticsGen")
    schema = SchemaGen(
        statistics=statistics.outputs["statistics"], infer_feature_shape=False, exclude_splits=["eval"]
    ).with_id("SchemaGen")
    validator = ExampleValidator(statistics=statistics.outputs["statistics"], schema=schema.outputs["schema"]).with_id(
        "ExampleValidator"
    )
    gate = DataGate(
        anomalies=validator.outputs["anomalies"],
        statistics=statistics.outputs["statistics"],
        schema=schema.outputs["schema"],
        label_column="label",
        task="classification",
    ).with_id("DataGate")
    return pipeline.Pipeline(
        pipeline_name="images",
        pipeline_root=os.path.join(root, "artifacts"),
        components=[example_gen, statistics, schema, validator, gate],
        metadata_connection_config=metadata.sqlite_metadata_connection_config(os.path.join(root, "metadata.sqlite")),
        beam_pipeline_args=list(DEFAULT_BEAM_ARGS),
        enable_cache=False,
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from tfx.orchestration.local.local_dag_runner import LocalDagRunner

    folder = tmp_path_factory.mktemp("image_folder_run")
    truth = write_image_folder(folder / "images")
    LocalDagRunner().run(_pipeline(str(folder / "images"), str(folder / "root")))
    return truth, folder / "root"


def _only(pattern: str) -> str:
    found = glob.glob(pattern)
    assert len(found) == 1, f"{pattern}: {found}"
    return found[0]


def _examples(root, split: str) -> list[dict]:
    files = glob.glob(str(root / "artifacts" / "ExampleGen" / "examples" / "*" / f"Split-{split}" / "*.gz"))
    rows = []
    for record in tf.data.TFRecordDataset(files, compression_type="GZIP"):
        feature = tf.train.Example.FromString(record.numpy()).features.feature
        rows.append({name: list(getattr(f, f.WhichOneof("kind")).value) for name, f in feature.items()})
    return rows


def _statistics(root, split: str):
    from tensorflow_metadata.proto.v0 import statistics_pb2

    stats = statistics_pb2.DatasetFeatureStatisticsList()
    path = _only(str(root / "artifacts" / "StatisticsGen" / "statistics" / "*" / f"Split-{split}" / "FeatureStats.pb"))
    with open(path, "rb") as handle:
        stats.ParseFromString(handle.read())
    return {f.path.step[0]: f for f in stats.datasets[0].features}


@pytest.mark.e2e
def test_every_readable_image_is_one_example_with_its_bytes_class_and_size(run):
    truth, root = run
    rows = _examples(root, "train") + _examples(root, "eval")
    assert all(set(row) == {"image", "label", "height", "width"} for row in rows), rows[0].keys()
    found = sorted((r["image"][0], r["label"][0].decode(), r["height"][0], r["width"][0]) for r in rows)
    assert found == sorted(truth.images.values())


@pytest.mark.e2e
def test_skipped_files_are_named_with_their_reason(run):
    truth, root = run
    report = _only(str(root / "artifacts" / "ExampleGen" / "examples" / "*" / "unreadable_images.json"))
    with open(report, encoding="utf-8") as handle:
        entries = {entry["path"]: entry["reason"] for entry in json.load(handle)}
    assert set(entries) == set(truth.skipped)
    for path, word in truth.skipped.items():
        assert word in entries[path], (path, entries[path])


@pytest.mark.e2e
def test_the_split_of_an_image_depends_only_on_its_bytes(run):
    from tfx.components.example_gen.base_example_gen_executor import _PartitionFn
    from tfx.proto import example_gen_pb2

    _, root = run
    config = example_gen_pb2.SplitConfig(partition_feature_name="image")
    for index, split in enumerate(("train", "eval")):
        rows = _examples(root, split)
        assert rows, f"split {split} is empty"
        for row in rows:
            example = tf.train.Example()
            example.features.feature["image"].bytes_list.value.append(row["image"][0])
            assert _PartitionFn(example, 2, [2, 3], config) == index
    shared = [r["label"][0] for s in ("train", "eval") for r in _examples(root, s) if r["height"][0] == 18]
    assert sorted(shared) == [b"cat", b"dog"]  # the same bytes under both classes: one split (checked above)


@pytest.mark.e2e
def test_statistics_schema_validator_and_data_gate_accept_image_examples(run):
    from google.protobuf import text_format
    from tensorflow_metadata.proto.v0 import anomalies_pb2, schema_pb2

    _, root = run
    with sqlite3.connect(str(root / "metadata.sqlite")) as db:
        states = dict(
            db.execute("select t.name, e.last_known_state from Execution e join Type t on e.type_id = t.id").fetchall()
        )
    assert len(states) == 5 and set(states.values()) == {3}, states  # 3: COMPLETE, DataGate included
    schema = text_format.Parse(
        open(_only(str(root / "artifacts" / "SchemaGen" / "schema" / "*" / "schema.pbtxt"))).read(), schema_pb2.Schema()
    )
    image = next(f for f in schema.feature if f.name == "image")
    assert image.type == schema_pb2.BYTES and image.WhichOneof("domain_info") is None  # no per-image domain
    assert [list(d.value) for d in schema.string_domain] == [["cat", "dog"]]
    for path in glob.glob(str(root / "artifacts" / "ExampleValidator" / "anomalies" / "*" / "Split-*" / "*.pb")):
        anomalies = anomalies_pb2.Anomalies()
        with open(path, "rb") as handle:
            anomalies.ParseFromString(handle.read())
        assert not anomalies.anomaly_info, (path, anomalies.anomaly_info)


@pytest.mark.e2e
def test_label_statistics_count_the_classes(run):
    truth, root = run
    counts: dict[str, float] = {}
    for split in ("train", "eval"):
        for top in _statistics(root, split)["label"].string_stats.top_values:
            counts[top.value] = counts.get(top.value, 0) + top.frequency
    expected: dict[str, int] = {}
    for _, label, _, _ in truth.images.values():
        expected[label] = expected.get(label, 0) + 1
    assert counts == expected


@pytest.mark.e2e
def test_height_and_width_statistics_give_the_size_range(run):
    truth, root = run
    sizes = [(h, w) for _, _, h, w in truth.images.values()]
    train, evaluation = _statistics(root, "train"), _statistics(root, "eval")
    heights = [s["height"].num_stats for s in (train, evaluation)]
    assert min(n.min for n in heights) == min(h for h, _ in sizes)
    assert max(n.max for n in heights) == max(h for h, _ in sizes)


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        ({}, "has no class sub-folders holding .jpg/.jpeg/.png files"),
        ({"a.png": b"x", "b.jpg": b"x"}, "Received: 2 other file(s)"),
        ({"cat/1.png": b"x", "cat/2.jpg": b"x", "dog/readme.txt": b"x"}, "has a single class: `cat` (2 image(s))"),
        ({"cat/notes.txt": b"x", "dog/notes.md": b"x"}, "has no class sub-folders"),
    ],
    ids=["empty", "files only", "one class", "no images"],
)
def test_folder_that_is_not_an_image_folder_is_named_with_the_fix(tmp_path, layout, message):
    for relative, data in layout.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_bytes(data)
    with pytest.raises(ImageFolderError) as caught:
        list_image_folder(str(tmp_path))
    assert message in str(caught.value)
    assert str(tmp_path) in str(caught.value) and "sub-folder" in str(caught.value)


def test_missing_folder_is_named(tmp_path):
    with pytest.raises(ImageFolderError, match="does not exist or is not a folder.*Fix `data.path`"):
        list_image_folder(str(tmp_path / "nowhere"))


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "is not an image"),
        (b"hello, world", "is not an image"),
        (encode((16, 16), "RGB", "PNG", 1)[:60], "does not decode"),
        (encode((64, 64), "RGB", "JPEG", 2)[:300], "does not decode"),
        (encode((8, 8), "RGB", "GIF", 3), "holds a GIF image; expected JPEG or PNG"),
        (encode((8, 8), "RGB", "BMP", 4), "holds a BMP image"),
    ],
    ids=["empty", "text", "truncated png", "truncated jpeg", "gif", "bmp"],
)
def test_unreadable_bytes_say_why(data, reason):
    with pytest.raises(UnreadableImage, match=reason):
        inspect_image(data)


@pytest.mark.parametrize(
    ("size", "mode", "kind"),
    [((20, 30), "RGB", "PNG"), ((31, 7), "L", "PNG"), ((40, 24), "RGB", "JPEG"), ((9, 65), "L", "JPEG")],
)
def test_readable_image_gives_format_height_and_width(size, mode, kind):
    assert inspect_image(encode(size, mode, kind, 0)) == (kind, *size)
