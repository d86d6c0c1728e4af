"""The expression language of `label.expression` and `row_filter`: parsed, checked and evaluated without Python's eval.

`language` holds the parser and the evaluator; each caller brings the
operations for its values (TensorFlow in Transform, NumPy in `validate`,
Python numbers in the row filter).
"""

from components.transform.expressions.language import ExpressionError, column_names, evaluate, parse, text_columns

__all__ = ["ExpressionError", "column_names", "evaluate", "parse", "text_columns"]
