"""`slicing.py`: quantile buckets, slice counts, TFMA's SQL slice keys and per-slice gates."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
import tensorflow_model_analysis as tfma
from tensorflow_model_analysis.extractors import sql_slice_key_extractor
from tensorflow_model_analysis.slicer import slicer_lib

from components.evaluator import slicing
from components.evaluator.eval_config import EvaluationRequest, build_eval_config

HOURS = list(range(24)) * 5
PAYMENTS = (["Cash", "Card", "Card", "Mobile"] * 30)[: len(HOURS)]


def _plan(buckets=4):
    values = {"hour": HOURS, "payment": PAYMENTS}
    return slicing.make_plan([("payment",), ("hour", "payment")], values, buckets)


def test_a_numeric_column_is_cut_into_quantile_buckets_of_the_eval_split():
    plan, per_spec = _plan()

    assert plan.buckets == {"hour": (5.75, 11.5, 17.25)}
    hours = {name: n for name, n in plan.counts.items() if name.startswith("hour=")}
    assert sum(hours.values()) == len(HOURS)
    assert list(plan.counts)[:3] == ["payment=Card", "payment=Cash", "payment=Mobile"]
    assert [name.split(", payment=")[0] for name in hours][::3][
        :4
    ] == [  # buckets from low to high, crossed with payment
        "hour=< 5.75",
        "hour=[5.75, 11.5)",
        "hour=[11.5, 17.25)",
        "hour=>= 17.25",
    ]
    assert plan.counts["payment=Card"] == PAYMENTS.count("Card")
    assert per_spec[("payment",)][("Cash",)] == PAYMENTS.count("Cash")
    assert slicing.bucket_labels(plan.buckets["hour"]) == ["< 5.75", "[5.75, 11.5)", "[11.5, 17.25)", ">= 17.25"]


def test_a_column_with_few_values_and_a_text_column_are_not_bucketed():
    plan, _ = slicing.make_plan([("hour",), ("payment",)], {"hour": [1, 2, 3] * 10, "payment": PAYMENTS[:30]}, 4)

    assert plan.buckets == {}
    assert plan.counts["hour=2"] == 10


def test_rows_missing_a_slice_column_are_in_no_slice_of_it():
    plan, _ = slicing.make_plan([("payment",)], {"payment": ["Cash", None, "Card"]}, 4)

    assert plan.counts == {"payment=Card": 1, "payment=Cash": 1}


def _sql_keys(sql: str, batch: pa.RecordBatch):
    """The slice keys TFMA's own SQL slicer gives each row for `sql` (the query it wraps our SQL in)."""
    from tfx_bsl.arrow import sql_util

    config = tfma.EvalConfig(slicing_specs=[tfma.SlicingSpec(slice_keys_sql=sql)])
    extractor = sql_slice_key_extractor.ExtractSqlSliceKeyFn(config)
    (wrapped,) = extractor._sqls  # noqa: SLF001 - the query text TFMA runs, to run it the same way
    return sql_util.RecordBatchSQLSliceQuery(wrapped, batch.schema).Execute(batch)


def test_tfmas_sql_slicer_names_the_buckets_the_plan_counted():
    plan, _ = _plan()
    batch = pa.RecordBatch.from_arrays(
        [pa.array([[h] for h in HOURS]), pa.array([[p.encode()] for p in PAYMENTS])], ["hour", "payment"]
    )

    keys = _sql_keys(slicing.slice_sql(("hour", "payment"), plan), batch)

    names = [slicing.slice_name(*zip(*row[0])) for row in keys]
    counted = {name: names.count(name) for name in set(names)}
    assert counted == {n: c for n, c in plan.counts.items() if n.startswith("hour=")}
    assert keys[0][0] == [("hour", "< 5.75"), ("payment", "Cash")]


def test_per_slice_gates_cover_the_slices_with_enough_rows_only():
    values = {"payment": ["Cash"] * 40 + ["Card"] * 50 + ["Mobile"] * 5}
    plan, per_spec = slicing.make_plan([("payment",)], values, 4)
    thresholds = {"binary_accuracy": {"min": 0.8, "per_slice": True, "min_examples": 30}, "auc": {"min": 0.6}}
    request = EvaluationRequest(
        label_key="y",
        task="classification",
        metrics=("binary_accuracy", "auc"),
        thresholds=thresholds,
        slices=(("payment",),),
    )
    config = build_eval_config(request)

    slicing.add_slicing(config, request.slices, plan, per_spec, thresholds)

    metrics = {json.loads(m.config)["name"]: m for spec in config.metrics_specs for m in spec.metrics}
    (gate,) = metrics["binary_accuracy"].per_slice_thresholds
    gated = [dict(spec.feature_values) for spec in gate.slicing_specs]
    assert gated == [{}, {"payment": "Card"}, {"payment": "Cash"}]  # overall; Mobile: 5 rows, under min_examples
    assert gate.threshold.value_threshold.lower_bound.value == 0.8
    # TFMA applies a plain `threshold` to every slice: a gate without per_slice holds on the overall slice only.
    assert not metrics["binary_accuracy"].HasField("threshold") and not metrics["auc"].HasField("threshold")
    (overall,) = metrics["auc"].per_slice_thresholds
    assert [dict(spec.feature_values) for spec in overall.slicing_specs] == [{}]
    assert "example_count" in metrics
    assert [s.slice_keys_sql for s in config.slicing_specs][1].startswith("SELECT STRUCT(`payment`)")
    # TFMA's validator matches such a spec to the SQL slice's key.
    key = (("payment", "Cash"),)
    assert slicer_lib.SingleSliceSpec(spec=gate.slicing_specs[2]).is_slice_applicable(key)
    assert not slicer_lib.SingleSliceSpec(spec=gate.slicing_specs[0]).is_slice_applicable(key)


def test_a_per_slice_gate_holds_against_the_baseline_on_the_same_slice_too():
    plan, per_spec = slicing.make_plan([("payment",)], {"payment": ["Cash"] * 40}, 4)
    thresholds = {"binary_accuracy": {"min": 0.8, "max_regression": 0.01, "per_slice": True, "min_examples": 30}}
    request = EvaluationRequest(
        label_key="y", task="classification", metrics=("binary_accuracy",), thresholds=thresholds
    )
    config = build_eval_config(request)

    slicing.add_slicing(config, (("payment",),), plan, per_spec, thresholds)

    (gate,) = config.metrics_specs[0].metrics[0].per_slice_thresholds
    assert gate.threshold.change_threshold.absolute.value == pytest.approx(-0.01)
    assert [dict(s.feature_values) for s in gate.slicing_specs] == [{}, {"payment": "Cash"}]


def test_a_failure_on_a_slice_names_the_slice():
    from tensorflow_model_analysis.proto import metrics_for_slice_pb2, validation_result_pb2

    from components.evaluator.verdict import describe_failure

    failure = validation_result_pb2.ValidationFailure()
    failure.metric_key.name = "accuracy"
    failure.metric_value.double_value.value = 0.71
    failure.metric_threshold.value_threshold.lower_bound.value = 0.8
    key = metrics_for_slice_pb2.SliceKey()
    key.single_slice_keys.add(column="payment_type", bytes_value=b"Cash")

    assert describe_failure(failure, key) == "accuracy on payment_type=Cash is 0.7100, below the minimum 0.8000"
    assert describe_failure(failure, metrics_for_slice_pb2.SliceKey()) == (
        "accuracy = 0.7100 is below the minimum 0.8000"
    )
    failure.metric_key.is_diff = True
    failure.metric_value.double_value.value = -0.05
    failure.metric_threshold.change_threshold.absolute.value = -0.01
    assert describe_failure(failure, key) == (
        "accuracy on payment_type=Cash changed by -0.0500 against the last blessed model on the same slice; "
        "allowed at worst -0.0100 (max_regression)"
    )


def _write_examples(path, rows: list[dict]) -> None:
    import tensorflow as tf

    def feature(value):
        if isinstance(value, str):
            return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value.encode()]))
        if isinstance(value, float):
            return tf.train.Feature(float_list=tf.train.FloatList(value=[value]))
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))

    with tf.io.TFRecordWriter(str(path), options="GZIP") as writer:
        for row in rows:
            features = {k: feature(v) for k, v in row.items() if v is not None}
            writer.write(tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString())


def test_read_columns_gives_one_value_per_row_and_none_where_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(slicing, "_BATCH", 3)  # several batches; the first has every column
    rows = [
        {"payment": "Cash", "hour": 1, "fare": 2.5},
        {"payment": "Café", "hour": None, "fare": 1.0},
        {"payment": None, "hour": 7, "fare": None},
        {"payment": "Card", "hour": 23, "fare": 0.1},
        {"payment": None, "hour": None, "fare": None},
    ]
    _write_examples(tmp_path / "data_tfrecord-00000-of-00001.gz", rows)

    values = slicing.read_columns(str(tmp_path), ["payment", "hour", "fare"])

    assert values["payment"] == ["Cash", "Café", None, "Card", None]
    assert values["hour"] == [1, None, 7, 23, None]
    assert values["fare"] == [2.5, 1.0, None, pytest.approx(0.1), None]


def test_read_columns_of_a_column_missing_from_the_first_batch(tmp_path, monkeypatch):
    monkeypatch.setattr(slicing, "_BATCH", 2)
    rows = [{"hour": 1}, {"hour": 2}, {"hour": 3, "payment": "Cash"}]
    _write_examples(tmp_path / "data_tfrecord-00000-of-00001.gz", rows)

    values = slicing.read_columns(str(tmp_path), ["payment", "hour"])

    assert values == {"payment": [None, None, "Cash"], "hour": [1, 2, 3]}
