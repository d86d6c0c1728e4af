"""Expression labels computed over whole columns equal the row-by-row Python evaluation."""

from __future__ import annotations

import operator
import random
import types

import pytest

from components.transform import expressions
from pipelines.profiling.data_checks import DataProfile
from pipelines.spec.data_rules import label_values

PY_OPS = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": lambda a, b: a / b if b else 0.0,  # tf.math.divide_no_nan
    "neg": operator.neg,
    "gt": operator.gt,
    "ge": operator.ge,
    "lt": operator.lt,
    "le": operator.le,
    "eq": operator.eq,
    "ne": operator.ne,
    "and": lambda a, b: a and b,
    "or": lambda a, b: a or b,
    "not": operator.not_,
    "cast": float,
}


def _row_by_row(expression, names, values):
    results = []
    for row in zip(*(values[n] for n in names)):
        if any(v is None for v in row):
            results.append(0.0)
        else:
            results.append(float(expressions.evaluate(expression, dict(zip(names, row)), PY_OPS)))
    return results


@pytest.mark.parametrize(
    "expression",
    [
        "tips > 0.2 * fare",
        "tips / fare > 0.1",
        "(tips > 1) + (fare < 5)",
        "not (tips > 1) and fare >= 3 or tips == 0",
        "-tips + fare / 0",
        "fare != 'x'",
        "fare == 'x'",
    ],
)
def test_column_labels_equal_row_labels(expression):
    rng = random.Random(0)
    values = {
        n: tuple(None if rng.random() < 0.1 else rng.choice([0.0, 1.0, rng.uniform(-5, 20)]) for _ in range(500))
        for n in ("tips", "fare")
    }
    names = tuple(expressions.column_names(expression))
    profile = DataProfile(("f",), "csv", ("tips", "fare"), frozenset({"tips", "fare"}), 500, values=values)
    spec = types.SimpleNamespace(label=types.SimpleNamespace(column=None, expression=expression))
    assert label_values(spec, profile) == _row_by_row(expression, names, values)
