"""Run-time failures whose cause the data shows, told in one line: the file, the column, the row, the fix.

`validate` checks the data before a run; a file that changes after that (a
row appended while the run reads it) can still hold text in a column the
spec reads as a number. ExampleGen then types the column as text and
Transform stops in TensorFlow (`StringToNumberOp could not correctly convert
string`), with a long dump that names neither the column nor the row (or,
when the column has few distinct values, DataGate stops on "unexpected
string values"). The runner asks `explain_failure` for a line to print
instead; the dump stays in the run's log file.
"""

from __future__ import annotations

import re

from pipelines.profiling.data_checks import DataProblem, profile_csv
from pipelines.spec.data_rules import label_columns
from pipelines.spec.models import NUMERIC_TRANSFORMS
from pipelines.spec.resolved import ResolvedSpec

__all__ = ["explain_failure"]

_TEXT_AS_NUMBER = re.compile(r"could not correctly convert string: ([^\n\]]*)")
# DataGate's line when the text column has few distinct values (TFDV gave the train split's a domain).
_UNEXPECTED_STRINGS = "Unexpected string values"


def _numeric_columns(resolved: ResolvedSpec) -> dict[str, str]:
    """Column -> what reads it as a number (`features.x.transform: zscore`, `label.column`, ...)."""
    spec = resolved.spec
    readers = {name: f"`features.{name}.transform: {f.transform}`" for name, f in spec.features.items()}
    numeric = {name: readers[name] for name, f in spec.features.items() if f.transform in NUMERIC_TRANSFORMS}
    if spec.label.task == "regression" or spec.label.expression is not None:
        for name in label_columns(spec):
            numeric.setdefault(name, "the label")
    return numeric


def explain_failure(resolved: ResolvedSpec, error: BaseException) -> str | None:
    """One line saying what in the data made a component fail, or None when the data does not explain it.

    Args:
        resolved: the run's spec.
        error: the component's error (`ComponentFailed.__cause__`).

    Returns:
        "what is wrong, where (file, line, cell), expected, how to fix", or None.
    """
    found = _TEXT_AS_NUMBER.search(str(error))
    if found is None and _UNEXPECTED_STRINGS not in str(error):
        return None
    cell = found.group(1).strip() if found else None
    numeric = _numeric_columns(resolved)
    if resolved.data_format == "csv" and resolved.data_files and numeric:
        try:
            profile = profile_csv(
                list(resolved.data_files),
                resolved.spec.data.na_values,
                "impute",
                dialect=resolved.csv_dialect,
                columns=tuple(sorted(numeric)),
            )
        except (DataProblem, OSError, UnicodeDecodeError, ValueError):
            profile = None
        for name, reader in numeric.items():
            if profile is not None and name in profile.first_text:
                where, line, text = profile.first_text[name]
                return (
                    f"column `{name}` holds text, but {reader} reads it as a number: {where} line {line} holds "
                    f"{text!r} (did the file change after `validate` checked it?). Expected a number or an empty "
                    "cell in every row. Fix that cell (or list its text in `data.na_values`), then run again."
                )
    if cell is None:
        return None  # DataGate's anomaly lines say the rest
    return (
        f"a column the spec reads as a number holds the text {cell!r} (did the data change after `validate` "
        "checked it?). Expected a number or an empty cell in every row. Run `python -m pipelines validate` on the "
        "spec to find the file and row, fix the cell, then run again."
    )
