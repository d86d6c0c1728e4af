"""Named checks over a parsed spec, each returning problems with a fix-it message: the one list of them.

Every rule runs before anything is written, so an invalid spec creates
nothing on disk. Add a rule by writing `def rule_x(ctx) -> Iterator[...]` in
the `*_rules.py` module of its theme and listing it in `RULES`. The rules over
`steps:`, `hooks:` and per-component settings need the layers above the spec:
`pipelines.load.STEP_RULES` lists them, and `pipelines.load` runs both lists.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence

from pipelines.profiling.data_checks import DataProfile
from pipelines.spec import data_rules
from pipelines.spec.column_rules import rule_data, rule_schema
from pipelines.spec.errors import SpecProblem
from pipelines.spec.image_folder_rules import rule_image_folder
from pipelines.spec.label_missing import rule_label_missing
from pipelines.spec.label_rules import rule_expression_size, rule_label, rule_label_type
from pipelines.spec.media_rules import rule_media_model, rule_media_transforms, rule_model_type
from pipelines.spec.metric_rules import fitted_metrics, read_label_classes, rule_metric_classes, rule_metrics
from pipelines.spec.model_rules import rule_model, rule_modules
from pipelines.spec.models import PipelineSpec
from pipelines.spec.module_file_rules import builtin_model_rule, rule_module_files
from pipelines.spec.name_rules import rule_names
from pipelines.spec.orchestrator import rule_orchestrator
from pipelines.spec.resolved import ResolvedSpec
from pipelines.spec.slice_rules import rule_fairness, rule_slices
from pipelines.spec.span_rules import rule_spans_on_target, rule_window
from pipelines.spec.split_rules import rule_split_rows, rule_splits
from pipelines.spec.storage_checks import rule_storage
from pipelines.spec.transform_rules import rule_tf1_column_names
from pipelines.spec.tuning_rules import rule_tuning
from pipelines.spec.yaml_source import YamlSource

__all__ = ["RULES", "GATES", "check", "CheckContext"]


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


RULES: list[Callable[[CheckContext], Iterator[SpecProblem]]] = [
    rule_names,
    rule_splits,
    rule_data,
    rule_window,
    rule_spans_on_target,
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
    rule_orchestrator,
]

# Rules that must pass before the others run: the others parse the label expression.
GATES: list[Callable[[CheckContext], Iterator[SpecProblem]]] = [rule_expression_size]


def check(ctx: CheckContext, rules: Sequence[Callable[[CheckContext], Iterator[SpecProblem]]]) -> list[SpecProblem]:
    """Runs `GATES`, then (when they pass) every rule in `rules`.

    Args:
        ctx: the spec, its source and resolved paths.
        rules: the rules to run, in order: `RULES` and `pipelines.load.STEP_RULES`.

    Returns:
        Every problem found, in rule order.
    """
    problems = [problem for gate in GATES for problem in gate(ctx)]
    if problems:
        return problems
    for rule in rules:
        problems.extend(rule(ctx))
    return problems
