"""`validate` with `data.flatten` on a Parquet struct column written by pyarrow.

With `flatten: true` the struct's leaves are columns (`trip__miles`) that
features and the label may name; without it a feature on the struct is
refused naming the fix; a list column stays refused either way, and
`flatten` on flat data (CSV, a query) is an error naming the key.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.load import load_spec
from pipelines.profiling.format_profile import label_cells
from pipelines.spec import SpecError

COMPANIES = ["Flash Cab", "Taxi Affiliation Services", "Blue Ribbon"]
TRIP = pa.struct([("miles", pa.float64()), ("company", pa.struct([("name", pa.string())]))])


def _write(folder) -> None:
    rows = [
        {
            "fare": 5 + i * 0.75,
            "tips": (i % 4) * 0.9,
            "trip": {"miles": 0.5 + i * 0.3, "company": {"name": COMPANIES[i % 3]}},
            "stops": [i, i + 1],
        }
        for i in range(30)
    ]
    schema = pa.schema(
        [("fare", pa.float64()), ("tips", pa.float64()), ("trip", TRIP), ("stops", pa.list_(pa.int64()))]
    )
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / "trips.parquet")


FEATURES = {
    "fare": {"transform": "zscore"},
    "trip__miles": {"transform": "zscore"},
    "trip__company__name": {"transform": "vocabulary", "top_k": 10},
}


def test_with_flatten_the_leaves_are_columns_the_spec_may_use(tmp_path, make_spec):
    _write(tmp_path)
    spec = make_spec({"data.path": "trips.parquet", "data.flatten": True, "features": FEATURES})
    resolved = load_spec(str(spec), cwd=str(tmp_path))
    assert resolved.data_format == "parquet" and resolved.spec.data.flatten is True


def test_without_flatten_a_feature_on_the_struct_is_refused_naming_the_fix(tmp_path, make_spec, spec_problems):
    _write(tmp_path)
    spec = make_spec({"data.path": "trips.parquet", "features": {**FEATURES, "trip": {"transform": "zscore"}}})
    (problem,) = [p for p in spec_problems(spec) if p.path == "data.path"]
    assert "column `trip` holds struct<" in problem.message
    assert "Received a struct column. Set `data.flatten: true`" in problem.message
    assert "(`trip__miles`, `trip__company`, a nested struct's fields `a__b__c`)" in problem.message


def test_without_flatten_a_feature_on_a_leaf_is_not_in_the_data_with_the_fix(tmp_path, make_spec, spec_problems):
    _write(tmp_path)
    spec = make_spec({"data.path": "trips.parquet", "features": FEATURES})
    problems = {p.path: p.message for p in spec_problems(spec)}
    assert problems["features.trip__miles"].startswith("column `trip__miles` is not in the data")
    assert (
        "`trip` is a column of its own: if it is a struct, add `flatten: true` under `data:`"
        in (problems["features.trip__miles"])
    )


def test_with_flatten_a_list_column_stays_refused_saying_structs_only(tmp_path, make_spec, spec_problems):
    _write(tmp_path)
    spec = make_spec(
        {"data.path": "trips.parquet", "data.flatten": True, "features": {**FEATURES, "stops": {"transform": "zscore"}}}
    )
    (problem,) = [p for p in spec_problems(spec) if p.path == "data.path"]
    assert "column `stops` holds list<item: int64> values" in problem.message
    assert "`data.flatten` flattens structs only: explode or aggregate lists and maps upstream" in problem.message


def test_a_leaf_may_be_the_label_column(tmp_path):
    _write(tmp_path)
    cells, numeric = label_cells([str(tmp_path / "trips.parquet")], "parquet", "trip__company__name", [""], True)
    assert cells == set(COMPANIES) and not numeric
    with pytest.raises(ValueError, match="label column `trip__company__name` is not in the data"):
        label_cells([str(tmp_path / "trips.parquet")], "parquet", "trip__company__name", [""])


def test_flatten_on_csv_data_is_refused_naming_the_key(tmp_path, make_spec, spec_problems):
    spec = make_spec({"data.flatten": True})  # the fixture's taxi.csv
    (problem,) = [p for p in spec_problems(spec) if p.path == "data.flatten"]
    assert problem.message.startswith("`flatten` reads struct columns of Parquet, Avro or JSON Lines files.")
    assert "read as csv, whose columns are flat. Remove `flatten`" in problem.message


def test_flatten_with_a_query_or_a_csv_format_is_a_spec_error(tmp_path, make_spec):
    spec = make_spec({"data": {"format": "csv", "path": "taxi.csv", "flatten": True}})
    with pytest.raises(SpecError, match=r"Received: flatten=true with format=csv, whose columns are flat"):
        load_spec(str(spec), cwd=str(tmp_path))
