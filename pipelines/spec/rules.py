"""Named checks over a parsed spec, each returning problems with a fix-it message.

Every rule runs before anything is written, so an invalid spec creates
nothing on disk. Add a rule by writing `def rule_x(ctx) -> Iterator[...]` and
listing it in `RULES`.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Callable, Iterator

from components.transform import label_expression
from pipelines.spec import metrics as metric_table
from pipelines.spec.data_checks import DataProblem, DataProfile, list_data_files, profile_csv, profile_tfrecord
from pipelines.spec.errors import SpecProblem, did_you_mean
from pipelines.spec.models import PipelineSpec
from pipelines.spec.orchestrator import rule_orchestrator
from pipelines.spec.resolved import ResolvedSpec
from pipelines.spec.yaml_source import YamlSource
from pipelines.steps.checks import rule_hooks, rule_steps

__all__ = ["RULES", "check", "CheckContext"]

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
_DOTTED = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_NUMERIC_TRANSFORMS = {"zscore", "minmax", "log", "identity", "bucketize"}


class CheckContext:
    """What rules look at: the spec, where it came from, and the data profile."""

    def __init__(self, spec: PipelineSpec, source: YamlSource, resolved: ResolvedSpec):
        self.spec = spec
        self.source = source
        self.resolved = resolved
        self.profile: DataProfile | None = None

    def problem(self, path: str, message: str) -> SpecProblem:
        return self.source.problem(path, message)


def rule_names(ctx: CheckContext) -> Iterator[SpecProblem]:
    for path, value in (("pipeline.name", ctx.spec.pipeline.name), ("push.model_name", ctx.spec.push.model_name)):
        if value is not None and not _NAME.match(value):
            yield ctx.problem(
                path, f"`{value}` is not a usable name. Use letters, digits, `_`, `.`, `-`, starting with a letter."
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


def rule_data(ctx: CheckContext) -> Iterator[SpecProblem]:
    """The data exists, parses, and holds the columns the spec names."""
    try:
        files, data_format = list_data_files(ctx.resolved.data_path, ctx.spec.data.format)
        if data_format == "csv":
            ctx.profile = profile_csv(files)
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
                f"column `{name}` is not in the data ({ctx.profile.files[0]}).{did_you_mean(name, columns)} Columns: {', '.join(columns)}.",
            )
        elif name in ctx.profile.empty:
            yield ctx.problem(
                path, f"column `{name}` has no values in {ctx.profile.files[0]}. Remove the feature or fix the data."
            )
        elif feature.transform in _NUMERIC_TRANSFORMS and name not in ctx.profile.numeric:
            yield ctx.problem(
                f"{path}.transform",
                f"transform `{feature.transform}` needs a numeric column, but `{name}` holds text. Use `vocabulary` or `hash`.",
            )
    label = ctx.spec.label
    if label.column is not None and label.column not in columns:
        yield ctx.problem(
            "label.column",
            f"label column `{label.column}` is not in the data ({ctx.profile.files[0]}).{did_you_mean(label.column, columns)}",
        )
    if label.expression is not None:
        try:
            names = label_expression.column_names(label.expression)
        except label_expression.ExpressionError as err:
            yield ctx.problem("label.expression", str(err))
            return
        for name in names:
            if name not in columns:
                yield ctx.problem(
                    "label.expression",
                    f"column `{name}` used in the expression is not in the data ({ctx.profile.files[0]}).{did_you_mean(name, columns)}",
                )
            elif name not in ctx.profile.numeric:
                yield ctx.problem("label.expression", f"column `{name}` holds text; expressions need numeric columns.")


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
    declared = ctx.spec.evaluation.metrics
    for i, name in enumerate(declared):
        if name not in allowed:
            yield ctx.problem(
                f"evaluation.metrics[{i}]",
                f"unknown metric `{name}` for a {task} label.{did_you_mean(name, allowed)} Expected one of: {', '.join(allowed)}.",
            )
    for name in ctx.spec.evaluation.thresholds:
        if name not in declared:
            yield ctx.problem(
                f"evaluation.thresholds.{name}",
                f"threshold on `{name}`, which `evaluation.metrics` does not declare.{did_you_mean(name, declared)} Add it to `evaluation.metrics` or fix the name.",
            )


def rule_model(ctx: CheckContext) -> Iterator[SpecProblem]:
    units = ctx.spec.model.hidden_units
    if ctx.spec.model.build_model is None and (not units or min(units) < 1):
        yield ctx.problem(
            "model.hidden_units", f"expected a list of layer widths, each at least 1. Received: {list(units)}."
        )
    if ctx.spec.model.type == "wide_and_deep" and ctx.spec.model.build_model is None:
        if not any(f.categorical for f in ctx.spec.features.values()):
            yield ctx.problem(
                "model.type",
                "`wide_and_deep` needs at least one categorical feature (vocabulary, bucketize, hash, categorical). Use `type: dnn`.",
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
    rule_label,
    rule_metrics,
    rule_model,
    rule_modules,
    rule_schema,
    rule_steps,
    rule_hooks,
    rule_orchestrator,
]


def check(ctx: CheckContext) -> list[SpecProblem]:
    problems: list[SpecProblem] = []
    for rule in RULES:
        problems.extend(rule(ctx))
    return problems
