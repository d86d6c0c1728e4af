"""Column names that TF Transform's TF1 graph mode cannot read, and the mode that can.

In TF1 graph mode (`transform.tf_compat_v1`, on by default for the generated
preprocessing_fn) tf.Transform names each input column's placeholders after
the column, keeping `/` and `>`: a name ending in `/` names the scope itself,
so a column with missing cells (three placeholders) fails with `Duplicate node
name in graph`, and a name ending in `>` fails when the graph runs
(tensorflow_transform 1.16, `impl_helper._sanitize_scope_name`). TF2 mode
traces a `tf.function` and reads any name, so a spec whose data has such a
column runs Transform in TF2 mode (`parse_spec` sets `tf_compat_v1: false`
when it is unset), and asking for TF1 mode is an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from pipelines.spec.errors import SpecProblem

__all__ = ["tf1_unreadable_columns", "rule_tf1_column_names"]

_TF1_UNREADABLE_ENDINGS = ("/", ">")


def tf1_unreadable_columns(columns: Iterable[str]) -> list[str]:
    """The column names TF Transform's TF1 graph mode cannot read (those ending in `/` or `>`)."""
    return [name for name in columns if name.endswith(_TF1_UNREADABLE_ENDINGS)]


def rule_tf1_column_names(ctx) -> Iterator[SpecProblem]:
    """`transform.tf_compat_v1: true` with a column TF1 graph mode cannot read.

    Args:
      ctx: the `CheckContext` (its data profile lists the columns).

    Yields:
      One problem naming the columns and the fix.
    """
    if ctx.profile is None or ctx.spec.transform.tf_compat_v1 is not True:
        return
    unreadable = tf1_unreadable_columns(ctx.profile.columns)
    if unreadable:
        names = ", ".join(f"`{name}`" for name in unreadable)
        yield ctx.problem(
            "transform.tf_compat_v1",
            f"TF Transform's TF1 graph mode cannot read a column whose name ends in `/` or `>`. Expected no such "
            f"column with `tf_compat_v1: true`. Received: {names}. Remove `tf_compat_v1: true` (TF2 mode reads "
            "any name), or rename the column in the data.",
        )
