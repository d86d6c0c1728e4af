"""Checks that `data.splits` declares usable weights and that each split gets rows from the data the spec reads.

Rows go to splits by a hash of their cells, so a split's share of the rows is
its weight over the sum of weights, give or take chance. A split whose share
is under one row would be empty: the Trainer or the Evaluator would then have
nothing to read, found only after the slow steps ran.
"""

from __future__ import annotations

from collections.abc import Iterator

from pipelines.spec.errors import SpecProblem
from pipelines.spec.limits import MAX_SPLIT_WEIGHT

__all__ = ["rule_split_rows", "rule_splits"]


def rule_split_rows(ctx) -> Iterator[SpecProblem]:
    """Each split's expected share of the profiled rows is at least one row."""
    profile, splits = ctx.profile, ctx.spec.data.splits
    if profile is None or not profile.rows or any(not 1 <= weight <= MAX_SPLIT_WEIGHT for weight in splits.values()):
        return  # no data read, or weights out of range (rule_splits names those)
    total = sum(splits.values())
    for name, weight in splits.items():
        expected = profile.rows * weight / total
        if expected >= 1:
            continue
        others = total - weight
        fix = (
            f"Raise `{name}`'s weight to at least {-(-others // (profile.rows - 1))} (the other splits weigh {others}), "
            "or add rows."
            if profile.rows > 1
            else "Add rows: one row cannot fill two splits."
        )
        yield ctx.problem(
            f"data.splits.{name}",
            f"the `{name}` split would get no rows: weight {weight} of {total} gives it about {expected:.2f} of the "
            f"data's {profile.rows:,} row(s). Expected at least one row in every split. {fix}",
        )


def rule_splits(ctx) -> Iterator[SpecProblem]:
    """`train` and `eval` are declared, and every weight is a relative share from 1 to `MAX_SPLIT_WEIGHT`."""
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
