"""`label.missing: drop`: rows without a label are left out of training and evaluation.

The compiled pipeline gets one more step, `DropMissingLabels`
(`components.row_filter.component.DropMissing`), between ExampleGen and
every component that reads its examples: ExampleGen's artifact keeps every
row of the data, the step's output (what StatisticsGen, Transform, the
Trainer and the Evaluator read) only the labelled ones, and it records how
many rows it dropped per split. The serving model is the same as for data
without such rows.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

from pipelines.spec.errors import SpecProblem
from pipelines.spec.models import PipelineSpec, StepSpec

__all__ = ["DROP_STEP", "drop_step", "with_drop_step", "note_dropped_rows", "rule_label_missing"]

DROP_STEP = "DropMissingLabels"
_REPLACED = "ExampleGen.examples"


def drop_step(spec: PipelineSpec) -> StepSpec | None:
    """The step that drops the rows without a label, or None when the spec keeps `missing: error`."""
    if spec.label.missing != "drop" or spec.label.column is None:
        return None
    return StepSpec(
        name=DROP_STEP,
        uses="components.row_filter.component:DropMissing",
        inputs={"examples": _REPLACED},
        parameters={"column": spec.label.column},
        replaces=_REPLACED,
    )


def with_drop_step(spec: PipelineSpec) -> PipelineSpec:
    """`spec` with the `DropMissingLabels` step added to its steps, when it asks for one."""
    import dataclasses

    step = drop_step(spec)
    return spec if step is None else dataclasses.replace(spec, steps=(*spec.steps, step))


def note_dropped_rows(spec: PipelineSpec, count: int, rows: int, where: str, line: int) -> None:
    """Tells `validate`'s user (stderr) how many rows `missing: drop` leaves out."""
    print(
        f"note: label.missing: {count:,} of {rows:,} rows have no value in label column `{spec.label.column}` "
        f"(the first: {where} line {line}); they are left out of training and evaluation.",
        file=sys.stderr,
    )


def rule_label_missing(ctx) -> Iterator[SpecProblem]:
    """`missing: drop` next to a custom step it cannot be combined with."""
    if drop_step(ctx.spec) is None:
        return
    for i, step in enumerate(ctx.spec.steps):
        if step.name == DROP_STEP:
            yield ctx.problem(
                f"steps[{i}].name",
                f"`{DROP_STEP}` is the name of the step `label.missing: drop` adds. Expected another name. "
                f"Received: {step.name}. Rename this step.",
            )
        elif step.replaces == _REPLACED:
            yield ctx.problem(
                "label.missing",
                f"`missing: drop` replaces `{_REPLACED}` with the labelled rows, and step `{step.name}` replaces it "
                f"too. Expected one step replacing it. Drop the rows without a label in `{step.name}` (e.g. a "
                "`row_filter` expression), and remove `missing: drop`.",
            )
