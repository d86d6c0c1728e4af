"""Named checks over a parsed spec, each returning problems with a fix-it message.

Every rule runs before anything is written, so an invalid spec creates
nothing on disk. Add a rule by writing `def rule_x(ctx) -> Iterator[...]` and
listing it in `RULES`.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import os
import re
from collections.abc import Callable, Iterator

from components.common.csv_dialect import CsvDialect
from components.example_gen.formats import FORMATS
from components.example_gen.spans import has_span_spec
from components.transform import label_expression
from pipelines.spec import data_rules
from pipelines.spec import metrics as metric_table
from pipelines.spec.data_checks import (
    DataProblem,
    DataProfile,
    csv_delimiter,
    list_data_files,
    profile_csv,
    profile_tfrecord,
)
from pipelines.spec.errors import SpecProblem, did_you_mean
from pipelines.spec.format_profile import profile_format
from pipelines.spec.image_profile import profile_image_folder, rule_image_folder
from pipelines.spec.label_missing import rule_label_missing
from pipelines.spec.limits import MAX_SPLIT_WEIGHT
from pipelines.spec.media_rules import rule_media_model, rule_media_transforms, rule_model_type
from pipelines.spec.metric_rules import fitted_metrics, read_label_classes, rule_metric_classes
from pipelines.spec.models import PipelineSpec
from pipelines.spec.module_file_rules import builtin_model_rule, rule_module_files
from pipelines.spec.orchestrator import rule_orchestrator
from pipelines.spec.query_rules import query_data
from pipelines.spec.resolved import ResolvedSpec
from pipelines.spec.slice_rules import rule_fairness, rule_slices
from pipelines.spec.span_rules import newest_span_files, rule_window
from pipelines.spec.split_rules import rule_split_rows
from pipelines.spec.storage_checks import rule_storage
from pipelines.spec.transform_rules import rule_tf1_column_names
from pipelines.spec.tuning_rules import rule_tuning
from pipelines.spec.yaml_source import YamlSource
from pipelines.steps.checks import rule_component_settings, rule_hooks, rule_steps

__all__ = ["RULES", "check", "CheckContext"]

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
_DOTTED = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_NUMERIC_TRANSFORMS = {"zscore", "minmax", "log", "identity", "bucketize"}
_DECIMAL_COMMA = re.compile(r"^[+-]?[0-9]+,[0-9]+$")  # `3,5`: a number written in a decimal-comma locale
MAX_LAYER_WIDTH = 65_536
# TFX's `Pipeline` refuses a longer `pipeline_name` (tfx/orchestration/pipeline.py, _MAX_PIPELINE_NAME_LENGTH).
MAX_PIPELINE_NAME = 63
# A file name's bytes on Linux and macOS file systems (NAME_MAX): the Deployer's `<model_name>.config` must fit.
MAX_FILE_NAME = 255
MAX_MODEL_NAME = MAX_FILE_NAME - len(".config")
MAX_EMBEDDING_DIM = 4096
# A label expression is a short formula; longer ones are refused before Python's parser sees them.
MAX_EXPRESSION_CHARS = 1000
MAX_EXPRESSION_TERMS = 100
_TERM = re.compile(r"[A-Za-z_]\w*|\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+")


def expression_size_problem(expression: str) -> str | None:
    """Why `expression` is too long to be a label formula, or None.

    Args:
        expression: the `label.expression` text.

    Returns:
        A message naming the limit that was passed, or None.
    """
    terms = len(_TERM.findall(expression))
    if len(expression) <= MAX_EXPRESSION_CHARS and terms <= MAX_EXPRESSION_TERMS:
        return None
    return (
        f"the expression is too long: expected at most {MAX_EXPRESSION_CHARS} characters and "
        f"{MAX_EXPRESSION_TERMS} terms. Received: {len(expression)} characters, {terms} terms. "
        "Compute the label in a column of the data, or in `transform.module`, and use `label.column`."
    )


class CheckContext:
    """What rules look at: the spec, where it came from, and the data profile."""

    def __init__(self, spec: PipelineSpec, source: YamlSource, resolved: ResolvedSpec):
        self.spec = spec
        self.source = source
        self.resolved = resolved
        self.profile: DataProfile | None = None

    def problem(self, path: str, message: str) -> SpecProblem:
        return self.source.problem(path, message)

    @functools.cached_property
    def label_classes(self) -> list[str] | None:
        """The label's classes in index order (read once), or None for regression or unreadable data."""
        return read_label_classes(self.resolved)

    @functools.cached_property
    def metrics(self) -> tuple[str, ...]:
        """`evaluation.metrics`, or when unset the metrics that fit the label (`metrics.default_metrics`)."""
        if self.spec.evaluation.metrics is not None:
            return tuple(self.spec.evaluation.metrics)
        return fitted_metrics(self.spec, self.label_classes)


def rule_names(ctx: CheckContext) -> Iterator[SpecProblem]:
    names = (
        ("pipeline.name", ctx.spec.pipeline.name, MAX_PIPELINE_NAME, "TFX refuses a longer pipeline name"),
        (
            "push.model_name",
            ctx.spec.push.model_name,
            MAX_MODEL_NAME,
            "the model is pushed to `<serving_dir>/<model_name>/` and deployed with `<serving_dir>/<model_name>"
            f".config/`, and a file name holds at most {MAX_FILE_NAME} bytes",
        ),
    )
    for path, value, limit, why in names:
        if value is not None and not _NAME.match(value):
            yield ctx.problem(
                path, f"`{value}` is not a usable name. Use letters, digits, `_`, `.`, `-`, starting with a letter."
            )
        elif value is not None and len(value) > limit:
            shown = f"`{value[:24]}...`" if len(value) > 40 else f"`{value}`"
            yield ctx.problem(
                path,
                f"the name is too long: {why}. Expected at most {limit} characters. Received: {shown} "
                f"({len(value)} characters). Use a shorter name.",
            )


def rule_splits(ctx: CheckContext) -> Iterator[SpecProblem]:
    splits = ctx.spec.data.splits
    for required in ("train", "eval"):
        if required not in splits:
            yield ctx.problem(
                "data.splits",
                f"a `{required}` split is required. Received splits: {sorted(splits)}. Add `{required}: <weight>`.",
            )
    for name, weight in splits.items():
        if weight < 1:
            yield ctx.problem(f"data.splits.{name}", f"split weights must be at least 1. Received: {name}={weight}.")
        elif weight > MAX_SPLIT_WEIGHT:
            yield ctx.problem(
                f"data.splits.{name}",
                f"split weights are relative shares: expected at most {MAX_SPLIT_WEIGHT}. Received: {name}={weight}. "
                "Use small numbers, e.g. `{train: 2, eval: 1}`.",
            )


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
    return hint


def rule_data(ctx: CheckContext) -> Iterator[SpecProblem]:
    """The data exists, parses, and holds the columns the spec names."""
    if ctx.spec.data.sql is not None:
        problems = list(query_data(ctx))
        yield from problems
        if problems or ctx.profile is not None:
            return
    try:
        if has_span_spec(ctx.resolved.data_path):
            spans, files, data_format = newest_span_files(ctx.resolved.data_path, ctx.spec.data.format)
            ctx.resolved = dataclasses.replace(ctx.resolved, spans=spans, data_files=tuple(files))
        else:
            files, data_format = list_data_files(ctx.resolved.data_path, ctx.spec.data.format)
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
            )
        elif data_format == "image_folder":
            ctx.profile = profile_image_folder(files[0])
        else:
            ctx.profile = profile_tfrecord(files)
    except DataProblem as err:
        yield ctx.problem("data.path", str(err))
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
            cell = f" Received: `{where[2]}` at {where[0]} line {where[1]}." if where else ""
            if where and _DECIMAL_COMMA.match(where[2].strip()):
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
            f"label column `{label.column}` is not in the data ({ctx.profile.files[0]}).{_not_found_hint(label.column, columns)}",
        )
    if label.expression is not None:
        try:
            names = label_expression.column_names(label.expression)
        except label_expression.ExpressionError as err:
            yield ctx.problem("label.expression", str(err))
            return
        compared_as_text = set(label_expression.text_columns(label.expression))
        for name in names:
            if name not in columns:
                yield ctx.problem(
                    "label.expression",
                    f"column `{name}` used in the expression is not in the data ({ctx.profile.files[0]}).{_not_found_hint(name, columns)}",
                )
            elif name not in ctx.profile.numeric and name not in compared_as_text:
                yield ctx.problem(
                    "label.expression",
                    f"column `{name}` holds text; expressions use it as a number. Expected a numeric column, or a "
                    f"text comparison such as `{name} == 'value'`. Received: text in `{name}`. Compare it with a "
                    "quoted value, or use another column.",
                )


def rule_label_type(ctx: CheckContext) -> Iterator[SpecProblem]:
    """A regression label must be a numeric column (classification accepts text classes)."""
    label = ctx.spec.label
    profile = ctx.profile
    if label.task != "regression" or label.column is None or profile is None or label.column not in profile.columns:
        return
    if label.column not in profile.numeric and label.column not in profile.empty:
        where = getattr(profile, "first_text", {}).get(label.column)
        received = f"`{where[2]}` at {where[0]} line {where[1]}" if where else f"text values in {profile.files[0]}"
        yield ctx.problem(
            "label.column",
            f"column `{label.column}` holds text, but `task: regression` needs a numeric label. Expected numbers. "
            f"Received: {received}. Use `task: classification` for classes, or a numeric column.",
        )


def rule_label(ctx: CheckContext) -> Iterator[SpecProblem]:
    label = ctx.spec.label
    if label.name in ctx.spec.features:
        yield ctx.problem("label.name", f"label name `{label.name}` is also a feature. Give the label its own name.")
    if label.column is not None and label.column in ctx.spec.features:
        yield ctx.problem(
            "label.column",
            f"the label column `{label.column}` is also listed as a feature: that leaks the answer. Remove it from `features`.",
        )
    if not ctx.spec.features:
        yield ctx.problem("features", "no features declared. Add at least one column under `features`.")


def rule_metrics(ctx: CheckContext) -> Iterator[SpecProblem]:
    task = ctx.spec.label.task
    allowed = metric_table.metrics_for_task(task)
    for i, name in enumerate(ctx.spec.evaluation.metrics or ()):
        if name not in allowed:
            yield ctx.problem(
                f"evaluation.metrics[{i}]",
                f"unknown metric `{name}` for a {task} label.{did_you_mean(name, allowed)} Expected one of: {', '.join(allowed)}.",
            )
    declared = ctx.metrics
    for name in ctx.spec.evaluation.thresholds:
        if name not in declared:
            which = (
                "which `evaluation.metrics` does not declare"
                if ctx.spec.evaluation.metrics is not None
                else f"which is not among this label's default metrics ({', '.join(declared)}) and "
                "`evaluation.metrics` is not set"
            )
            yield ctx.problem(
                f"evaluation.thresholds.{name}",
                f"threshold on `{name}`, {which}.{did_you_mean(name, declared)} Add it to `evaluation.metrics` or fix the name.",
            )


def rule_model(ctx: CheckContext) -> Iterator[SpecProblem]:
    units = ctx.spec.model.hidden_units
    if ctx.spec.model.build_model is None and (not units or min(units) < 1):
        yield ctx.problem(
            "model.hidden_units", f"expected a list of layer widths, each at least 1. Received: {list(units)}."
        )
    elif ctx.spec.model.build_model is None and max(units) > MAX_LAYER_WIDTH:
        yield ctx.problem(
            "model.hidden_units",
            f"a layer of {max(units):,} units is too wide: expected at most {MAX_LAYER_WIDTH:,} per layer. "
            f"Received: {list(units)}. Use narrower layers.",
        )
    if not 1 <= ctx.spec.model.embedding_dim <= MAX_EMBEDDING_DIM:
        yield ctx.problem(
            "model.embedding_dim",
            f"expected an embedding size from 1 to {MAX_EMBEDDING_DIM:,}. "
            f"Received: {ctx.spec.model.embedding_dim:,}. Typical sizes are 4 to 64.",
        )


def rule_modules(ctx: CheckContext) -> Iterator[SpecProblem]:
    """User functions are `pkg.module:function` and their module can be found."""
    for path, ref in (
        ("transform.module", ctx.spec.transform.module),
        ("model.build_model", ctx.spec.model.build_model),
    ):
        if ref is None:
            continue
        if not _DOTTED.match(ref):
            yield ctx.problem(path, f"expected `package.module:function`. Received: `{ref}`.")
            continue
        module = ref.split(":")[0]
        try:
            found = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            found = None
        if found is None:
            yield ctx.problem(
                path, f"module `{module}` cannot be imported. Install it, or run from the folder that holds it."
            )


def rule_schema(ctx: CheckContext) -> Iterator[SpecProblem]:
    if ctx.resolved.schema_path is not None and not os.path.isfile(ctx.resolved.schema_path):
        yield ctx.problem(
            "schema",
            f"schema file {ctx.resolved.schema_path} does not exist. Fix the path or remove `schema` to infer one.",
        )


RULES: list[Callable[[CheckContext], Iterator[SpecProblem]]] = [
    rule_names,
    rule_splits,
    rule_data,
    rule_window,
    rule_image_folder,
    rule_media_transforms,
    builtin_model_rule(rule_media_model),
    builtin_model_rule(rule_model_type),
    rule_label_type,
    rule_split_rows,
    data_rules.rule_label_values,
    rule_label_missing,
    data_rules.rule_feature_values,
    rule_label,
    rule_metrics,
    rule_metric_classes,
    rule_slices,
    rule_fairness,
    builtin_model_rule(rule_model),
    rule_modules,
    rule_module_files,
    rule_tuning,
    rule_schema,
    rule_tf1_column_names,
    rule_storage,
    rule_steps,
    rule_hooks,
    rule_orchestrator,
    rule_component_settings,
]


def rule_expression_size(ctx: CheckContext) -> Iterator[SpecProblem]:
    """A label expression is short enough to parse (Python's parser recurses once per term)."""
    if ctx.spec.label.expression is not None:
        too_long = expression_size_problem(ctx.spec.label.expression)
        if too_long:
            yield ctx.problem("label.expression", too_long)


# Rules that must pass before the others run: the others parse the label expression.
GATES: list[Callable[[CheckContext], Iterator[SpecProblem]]] = [rule_expression_size]


def check(ctx: CheckContext) -> list[SpecProblem]:
    """Runs `GATES`, then (when they pass) every rule in `RULES`.

    Args:
        ctx: the spec, its source and resolved paths.

    Returns:
        Every problem found, in rule order.
    """
    problems = [problem for gate in GATES for problem in gate(ctx)]
    if problems:
        return problems
    for rule in RULES:
        problems.extend(rule(ctx))
    return problems
