"""A small, safe expression language for derived labels, such as `tips > 0.2 * fare`.

Expressions are parsed with Python's `ast` and only a whitelist of nodes is
accepted: column names, numbers, `+ - * /`, unary minus, comparisons,
`and`/`or`/`not`, and quoted text compared with a column by `==` or `!=`
(`species == 'Adelie'`). Nothing is ever evaluated by Python itself.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["ExpressionError", "parse", "column_names", "text_columns", "evaluate"]

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
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float, str)):
            raise ExpressionError(
                f"`{node.value!r}` is not allowed in `expression`: constants are numbers or quoted text."
            )
        if isinstance(node, ast.Compare) and len(node.ops) != 1:
            raise ExpressionError(f"`{ast.unparse(node)}` chains comparisons. Split it with `and`.")
    _check_text_constants(tree)
    return tree


def _text_comparison(node: ast.AST) -> tuple[str, str] | None:
    """(column, text) when `node` is `column == 'text'` or `'text' != column` and the like, else None."""
    if not (isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.Eq, ast.NotEq))):
        return None
    left, right = node.left, node.comparators[0]
    if isinstance(right, ast.Name) and isinstance(left, ast.Constant):
        left, right = right, left
    if isinstance(left, ast.Name) and isinstance(right, ast.Constant) and isinstance(right.value, str):
        return left.id, right.value
    return None


def _check_text_constants(tree: ast.expr) -> None:
    """Quoted text may only be compared with a column (`==`, `!=`); that column is then text everywhere."""
    allowed: set[int] = set()
    text: set[str] = set()
    for node in ast.walk(tree):
        pair = _text_comparison(node)
        if pair is not None:
            text.add(pair[0])
            allowed.update(id(child) for child in (node.left, node.comparators[0]))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in allowed:
            raise ExpressionError(
                f"`{node.value!r}` is not allowed here in `expression`: quoted text can only be compared with a "
                f"column by == or !=. Example: `species == 'Adelie'`."
            )
        if isinstance(node, ast.Name) and node.id in text and id(node) not in allowed:
            raise ExpressionError(
                f"column `{node.id}` is compared with text in `expression`, so it cannot also be used as a number. "
                "Use it only as `column == 'text'` or `column != 'text'`."
            )


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


def text_columns(text: str) -> list[str]:
    """The columns an expression compares with quoted text (read as text, not numbers).

    Args:
      text: the expression.

    Returns:
      Column names in order of first use.

    Raises:
      ExpressionError: the expression is outside the accepted subset.
    """
    seen: dict[str, None] = {}
    for node in ast.walk(parse(text)):
        pair = _text_comparison(node)
        if pair is not None:
            seen.setdefault(pair[0], None)
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
            return node.value if isinstance(node.value, str) else float(node.value)
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
