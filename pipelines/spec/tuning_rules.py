"""`validate` rules for the `tuning:` section: knobs, their values and the objective.

The range shapes themselves (`min` below `max`, a positive `step`, ...) are
checked where the section is typed (`tuning_section.KnobSpace`); these rules
need the rest of the spec: the model type, the declared metrics, the label's
classes, and a TFX module file's own `tuner_fn`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from components.trainer.hyperparameters import KNOBS, REPORTED_METRICS
from pipelines.spec.errors import SpecProblem, did_you_mean
from pipelines.spec.module_file_rules import module_file_problem

__all__ = ["rule_tuning", "knobs_for"]


def knobs_for(model: Any) -> list[str]:
    """The knobs a `model:` section's type uses: every `training` knob, and the `model` knobs its options have."""
    fields = {f.name for f in dataclasses.fields(model)}
    return [name for name, knob in KNOBS.items() if knob.section == "training" or name in fields]


def rule_tuning(ctx: Any) -> Iterator[SpecProblem]:
    """The search space names knobs the model uses, with values they accept; the objective is reported.

    Args:
      ctx: the `CheckContext` (spec, source, declared metrics, the label's classes).

    Yields:
      A problem per mistake, at its YAML path, with the fix.
    """
    tuning = ctx.spec.tuning
    if tuning is None:
        return
    if ctx.spec.training.module_file is not None:
        yield from _module_file_problems(ctx)
        return
    if not tuning.search_space:
        yield ctx.problem(
            "tuning.search_space",
            "the search space is empty: there is nothing to tune. Expected at least one knob. Example: "
            "`search_space: {learning_rate: {min: 0.0001, max: 0.01, sampling: log}}`.",
        )
    yield from _knob_problems(ctx)
    yield from _objective_problems(ctx)


def _module_file_problems(ctx: Any) -> Iterator[SpecProblem]:
    spec = ctx.spec
    if spec.tuning.search_space:
        yield ctx.problem(
            "tuning.search_space",
            "with `training.module_file`, TFX's Tuner runs the module's own `tuner_fn`, which declares its own "
            "search space. Received a `search_space` as well. Remove `tuning.search_space`.",
        )
    path = ctx.resolved.training_module_file
    if path is not None and module_file_problem(path, "run_fn") is None:
        problem = module_file_problem(path, "tuner_fn")
        if problem:
            yield ctx.problem(
                "tuning",
                f"{problem} With `training.module_file`, `tuning:` runs TFX's Tuner on that file's `tuner_fn` "
                "(returning `TunerFnResult`). Add it, or remove `tuning:`.",
            )


def _knob_problems(ctx: Any) -> Iterator[SpecProblem]:
    model = ctx.spec.model
    usable = knobs_for(model)
    for name, space in ctx.spec.tuning.search_space.items():
        path = f"tuning.search_space.{name}"
        if name not in KNOBS:
            yield ctx.problem(
                path,
                f"unknown knob `{name}`.{did_you_mean(name, usable)} Expected one of: {', '.join(usable)} "
                f"(the knobs of `model.type: {model.type}`). Fix the name or remove it.",
            )
            continue
        if name not in usable:
            yield ctx.problem(
                path,
                f"`model.type: {model.type}` has no option `{name}`, so tuning it changes nothing. Expected one of: "
                f"{', '.join(usable)}. Remove `{name}`, or change `model.type`.",
            )
            continue
        knob = KNOBS[name]
        if space.choices is None and knob.kind in ("units", "word"):
            yield ctx.problem(
                path,
                f"`{name}` takes a list of `choices`, not a range. Received: min={space.min}, max={space.max}. "
                f"Example: `{name}: {{choices: {_choices_example(name)}}}`.",
            )
            continue
        values = space.values
        if space.choices is None and knob.kind == "int":
            # A range of whole numbers: YAML's `min: 32` arrives as 32.0.
            values = [int(v) if float(v).is_integer() else v for v in values]
            if space.step is not None and not float(space.step).is_integer():
                yield ctx.problem(
                    path, f"`{name}` is a whole number, so `step` must be one. Received: step={space.step}."
                )
        for value in values:
            problem = knob.problem(value)
            if problem:
                yield ctx.problem(path, f"a value of `{name}` is out of bounds: {problem}. Fix the search space.")
                break
        if space.choices is not None and len({repr(v) for v in space.choices}) != len(space.choices):
            yield ctx.problem(path, f"`choices` repeats a value. Received: {space.choices}. List each value once.")


def _choices_example(name: str) -> str:
    knob = KNOBS[name]
    return "[[64, 32], [128, 64]]" if knob.kind == "units" else f"[{', '.join(knob.words[:2])}]"


def _objective_problems(ctx: Any) -> Iterator[SpecProblem]:
    objective = ctx.spec.tuning.objective
    if objective == "loss":
        return
    declared = list(ctx.metrics)
    if objective not in declared:
        yield ctx.problem(
            "tuning.objective",
            f"the objective `{objective}` is not a declared metric.{did_you_mean(objective, declared)} Expected "
            f"`loss` or one of `evaluation.metrics`: {', '.join(declared)}. Fix the name, or add it to "
            "`evaluation.metrics`.",
        )
        return
    classes = ctx.label_classes
    multiclass = ctx.spec.label.task == "classification" and classes is not None and len(classes) > 2
    reported = {"accuracy"} if multiclass else REPORTED_METRICS
    if objective not in reported:
        options = sorted(set(declared) & reported) + ["loss"]
        yield ctx.problem(
            "tuning.objective",
            f"`{objective}` is computed by the Evaluator only, not while a trial trains, so trials cannot be "
            f"scored on it. Expected one that training reports: {', '.join(options)}. Received: `{objective}`.",
        )
