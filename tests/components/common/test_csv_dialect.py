"""One description of a CSV file's cells, read the same by the Python and the Arrow readers."""

from __future__ import annotations

from components.common.csv_dialect import CsvDialect


def _arrow(tmp_path, text: str, dialect: CsvDialect, null_values: list[str]) -> dict[str, list]:
    path = tmp_path / "data.csv"
    path.write_text(text, encoding="utf-8")
    names = dialect.cells(text.splitlines()[0].split(dialect.delimiter))
    columns: dict[str, list] = {name: [] for name in names}
    for batch in dialect.arrow_batches(str(path), names, null_values, 1 << 20):
        for name, values in batch.to_pydict().items():
            columns[name] += values
    return columns


def test_the_default_dialect_leaves_cells_as_they_are(tmp_path):
    assert CsvDialect().cells([" a", "b "]) == [" a", "b "]
    assert _arrow(tmp_path, "x,y\n 1, ?\n3,?\n", CsvDialect(), ["?"]) == {"x": [" 1", "3"], "y": [" ?", None]}


def test_spaces_at_the_start_of_cells_go_and_a_marker_under_them_is_missing(tmp_path):
    dialect = CsvDialect(";", skip_initial_space=True)
    assert dialect.cells(["  a", " b c ", ""]) == ["a", "b c ", ""]
    assert _arrow(tmp_path, "x; y\n  1; ?\n2;  z \n", dialect, ["?"]) == {"x": ["1", "2"], "y": [None, "z "]}
