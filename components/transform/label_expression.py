"""A small, safe expression language for derived labels, such as `tips > 0.2 * fare`.

Expressions are parsed with Python's `ast` and only a whitelist of nodes is
accepted: column names, numbers, `+ - * /`, unary minus, comparisons,
`and`/`or`/`not`. Nothing is ever evaluated by Python itself.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["ExpressionError", "parse", "column_names", "evaluate"]

_BIN_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div)
_CMP_OPS = (ast.Gt, ast.GtE, ast.Lt, ast.LtE, ast.Eq, ast.NotEq)


class ExpressionError(ValueError):
    """The expression uses syntax outside the accepted subset."""


def parse(text: str) -> ast.expr:
    """Parses and checks `text`. Raises ExpressionError naming the bad part."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as err:
        raise ExpressionError(
            f"`{text}` is not a valid expression ({err.msg}). Example: `tips > 0.2 * fare`."
        ) from None
    for node in ast.walk(tree):
        allowed = (
            ast.Name,
            ast.Constant,
            ast.BinOp,
            ast.UnaryOp,
            ast.Compare,
            ast.BoolOp,
            ast.Load,
            ast.USub,
            ast.Not,
            ast.And,
            ast.Or,
            *_BIN_OPS,
            *_CMP_OPS,
        )
        if not isinstance(node, allowed):
            raise ExpressionError(
                f"`{ast.unparse(node) if isinstance(node, ast.expr) else type(node).__name__}` is not allowed in "
                "`expression`. Use column names, numbers, + - * /, comparisons and and/or/not."
            )
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)):
            raise ExpressionError(f"`{node.value!r}` is not allowed in `expression`: only numbers are constants.")
        if isinstance(node, ast.Compare) and len(node.ops) != 1:
            raise ExpressionError(f"`{ast.unparse(node)}` chains comparisons. Split it with `and`.")
    return tree


def column_names(text: str) -> list[str]:
    """The column names an expression reads, in order of first use."""
    seen: dict[str, None] = {}

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Name):
            seen.setdefault(node.id, None)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(parse(text))
    return list(seen)


def evaluate(text: str, columns: Mapping[str, Any], ops: Mapping[str, Callable[..., Any]]) -> Any:
    """Evaluates an expression with `ops` (e.g. TensorFlow functions) over `columns`.

    `ops` has keys: add, sub, mul, div, neg, gt, ge, lt, le, eq, ne, and, or,
    not, and `cast` (boolean -> number).
    """

    def number(node: ast.expr) -> Any:
        """A comparison used in arithmetic counts as 1/0."""
        value = visit(node)
        if isinstance(node, (ast.Compare, ast.BoolOp)) or (
            isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
        ):
            return ops["cast"](value)
        return value

    def visit(node: ast.expr) -> Any:
        if isinstance(node, ast.Name):
            return columns[node.id]
        if isinstance(node, ast.Constant):
            return float(node.value)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                return ops["neg"](number(node.operand))
            return ops["not"](visit(node.operand))
        if isinstance(node, ast.BinOp):
            name = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}[type(node.op)]
            return ops[name](number(node.left), number(node.right))
        if isinstance(node, ast.Compare):
            name = {ast.Gt: "gt", ast.GtE: "ge", ast.Lt: "lt", ast.LtE: "le", ast.Eq: "eq", ast.NotEq: "ne"}[
                type(node.ops[0])
            ]
            return ops[name](visit(node.left), visit(node.comparators[0]))
        if isinstance(node, ast.BoolOp):
            name = "and" if isinstance(node.op, ast.And) else "or"
            result = visit(node.values[0])
            for value in node.values[1:]:
                result = ops[name](result, visit(value))
            return result
        raise ExpressionError(f"unexpected node {ast.dump(node)}")

    return visit(parse(text))
