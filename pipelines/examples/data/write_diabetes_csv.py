"""Writes `diabetes.csv` beside this file from the copy scikit-learn ships (no download).

The 442 rows of Efron et al.'s diabetes data, unscaled (`load_diabetes(scaled=False)`),
with the target as the last column `progression`. The CSV is checked in; this script
is how it was made, and `tests/pipelines/test_examples_e2e.py` checks that the two agree.

Usage:
    .venv/bin/python pipelines/examples/data/write_diabetes_csv.py
"""

from __future__ import annotations

import csv
import io
import os

__all__ = ["diabetes_csv_text", "CSV_PATH"]

CSV_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "diabetes.csv")
COLUMNS = ["age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6", "progression"]


def diabetes_csv_text() -> str:
    """The CSV text: a header, then one row per patient, numbers as scikit-learn stores them.

    Returns:
      The whole file's text.
    """
    from sklearn.datasets import load_diabetes

    data = load_diabetes(scaled=False)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for features, target in zip(data.data, data.target):
        writer.writerow([f"{value:g}" for value in features] + [f"{target:g}"])
    return out.getvalue()


if __name__ == "__main__":
    with open(CSV_PATH, "w", encoding="utf-8") as handle:
        handle.write(diabetes_csv_text())
    print(f"wrote {CSV_PATH}")
