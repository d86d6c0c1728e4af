"""One description of a CSV file's cells, read the same by the Python and the Arrow readers."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.csv as pa_csv

from components.common.csv_dialect import CsvDialect


def _arrow(text: str, dialect: CsvDialect, null_values: list[str]) -> dict[str, list]:
    names = dialect.cells(text.splitlines()[0].split(dialect.delimiter))
    batch = pa_csv.read_csv(
        io.BytesIO(text.encode()),
        read_options=pa_csv.ReadOptions(column_names=names, skip_rows=1),
        parse_options=dialect.arrow_parse_options(),
        convert_options=pa_csv.ConvertOptions(
            column_types={n: pa.string() for n in names}, null_values=null_values, strings_can_be_null=True
        ),
    ).to_batches()[0]
    return dialect.arrow_cells(batch, null_values).to_pydict()


def test_the_default_dialect_leaves_cells_as_they_are():
    assert CsvDialect().cells([" a", "b "]) == [" a", "b "]
    assert _arrow("x,y\n 1, ?\n", CsvDialect(), ["?"]) == {"x": [" 1"], "y": [" ?"]}


def test_spaces_at_the_start_of_cells_go_and_a_marker_under_them_is_missing():
    dialect = CsvDialect(";", skip_initial_space=True)
    assert dialect.cells(["  a", " b c ", ""]) == ["a", "b c ", ""]
    assert _arrow("x; y\n  1; ?\n2;  z \n", dialect, ["?"]) == {"x": ["1", "2"], "y": [None, "z "]}
