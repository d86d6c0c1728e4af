"""`validate`'s messages on Parquet and JSON Lines data written by pandas, as a new user meets them.

Each names the file and where in it (a JSON Lines file's line, a Parquet file's row counted from 1,
never a CSV "line"), what was expected and received, and a fix that fits the format: a Parquet null
is not a `data.na_values` text, and a Parquet string column is text whatever its cells hold.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

# A wine-like table: 20 rows, numeric `Alcohol` and `Ash`, text label `Cultivar`.
WINE = pd.DataFrame(
    {
        "Alcohol": np.round(np.linspace(11.0, 14.8, 20), 2),
        "Ash": np.round(np.linspace(1.4, 3.2, 20), 2),
        "Cultivar": [["class_0", "class_1", "class_2"][i % 3] for i in range(20)],
    }
)


def _wine_spec(make_spec, data_path: str, **more):
    return make_spec(
        {
            "data.path": data_path,
            "features": {"Alcohol": {"transform": "zscore"}, "Ash": {"transform": "zscore"}},
            "label": {"name": "cultivar", "column": "Cultivar"},
            "evaluation": {"metrics": ["accuracy"]},
            **more,
        }
    )


def _one(problems, path: str) -> str:
    (problem,) = [p for p in problems if p.path == path]
    return problem.message


@pytest.mark.parametrize(
    "cut",
    [
        pytest.param(lambda line: line[: line.index('"Ash"') + 6], id="cut-after-a-key"),  # runs into line 12
        pytest.param(lambda line: line[:15], id="cut-mid-value"),
    ],
)
def test_a_jsonl_line_cut_short_is_named_by_its_file_line(tmp_path, make_spec, spec_problems, cut):
    WINE.to_json(tmp_path / "wine.jsonl", orient="records", lines=True)
    lines = (tmp_path / "wine.jsonl").read_text().splitlines()
    lines[10] = cut(lines[10])
    (tmp_path / "wine.jsonl").write_text("\n".join(lines) + "\n")

    message = _one(spec_problems(_wine_spec(make_spec, "wine.jsonl")), "data.path")

    assert message.startswith(f"{tmp_path / 'wine.jsonl'} line 11 is not valid JSON (")
    assert f"Received: `{lines[10]}`" in message
    assert "Fix or remove that line" in message
    assert "row 10" not in message and "changed from" not in message


def test_a_jsonl_key_changing_type_names_both_lines(tmp_path, make_spec, spec_problems):
    frame = WINE.astype({"Ash": object})
    frame.loc[13, "Ash"] = "n/a"  # a row of 20: pyarrow reads the file in one block, and says "row 13"
    frame.to_json(tmp_path / "wine.jsonl", orient="records", lines=True)

    message = _one(spec_problems(_wine_spec(make_spec, "wine.jsonl")), "data.path")

    assert message.startswith(
        f"{tmp_path / 'wine.jsonl'} line 14: key `Ash` holds text, but line 1 holds a number there."
    )
    assert "Received: 'n/a'" in message and "Expected each key to hold one type on every line" in message


def test_a_jsonl_type_change_past_pyarrows_first_block_is_named_by_its_file_line(tmp_path, make_spec, spec_problems):
    rows = 60_000  # past pyarrow's first block (1 MiB), whose rows it counts again from 0
    frame = pd.DataFrame({"Alcohol": np.arange(rows) * 0.5, "Ash": [1.5] * rows, "Cultivar": ["a", "b"] * (rows // 2)})
    frame = frame.astype({"Ash": object})
    frame.loc[rows - 10, "Ash"] = "high"
    frame.to_json(tmp_path / "wine.jsonl", orient="records", lines=True)

    message = _one(spec_problems(_wine_spec(make_spec, "wine.jsonl")), "data.path")

    assert message.startswith(f"{tmp_path / 'wine.jsonl'} line {rows - 9}: key `Ash` holds text")


def test_a_null_parquet_label_is_named_by_its_row_without_na_values_advice(tmp_path, make_spec, spec_problems):
    frame = WINE.astype({"Cultivar": object})
    frame.loc[[3, 7, 9], "Cultivar"] = None
    frame.to_parquet(tmp_path / "label_nan.parquet", index=False)

    message = _one(spec_problems(_wine_spec(make_spec, "label_nan.parquet")), "label.column")

    assert f"3 of 20 rows (the first: {tmp_path / 'label_nan.parquet'} row 4 (counting from 1))" in message
    assert "Add `missing: drop` under `label:`" in message
    assert "na_values" not in message and " line " not in message


def test_a_missing_csv_label_keeps_its_line_and_na_values_advice(tmp_path, make_spec, spec_problems):
    frame = WINE.astype({"Cultivar": object})
    frame.loc[3, "Cultivar"] = None
    frame.to_csv(tmp_path / "wine.csv", index=False)

    message = _one(spec_problems(_wine_spec(make_spec, "wine.csv")), "label.column")

    assert f"(the first: {tmp_path / 'wine.csv'} line 5; a cell in `data.na_values`)" in message
    assert "take it out of `data.na_values`" in message


def test_a_parquet_text_column_under_a_numeric_transform_names_the_row_and_the_type(tmp_path, make_spec, spec_problems):
    frame = WINE.astype({"Ash": str}).astype({"Ash": object})
    frame.loc[0, "Ash"], frame.loc[1, "Ash"] = None, "low"  # the first text cell: row 2
    frame.to_parquet(tmp_path / "wine.parquet", index=False)

    message = _one(spec_problems(_wine_spec(make_spec, "wine.parquet")), "features.Ash.transform")

    assert f"Received: `low` at {tmp_path / 'wine.parquet'} row 2 (counting from 1)." in message
    assert "The file stores `Ash` as text: write it as numbers, e.g. pandas `df['Ash'] = pd.to_numeric(" in message
    assert "na_values" not in message and " line " not in message


def test_a_parquet_text_regression_label_names_the_row_and_the_type(tmp_path, make_spec, spec_problems):
    frame = WINE.astype({"Alcohol": str})  # the file's type, not the cells' text, makes a column text
    frame.to_parquet(tmp_path / "wine.parquet", index=False)
    spec = make_spec(
        {
            "data.path": "wine.parquet",
            "features": {"Ash": {"transform": "zscore"}},
            "label": {"name": "alcohol", "column": "Alcohol", "task": "regression"},
            "evaluation": {"metrics": ["mean_squared_error"]},
        }
    )

    message = _one(spec_problems(spec), "label.column")

    assert f"Received: `11.0` at {tmp_path / 'wine.parquet'} row 1 (counting from 1)." in message
    assert "The file stores `Alcohol` as text: write it as numbers" in message and " line " not in message


def test_a_label_column_not_in_the_data_lists_the_columns(tmp_path, make_spec, spec_problems):
    WINE.to_parquet(tmp_path / "wine.parquet", index=False)

    message = _one(spec_problems(_wine_spec(make_spec, "wine.parquet", **{"label.column": "Grape"})), "label.column")

    assert message.endswith("Columns: Alcohol, Ash, Cultivar.")
    close = _one(spec_problems(_wine_spec(make_spec, "wine.parquet", **{"label.column": "Cultivr"})), "label.column")
    assert "Did you mean `Cultivar`?" in close and close.endswith("Columns: Alcohol, Ash, Cultivar.")


def test_files_differing_by_a_column_name_only_those_columns(tmp_path, make_spec, spec_problems):
    folder = tmp_path / "wine"
    folder.mkdir()
    WINE.to_parquet(folder / "part-0.parquet", index=False)
    WINE.rename(columns={"Ash": "Ash_g"}).to_parquet(folder / "part-1.parquet", index=False)

    message = _one(spec_problems(_wine_spec(make_spec, "wine")), "data.path")

    first, second = folder / "part-0.parquet", folder / "part-1.parquet"
    assert message.startswith(f"{second}: its columns differ from {first}'s.")
    assert f"Received: missing `Ash` (in {first}, not in {second}); extra `Ash_g` (in {second}, not in {first})." in (
        message
    )
    assert "Alcohol" not in message


def test_an_inf_in_parquet_names_its_row(tmp_path, make_spec, spec_problems):
    frame = WINE.copy()
    frame.loc[6, "Ash"] = np.inf
    frame.to_parquet(tmp_path / "wine.parquet", index=False)

    message = _one(spec_problems(_wine_spec(make_spec, "wine.parquet")), "data.path")

    assert "column `Ash` holds non-finite numbers (inf or NaN)" in message
    assert f"Received: `inf` at {tmp_path / 'wine.parquet'} row 7 (counting from 1), the first." in message
