"""`validate` on Parquet, Avro and JSON Lines data written by pyarrow, fastavro and pandas.

The profile finds what it finds for CSV (numeric columns by the file's types,
missing counts, the label's classes), the format follows the file name, and
bad input (an unreadable file, a nested column the spec uses, an Avro union of
two types) is one problem on `data.path` or the feature naming file and column.
"""

from __future__ import annotations

import fastavro
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from penguin_frames import penguins_like

from pipelines.load import load_spec
from pipelines.spec.label_values import label_classes

# The rows of conftest's `data_csv` (the minimal spec's columns), as typed columns.
TAXI = pd.DataFrame(
    {
        "fare": [5 + i * 0.75 for i in range(30)],
        "tips": [(i % 4) * 0.9 for i in range(30)],
        "trip_miles": [0.5 + i * 0.3 for i in range(30)],
        "company": [["Flash Cab", "Taxi Affiliation Services", "Blue Ribbon"][i % 3] for i in range(30)],
    }
)


def _spec(make_spec, path: str, **more):
    return make_spec({"data.path": path, **more})


@pytest.mark.parametrize("ending", ["parquet", "jsonl", "avro"])
def test_a_spec_on_each_format_is_valid_and_the_format_follows_the_name(tmp_path, make_spec, ending):
    path = tmp_path / f"taxi.{ending}"
    if ending == "parquet":
        pq.write_table(pa.Table.from_pandas(TAXI, preserve_index=False), path)
    elif ending == "jsonl":
        TAXI.to_json(path, orient="records", lines=True)
    else:
        schema = {
            "type": "record",
            "name": "Trip",
            "fields": [{"name": n, "type": "double"} for n in ("fare", "tips", "trip_miles")]
            + [{"name": "company", "type": "string"}],
        }
        with open(path, "wb") as handle:
            fastavro.writer(handle, fastavro.parse_schema(schema), TAXI.to_dict("records"))

    resolved = load_spec(str(_spec(make_spec, path.name)), cwd=str(tmp_path))

    assert resolved.data_format == ending and resolved.data_files == (str(path),)


def test_the_label_classes_are_read_from_parquet(tmp_path, make_spec):
    penguins_like().to_parquet(tmp_path / "p.parquet", index=False)
    spec = make_spec(
        {
            "data.path": "p.parquet",
            "features": {"bill": {"transform": "zscore"}, "sex": {"transform": "vocabulary"}},
            "label": {"name": "species", "column": "species"},
            "evaluation": {"metrics": ["accuracy"]},
        }
    )
    resolved = load_spec(str(spec), cwd=str(tmp_path))
    assert sorted(label_classes(resolved)) == ["Adelie", "Chinstrap", "Gentoo"]


def test_a_nested_column_the_spec_uses_is_refused_by_name(tmp_path, make_spec, spec_problems):
    table = pa.Table.from_pandas(TAXI, preserve_index=False).append_column(
        "stops", pa.array([[1, 2]] * len(TAXI), pa.list_(pa.int64()))
    )
    pq.write_table(table, tmp_path / "taxi.parquet")
    ok = _spec(make_spec, "taxi.parquet")
    assert load_spec(str(ok), cwd=str(tmp_path)).data_format == "parquet"  # unused: ignored

    bad = _spec(make_spec, "taxi.parquet", **{"features.stops": {"transform": "zscore"}})
    (problem,) = [p for p in spec_problems(bad) if p.path == "data.path"]
    assert "column `stops` holds list<item: int64> values" in problem.message
    assert "`data.flatten` flattens structs only: explode or aggregate lists" in problem.message


def test_an_unreadable_parquet_file_is_one_problem_naming_it(tmp_path, make_spec, spec_problems):
    (tmp_path / "taxi.parquet").write_bytes(b"not parquet at all")
    (problem,) = [p for p in spec_problems(_spec(make_spec, "taxi.parquet")) if p.path == "data.path"]
    assert problem.message.startswith(f"{tmp_path / 'taxi.parquet'} is not a readable Parquet file")


def test_an_avro_union_the_spec_cannot_map_is_refused(tmp_path, make_spec, spec_problems):
    schema = {
        "type": "record",
        "name": "Trip",
        "fields": [{"name": n, "type": "double"} for n in ("fare", "tips", "trip_miles")]
        + [{"name": "company", "type": ["null", "string", "long"]}],
    }
    with open(tmp_path / "taxi.avro", "wb") as handle:
        fastavro.writer(handle, fastavro.parse_schema(schema), TAXI.to_dict("records"))
    (problem,) = [p for p in spec_problems(_spec(make_spec, "taxi.avro")) if p.path == "data.path"]
    assert "Avro field `company` is a union of [null, string, long]" in problem.message


def test_a_numeric_transform_on_a_text_column_names_the_row(tmp_path, make_spec, spec_problems):
    frame = TAXI.astype({"fare": str})
    frame.loc[0, "fare"] = "free"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp_path / "taxi.parquet")
    problems = spec_problems(_spec(make_spec, "taxi.parquet"))
    (problem,) = [p for p in problems if p.path == "features.fare.transform"]
    assert "`fare` holds text. Received: `free`" in problem.message


def test_infinity_is_refused_unless_imputed(tmp_path, make_spec, spec_problems):
    frame = TAXI.copy()
    frame.loc[2, "fare"] = np.inf
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp_path / "taxi.parquet")
    (problem,) = [p for p in spec_problems(_spec(make_spec, "taxi.parquet")) if p.path == "data.path"]
    assert "column `fare` holds non-finite numbers" in problem.message
    imputed = _spec(make_spec, "taxi.parquet", **{"data.checks": {"non_finite": "impute"}})
    assert load_spec(str(imputed), cwd=str(tmp_path)).data_format == "parquet"


def test_mixed_file_endings_ask_for_the_format(tmp_path, make_spec, spec_problems):
    folder = tmp_path / "mixed"
    folder.mkdir()
    pq.write_table(pa.Table.from_pandas(TAXI, preserve_index=False), folder / "a.parquet")
    TAXI.to_json(folder / "b.jsonl", orient="records", lines=True)
    (problem,) = [p for p in spec_problems(_spec(make_spec, "mixed")) if p.path == "data.path"]
    assert "cannot tell the format" in problem.message and "parquet, avro, jsonl" in problem.message
