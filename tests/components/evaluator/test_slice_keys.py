"""The NumPy slice keys give exactly the keys TFMA's ZetaSQL slicer gives, on the same batches."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
import tensorflow_model_analysis as tfma
from tensorflow_model_analysis import constants
from tensorflow_model_analysis.extractors import sql_slice_key_extractor
from tensorflow_model_analysis.utils import util

from components.evaluator import slice_keys
from components.evaluator.slicing import SlicePlan, slice_sql

PLAN = SlicePlan(buckets={"hour": (6.0, 12.0, 18.0), "fare": (2.5, 10.0)}, counts={})
SPECS = [("payment_type",), ("hour",), ("payment_type", "hour"), ("company", "fare"), ("day",)]


def _config(specs=SPECS, plan=PLAN) -> tfma.EvalConfig:
    return tfma.EvalConfig(
        model_specs=[tfma.ModelSpec()],
        slicing_specs=[tfma.SlicingSpec(slice_keys_sql=slice_sql(s, plan)) for s in specs],
    )


def _column(values, value_type):
    return pa.array(values, type=pa.large_list(value_type))


def _extract(columns: dict) -> dict:
    batch = pa.RecordBatch.from_arrays(list(columns.values()), list(columns))
    rows = batch.num_rows
    return {
        constants.FEATURES_KEY: util.record_batch_to_tensor_values(batch, None),
        constants.INPUT_KEY: np.array([b"x"] * rows, dtype=object),
        constants.LABELS_KEY: np.zeros((rows, 1)),
    }


def _keys(fn, extract):
    fn.setup()
    (result,) = fn.process({**extract, constants.FEATURES_KEY: dict(extract[constants.FEATURES_KEY])})
    keys = result[constants.SLICE_KEY_TYPES_KEY]
    return keys.values.tolist(), np.asarray(keys.indices).tolist(), np.asarray(keys.dense_shape).tolist()


def _both(extract, config=None, specs=SPECS, plan=PLAN):
    config = config or _config(specs, plan)
    queries = [slice_keys.parse_slice_sql(s.slice_keys_sql) for s in config.slicing_specs]
    ours = slice_keys.BatchSliceKeysFn(config, queries)
    return _keys(ours, extract), _keys(sql_slice_key_extractor.ExtractSqlSliceKeyFn(config), extract), ours


def test_dense_columns_one_value_per_row():
    extract = _extract(
        {
            "payment_type": _column([[b"Cash"], [b"Credit Card"], [b"Cash"], ["café".encode()]], pa.large_binary()),
            "hour": _column([[0], [6], [17], [23]], pa.int64()),
            "company": _column([["a"], ["b"], ["c"], ["d"]], pa.large_string()),
            "fare": _column([[1.0], [2.5], [9.99], [float("nan")]], pa.float32()),
            "day": _column([[1], [2], [3], [-4]], pa.int64()),
        }
    )
    ours, tfmas, fn = _both(extract)
    assert ours == tfmas
    assert fn.batches_by_zetasql == 0
    assert ((("payment_type", "café"),) in ours[0]) and ((("hour", "< 6"),) in ours[0])


def test_missing_and_several_values_per_row():
    extract = _extract(
        {
            "payment_type": _column([[b"Cash"], [], None, [b"A", b"B"], [b"C"]], pa.large_binary()),
            "hour": _column([[3, 13], [7], [8], [19, 1], []], pa.int64()),
            "company": _column([[], ["x"], ["y", "z"], None, ["w"]], pa.large_string()),
            "fare": _column([[1.0], [20.0, 3.0], [], [4.0], [5.0]], pa.float64()),
            "day": _column([[1], [2], [3], [4], [5]], pa.int64()),
        }
    )
    ours, tfmas, fn = _both(extract)
    assert ours == tfmas
    assert fn.batches_by_zetasql == 0


def test_a_column_absent_from_the_batch_gives_no_key_of_its_spec():
    extract = _extract({"payment_type": _column([[b"Cash"], [b"Card"]], pa.large_binary())})
    config = _config([("payment_type",), ("payment_type", "hour")])
    fn = slice_keys.BatchSliceKeysFn(
        config, [slice_keys.parse_slice_sql(s.slice_keys_sql) for s in config.slicing_specs]
    )
    values, indices, shape = _keys(fn, extract)
    assert values == [(("payment_type", "Cash"),), (("payment_type", "Card"),)]
    assert indices == [[0, 0], [1, 0]] and shape == [2, 1] and fn.batches_by_zetasql == 0
    with pytest.raises(RuntimeError, match="Failed to parse sql"):  # TFMA's own stage stops on such a batch
        _keys(sql_slice_key_extractor.ExtractSqlSliceKeyFn(config), extract)


def test_floats_not_bucketed_and_transformed_columns_are_left_to_zetasql():
    extract = _extract({"tip_rate": _column([[0.1], [2.0]], pa.float32())})
    ours, tfmas, fn = _both(extract, specs=[("tip_rate",)], plan=SlicePlan(buckets={}, counts={}))
    assert ours == tfmas and fn.batches_by_zetasql == 1
    assert ours[0] == [(("tip_rate", "0.1"),), (("tip_rate", "2"),)]  # ZetaSQL's float text

    extract = _extract({"payment_type": _column([[b"Cash"], [b"Card"]], pa.large_binary())})
    extract[constants.TRANSFORMED_FEATURES_KEY] = {"payment_type": np.array([[0], [1]])}
    ours, tfmas, fn = _both(extract, specs=[("payment_type",)])
    assert ours == tfmas and fn.batches_by_zetasql == 1
    assert ours[0] == [(("payment_type", "0"),), (("payment_type", "1"),)]  # TFMA slices on the transformed value


@pytest.mark.parametrize("specs", [SPECS, [("a b",)], [("x",), ("x", "hour")]])
def test_the_queries_parse_back_to_their_columns_and_buckets(specs):
    for columns in specs:
        query = slice_keys.parse_slice_sql(slice_sql(columns, PLAN))
        assert query.columns == tuple(columns)
        assert query.buckets == {c: PLAN.buckets[c] for c in columns if c in PLAN.buckets}


def test_other_queries_keep_tfmas_stage():
    assert slice_keys.parse_slice_sql("SELECT STRUCT(`a`) FROM example.`a` WHERE a > 1") is None
    assert slice_keys.parse_slice_sql("SELECT STRUCT(a) FROM example.a") is None
    config = tfma.EvalConfig(slicing_specs=[tfma.SlicingSpec(slice_keys_sql="SELECT STRUCT(`a`) FROM example.`a`, x")])
    assert slice_keys.fast_slice_keys_stage(config) is None
    stage = slice_keys.fast_slice_keys_stage(_config())
    assert stage.stage_name == sql_slice_key_extractor.SqlSliceKeyExtractor(_config()).stage_name
