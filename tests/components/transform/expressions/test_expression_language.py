"""The label expression language: what it accepts, what it refuses, how it evaluates."""

from __future__ import annotations

import ast
import operator

import pytest

from components.transform.expressions import ExpressionError, column_names, evaluate, parse, text_columns

PYTHON_OPS = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": operator.truediv,
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

SIGNS = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "div": "/",
    "gt": ">",
    "ge": ">=",
    "lt": "<",
    "le": "<=",
    "eq": "==",
    "ne": "!=",
    "and": "and",
    "or": "or",
}


def _spell(sign: str):
    return lambda a, b: f"({a} {sign} {b})"


# Ops that spell out what they were asked to do, to check the shape of the evaluation.
SPELLING_OPS = {
    **{name: _spell(sign) for name, sign in SIGNS.items()},
    "neg": lambda a: f"(-{a})",
    "not": lambda a: f"(not {a})",
    "cast": lambda a: f"float({a})",
}


@pytest.mark.parametrize(
    "text",
    [
        "tips > 0.2 * fare",
        "a > 1 and not b < 2",
        "-fare + 2 * tips / 3 - 1 >= 0",
        "a == 1 or b != 2 or c <= 3",
        "species == 'Adelie'",
        "'Adelie' != species and tips > 1",
        "fare",
        "(tips + 1) * (fare - 1)",
    ],
)
def test_parse_accepts_the_documented_subset(text):
    tree = parse(text)

    assert isinstance(tree, ast.expr)
    assert ast.unparse(tree) == ast.unparse(ast.parse(text, mode="eval").body)


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "tips > abs(fare)",
            "`abs(fare)` is not allowed in `expression`. Use column names, numbers, + - * /, "
            "comparisons and and/or/not.",
        ),
        ("tips > fare.real", "`fare.real` is not allowed in `expression`."),
        (
            "company > 'Flash Cab'",
            "`'Flash Cab'` is not allowed here in `expression`: quoted text can only be compared with a column by "
            "== or !=. Example: `species == 'Adelie'`.",
        ),
        ("'a' == 'b'", "`'a'` is not allowed here in `expression`: quoted text can only be compared with a column"),
        ("species == 'x' + 'y'", "`'x'` is not allowed here in `expression`"),
        (
            "species == 'Adelie' or species > 2",
            "column `species` is compared with text in `expression`, so it cannot also be used as a number.",
        ),
        ("0 < tips < 10", "`0 < tips < 10` chains comparisons. Split it with `and`."),
        ("fares[0] > 1", "`fares[0]` is not allowed in `expression`."),
        ("(lambda x: x)(tips) > 0", "`(lambda x: x)(tips)` is not allowed in `expression`."),
        ("(lambda x: x)", "`lambda x: x` is not allowed in `expression`."),
        ("tips ** 2 > 1", "`Pow` is not allowed in `expression`."),
        ("tips in fare", "`In` is not allowed in `expression`."),
        ("[tips, fare]", "`[tips, fare]` is not allowed in `expression`."),
        ("(x := 1)", "`(x := 1)` is not allowed in `expression`."),
        ("tips > None", "`None` is not allowed in `expression`: constants are numbers or quoted text."),
        ("tips >", "`tips >` is not a valid expression (invalid syntax). Example: `tips > 0.2 * fare`."),
        ("big = tips > 1", "`big = tips > 1` is not a valid expression (invalid syntax)."),
        ("import os", "`import os` is not a valid expression (invalid syntax)."),
    ],
    ids=[
        "call",
        "attribute",
        "text_ordered",
        "text_vs_text",
        "text_in_arithmetic",
        "text_column_as_number",
        "chained",
        "subscript",
        "lambda-call",
        "lambda",
        "power",
        "in",
        "list",
        "walrus",
        "none",
        "incomplete",
        "assignment",
        "statement",
    ],
)
def test_parse_rejects_everything_else_with_a_clear_message(text, message):
    with pytest.raises(ExpressionError) as caught:
        parse(text)

    assert message in str(caught.value)


def test_expression_error_is_a_value_error():
    assert issubclass(ExpressionError, ValueError)


@pytest.mark.parametrize(
    "text, names",
    [
        ("tips > 0.2 * fare", ["tips", "fare"]),
        ("fare > 0.2 * tips", ["fare", "tips"]),
        ("a > 1 and not b < 2", ["a", "b"]),
        ("tips + tips > fare - tips", ["tips", "fare"]),
        ("3 > 1", []),
    ],
)
def test_column_names_lists_each_column_once(text, names):
    assert column_names(text) == names


def test_column_names_follow_the_order_of_first_use():
    # ast.walk is breadth-first and would give ['c', 'a', 'b'] here.
    assert column_names("a * b > c") == ["a", "b", "c"]
    assert column_names("(x + (y - z)) * w > v") == ["x", "y", "z", "w", "v"]


def test_column_names_rejects_bad_expressions():
    with pytest.raises(ExpressionError, match="is not allowed in `expression`"):
        column_names("tips > max(fare, 1)")


@pytest.mark.parametrize(
    "text, columns, expected",
    [
        ("tips > 0.2 * fare", {"tips": 3.0, "fare": 10.0}, True),
        ("tips > 0.2 * fare", {"tips": 2.0, "fare": 10.0}, False),
        ("-fare + 2 * tips / 4 - 1", {"tips": 3.0, "fare": 10.0}, -9.5),
        ("a > 1 and not b < 2", {"a": 2.0, "b": 5.0}, True),
        ("a > 1 and not b < 2", {"a": 2.0, "b": 1.0}, False),
        ("a < 0 or b >= 3 or a == b", {"a": 4.0, "b": 4.0}, True),
        ("a != b", {"a": 4.0, "b": 4.0}, False),
        ("a <= 1", {"a": 1.0}, True),
        ("7", {}, 7.0),
    ],
)
def test_evaluate_with_python_ops_gives_the_right_values(text, columns, expected):
    result = evaluate(text, columns, PYTHON_OPS)

    assert result == expected
    assert type(result) is type(expected)


def test_evaluate_builds_the_expression_from_the_ops_only():
    result = evaluate("-a + 0.5 * b > c and not d or e / 2 <= 1", {name: name for name in "abcde"}, SPELLING_OPS)

    assert result == "(((((-a) + (0.5 * b)) > c) and (not d)) or ((e / 2.0) <= 1.0))"


def test_evaluate_turns_constants_into_floats():
    assert evaluate("a * 2", {"a": "a"}, SPELLING_OPS) == "(a * 2.0)"


def test_evaluate_rejects_a_bad_expression_before_touching_columns():
    with pytest.raises(ExpressionError, match="chains comparisons"):
        evaluate("0 < a < 1", {}, {})


def test_comparisons_inside_arithmetic_are_cast_to_numbers():
    def number_only(op):
        def checked(a, b):
            assert not isinstance(a, bool) and not isinstance(b, bool), f"{op.__name__} got a boolean: {a!r}, {b!r}"
            return op(a, b)

        return checked

    strict_ops = {**PYTHON_OPS, **{name: number_only(PYTHON_OPS[name]) for name in ("add", "sub", "mul", "div")}}

    assert evaluate("(a > 1) + (b > 1)", {"a": 2.0, "b": 0.0}, strict_ops) == 1.0


def test_comparisons_used_as_numbers_go_through_cast():
    assert evaluate("(a > 1) + 2", {"a": "a"}, SPELLING_OPS) == "(float((a > 1.0)) + 2.0)"
    assert evaluate("-(a > b and c)", {n: n for n in "abc"}, SPELLING_OPS) == "(-float(((a > b) and c)))"
    assert evaluate("2 * (not a)", {"a": "a"}, SPELLING_OPS) == "(2.0 * float((not a)))"
    assert evaluate("a > 1 and b", {"a": "a", "b": "b"}, SPELLING_OPS) == "((a > 1.0) and b)"


@pytest.mark.parametrize(
    "text, names",
    [
        ("species == 'Adelie'", ["species"]),
        ("'yes' != answer and tips > 1", ["answer"]),
        ("tips > 0.2 * fare", []),
        ("a == 'x' or b == 'y' or a != 'z'", ["a", "b"]),
    ],
)
def test_text_columns_lists_the_columns_compared_with_text(text, names):
    assert text_columns(text) == names


@pytest.mark.parametrize(
    "text, columns, expected",
    [
        ("species == 'Adelie'", {"species": "Adelie"}, True),
        ("species == 'Adelie'", {"species": "Gentoo"}, False),
        ("'Adelie' != species", {"species": "Gentoo"}, True),
        ("species == 'Adelie' and mass > 3000", {"species": "Adelie", "mass": 3500.0}, True),
    ],
)
def test_evaluate_compares_text_as_text(text, columns, expected):
    assert evaluate(text, columns, PYTHON_OPS) is expected
