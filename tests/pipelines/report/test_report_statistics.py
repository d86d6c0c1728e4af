"""Per-feature statistics read back from real TFDV statistics files, train and eval side by side."""

from __future__ import annotations

import os

import pytest

from pipelines.report.statistics import TOP_VALUES, feature_statistics, read_split_statistics


def _write_split(uri, split: str, frame) -> None:
    import tensorflow_data_validation as tfdv

    folder = os.path.join(uri, f"Split-{split}")
    os.makedirs(folder)
    with open(os.path.join(folder, "FeatureStats.pb"), "wb") as handle:
        handle.write(tfdv.generate_statistics_from_dataframe(frame).SerializeToString())


@pytest.fixture(scope="module")
def statistics_uri(tmp_path_factory) -> str:
    import pandas as pd

    uri = str(tmp_path_factory.mktemp("statistics"))
    colours = [f"c{i}" for i in range(TOP_VALUES + 3)]
    _write_split(
        uri,
        "train",
        pd.DataFrame({"fare": [1.0, 2.0, None, 4.0], "kind": ["a", "b", "a", None], "colour": colours[:4]}),
    )
    _write_split(uri, "eval", pd.DataFrame({"fare": [10.0, 20.0], "kind": ["b", "b"], "colour": colours[:2]}))
    big = pd.DataFrame({"fare": [1.0] * len(colours), "kind": ["a"] * len(colours), "colour": colours})
    _write_split(uri, "many", big)
    return uri


def test_each_feature_has_one_entry_per_split_in_the_order_asked(statistics_uri):
    features = feature_statistics(read_split_statistics(statistics_uri, ["train", "eval", "absent"]))
    assert [f.name for f in features] == ["colour", "fare", "kind"]
    assert all(list(f.splits) == ["train", "eval"] for f in features)


def test_a_numeric_feature_has_its_missing_share_moments_and_histogram(statistics_uri):
    fare = {f.name: f for f in feature_statistics(read_split_statistics(statistics_uri, ["train", "eval"]))}["fare"]
    assert fare.numeric
    train, held_out = fare.splits["train"], fare.splits["eval"]
    assert (train.examples, train.missing_share) == (4, 0.25)
    assert (train.minimum, train.maximum) == (1.0, 4.0) and train.mean == pytest.approx(7 / 3)
    assert sum(count for _, _, count in train.histogram) == pytest.approx(3)
    assert train.histogram[0][0] == 1.0 and train.histogram[-1][1] == 4.0
    assert (held_out.missing_share, held_out.minimum, held_out.maximum) == (0.0, 10.0, 20.0)
    assert train.top_values == [] and train.unique is None


def test_a_categorical_feature_has_its_top_values_by_count(statistics_uri):
    kind = {f.name: f for f in feature_statistics(read_split_statistics(statistics_uri, ["train", "eval"]))}["kind"]
    assert not kind.numeric and kind.splits["train"].histogram == []
    assert kind.splits["train"].top_values == [("a", 2.0), ("b", 1.0)]
    assert kind.splits["train"].missing_share == 0.25 and kind.splits["train"].unique == 2
    assert kind.splits["eval"].top_values == [("b", 2.0)]


def test_top_values_stop_at_the_limit(statistics_uri):
    (colour,) = [f for f in feature_statistics(read_split_statistics(statistics_uri, ["many"])) if f.name == "colour"]
    assert len(colour.splits["many"].top_values) == TOP_VALUES
    assert colour.splits["many"].unique == TOP_VALUES + 3


def test_splits_without_a_statistics_file_give_nothing(tmp_path):
    assert read_split_statistics(str(tmp_path), ["train", "eval"]) == {}
    assert feature_statistics({}) == []


def test_encoded_images_are_binary_values_with_their_mean_size(tmp_path):
    import pandas as pd
    from image_folders import encode

    pngs = [encode((16, 16), "L", "PNG", seed) for seed in range(3)]
    _write_split(str(tmp_path), "train", pd.DataFrame({"image": pngs}))
    (image,) = feature_statistics(read_split_statistics(str(tmp_path), ["train"]))
    split = image.splits["train"]
    assert not image.numeric and split.top_values == []
    assert split.average_bytes == pytest.approx(sum(map(len, pngs)) / 3)


def test_a_wide_table_shows_the_spec_s_columns_first_and_at_most_the_cap(tmp_path):
    # 400 rows x 5,001 columns drew one chart per column for minutes when every column reached StatisticsGen.
    import pandas as pd
    from tfx.types import artifact_utils, standard_artifacts

    from pipelines.report.collect import MAX_FEATURES_SHOWN, ReportData, _statistics
    from pipelines.spec.models import DataSpec, FeatureSpec, LabelSpec, PipelineSection, PipelineSpec

    columns = [f"c{i:03d}" for i in range(MAX_FEATURES_SHOWN + 50)]
    _write_split(str(tmp_path), "train", pd.DataFrame({name: [1.0, 2.0] for name in columns}))
    artifact = standard_artifacts.ExampleStatistics()
    artifact.uri = str(tmp_path)
    artifact.split_names = artifact_utils.encode_split_names(["train"])
    spec = PipelineSpec(
        pipeline=PipelineSection(name="wide"),
        data=DataSpec(path="data.csv"),
        features={"c149": FeatureSpec()},
        label=LabelSpec(name="y", column="c148"),
    )
    data = ReportData("wide", run=None, dag=None)

    assert _statistics(data, {"StatisticsGen": {"statistics": [artifact.mlmd_artifact]}}, spec) is None

    names = [feature.name for feature in data.features]
    assert len(names) == MAX_FEATURES_SHOWN and data.features_left_out == 50
    assert names[:2] == ["c148", "c149"] and names[2:] == columns[: MAX_FEATURES_SHOWN - 2]
    assert data.statistics_uri == str(tmp_path)
