"""The profile of Parquet data as pandas and pyarrow write it: types, missing cells, text, NaN."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from penguin_frames import penguins_like

from pipelines.profiling.format_profile import profile_format


def test_profile_of_a_pandas_parquet_file(tmp_path):
    frame = penguins_like()
    frame.to_parquet(tmp_path / "p.parquet", index=False)  # pandas (pyarrow engine) wrote it

    profile = profile_format([str(tmp_path / "p.parquet")], "parquet", ["", "NA"], keep_columns=("bill",))

    assert profile.format == "parquet" and profile.rows == 40
    assert profile.columns == ("species", "bill", "year", "sex")
    assert profile.numeric == {"bill", "year"}
    assert profile.missing_cells["bill"] == (2, str(tmp_path / "p.parquet"), 4)  # row 4: index 3
    assert profile.missing_cells["sex"][0] == int((frame["sex"] == "NA").sum())
    assert profile.first_text["species"] == (str(tmp_path / "p.parquet"), 1, frame["species"][0])
    assert profile.minimum["year"] == frame["year"].min()
    assert profile.values["bill"][3] is None and profile.values["bill"][0] == frame["bill"][0]


def test_digits_in_a_text_column_stay_text(tmp_path):
    pq.write_table(pa.table({"code": ["1", "2", "3"], "x": [1, 2, 3]}), tmp_path / "t.parquet")
    profile = profile_format([str(tmp_path / "t.parquet")], "parquet")
    assert profile.numeric == {"x"} and profile.first_text["code"][2] == "1"


def test_a_float_nan_is_missing_while_nan_is_in_na_values(tmp_path):
    pq.write_table(pa.table({"x": pa.array([1.0, float("nan"), 2.0])}), tmp_path / "n.parquet")  # a NaN, not a null
    path = str(tmp_path / "n.parquet")
    assert profile_format([path], "parquet", ["", "nan"]).missing_cells["x"] == (1, path, 2)
    with pytest.raises(ValueError, match="column `x` holds non-finite numbers"):
        profile_format([path], "parquet", [""])
