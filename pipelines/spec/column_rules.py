"""Spec rules on the data itself: it exists, parses and holds the columns the spec names; the schema file exists.

`rule_data` profiles the data once (`ctx.profile`); the rules after it read that profile.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterator

from components.common.csv_dialect import CsvDialect
from components.example_gen.formats import FORMATS
from components.transform import expressions
from pipelines.profiling.data_checks import (
    DataProblem,
    csv_delimiter,
    list_data_files,
    profile_csv,
    profile_tfrecord,
)
from pipelines.profiling.format_profile import profile_format
from pipelines.profiling.image_profile import profile_image_folder
from pipelines.spec import data_rules
from pipelines.spec.errors import SpecProblem, did_you_mean
from pipelines.spec.query_rules import query_data
from pipelines.spec.span_rules import newest_span_files

__all__ = ["rule_data", "rule_schema"]

_NUMERIC_TRANSFORMS = {"zscore", "minmax", "log", "identity", "bucketize"}
_DECIMAL_COMMA = re.compile(r"^[+-]?[0-9]+,[0-9]+$")  # `3,5`: a number written in a decimal-comma locale


def _not_found_hint(name: str, columns) -> str:
    """ " Did you mean ...?", and when the header's names differ from `name` by surrounding spaces only
    (cells separated by `, `, as in UCI's adult data), how to read them."""
    hint = did_you_mean(name, columns)
    if any(column != name and column.strip() == name.strip() for column in columns):
        hint += (
            " The header's name differs from it by surrounding spaces (cells separated by `, `?), and spaces are "
            "part of every cell's text, values too. If the spaces follow the separators, add "
            "`skip_initial_space: true` under `data:` (each cell's leading spaces are dropped, names and values "
            "alike); otherwise write the name with its spaces, quoted, in the spec."
        )
    parent = name.split("__")[0]
    if parent != name and parent in columns:
        hint += (
            f" `{parent}` is a column of its own: if it is a struct, add `flatten: true` under `data:` to read its "
            f"fields as columns `{parent}__<field>`."
        )
    return hint


def rule_data(ctx) -> Iterator[SpecProblem]:
    """The data exists, parses, and holds the columns the spec names."""
    if ctx.spec.data.sql is not None:
        problems = list(query_data(ctx))
        yield from problems
        if problems or ctx.profile is not None:
            return
    try:
        if ctx.spec.data.has_spans:  # `data.path`, or a query's exports (`sql_spans`): a `{SPAN}` pattern
            spans, files, data_format = newest_span_files(ctx.resolved.data_path, ctx.spec.data.format)
            ctx.resolved = dataclasses.replace(ctx.resolved, spans=spans, data_files=tuple(files))
        else:
            files, data_format = list_data_files(ctx.resolved.data_path, ctx.spec.data.format)
        if ctx.spec.data.flatten and data_format not in FORMATS:
            yield ctx.problem(
                "data.flatten",
                f"`flatten` reads struct columns of Parquet, Avro or JSON Lines files. Received: {files[0]}, read "
                f"as {data_format}, whose columns are flat. Remove `flatten`, or set `data.format`.",
            )
            return
        if data_format == "csv":
            data = ctx.spec.data
            ctx.profile = profile_csv(
                files,
                data.na_values,
                data.checks.non_finite,
                keep_columns=data_rules.label_columns(ctx.spec),
                columns=data_rules.columns_used(ctx.spec, ctx.resolved.schema_path),  # what ExampleGen writes
                dialect=CsvDialect(csv_delimiter(files, data.delimiter), data.skip_initial_space),
            )
        elif data_format in FORMATS:
            data = ctx.spec.data
            ctx.profile = profile_format(
                files,
                data_format,
                data.na_values,
                data.checks.non_finite,
                keep_columns=data_rules.label_columns(ctx.spec),
                columns=data_rules.columns_used(ctx.spec, ctx.resolved.schema_path),
                flatten=data.flatten,
            )
        elif data_format == "image_folder":
            ctx.profile = profile_image_folder(files[0])
        else:
            ctx.profile = profile_tfrecord(files)
    except DataProblem as err:
        yield ctx.problem("data.path" if ctx.spec.data.sql is None else "data.sql", str(err))  # sql: its export
        return
    columns = ctx.profile.columns
    for name, feature in ctx.spec.features.items():
        path = f"features.{name}"
        if name not in columns:
            yield ctx.problem(
                path,
                f"column `{name}` is not in the data ({ctx.profile.files[0]}).{_not_found_hint(name, columns)} Columns: {', '.join(columns)}.",
            )
        elif name in ctx.profile.empty:
            yield ctx.problem(
                path, f"column `{name}` has no values in {ctx.profile.files[0]}. Remove the feature or fix the data."
            )
        elif feature.transform in _NUMERIC_TRANSFORMS and name not in ctx.profile.numeric:
            where = ctx.profile.first_text.get(name)
            cell = (
                f" Received: `{where[2]}` at {data_rules.where_in_file(ctx.profile.format, *where[:2])}."
                if where
                else ""
            )
            if ctx.profile.format in FORMATS:  # the file's type, not its text, makes a column numeric
                fix = f" {data_rules.stored_as_text(name)}; if the column is categorical, use `vocabulary` or `hash`."
            elif where and _DECIMAL_COMMA.match(where[2].strip()):
                fix = (
                    " It reads as a number with a decimal comma: write the file with decimal points, e.g. "
                    "pandas `read_csv(path, sep=';', decimal=',').to_csv(new_path, index=False)`."
                )
            else:
                fix = (
                    " If that text marks a missing value, add it to `data.na_values`; if the column is "
                    "categorical, use `vocabulary` or `hash`."
                )
            yield ctx.problem(
                f"{path}.transform",
                f"transform `{feature.transform}` needs a numeric column, but `{name}` holds text.{cell}{fix}",
            )
    label = ctx.spec.label
    if label.column is not None and label.column not in columns:
        yield ctx.problem(
            "label.column",
            f"label column `{label.column}` is not in the data ({ctx.profile.files[0]}).{_not_found_hint(label.column, columns)} Columns: {', '.join(columns)}.",
        )
    if label.expression is not None:
        try:
            names = expressions.column_names(label.expression)
        except expressions.ExpressionError as err:
            yield ctx.problem("label.expression", str(err))
            return
        compared_as_text = set(expressions.text_columns(label.expression))
        for name in names:
            if name not in columns:
                yield ctx.problem(
                    "label.expression",
                    f"column `{name}` used in the expression is not in the data ({ctx.profile.files[0]}).{_not_found_hint(name, columns)} Columns: {', '.join(columns)}.",
                )
            elif name not in ctx.profile.numeric and name not in compared_as_text:
                yield ctx.problem(
                    "label.expression",
                    f"column `{name}` holds text; expressions use it as a number. Expected a numeric column, or a "
                    f"text comparison such as `{name} == 'value'`. Received: text in `{name}`. Compare it with a "
                    "quoted value, or use another column.",
                )


def rule_schema(ctx) -> Iterator[SpecProblem]:
    if ctx.resolved.schema_path is not None and not os.path.isfile(ctx.resolved.schema_path):
        yield ctx.problem(
            "schema",
            f"schema file {ctx.resolved.schema_path} does not exist. Fix the path or remove `schema` to infer one.",
        )
