"""`validate` on `data.sql`: the query's rows become the data before `rule_data` profiles them.

A BigQuery connection gets a profile from the spec (`bigquery_source`: the
query runs on the cluster); any other connection's rows are exported to the
root's Parquet file (`sql_source`), or with `{SPAN}` in the query to one file
per span (`sql_spans`), which `rule_data` then profiles as Parquet.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

from pipelines.spec import data_rules
from pipelines.spec.bigquery_source import bigquery_problems, bigquery_profile, is_bigquery
from pipelines.spec.errors import SpecProblem
from pipelines.spec.sql_source import SqlProblem, export_query
from pipelines.spec.sql_spans import export_new_spans, query_span_problems

__all__ = ["query_data"]


def query_data(ctx) -> Iterator[SpecProblem]:
    """`data.sql`: a BigQuery spec's profile (the query runs on the cluster), or the rows exported to the
    root's Parquet file(s) (`sql_source`, `sql_spans`), which the rest of `rule_data` profiles as Parquet."""
    data = ctx.spec.data
    problems = list(query_span_problems(data))
    for key, message in problems:
        yield ctx.problem(key, message)
    if problems:
        return
    if is_bigquery(data.connection):
        yield from _bigquery_data(ctx)
        return
    if "://" in ctx.resolved.data_path:
        yield ctx.problem(
            "data.connection",
            f"a query's rows are exported to the pipeline root, which is {ctx.resolved.root} here: an object store "
            "this machine does not write to. Expected a local `pipeline.root`, or a `bigquery://PROJECT` "
            "connection, which Kubeflow/Vertex read with BigQueryExampleGen.",
        )
        return
    try:
        if data.spanned_query:
            listed, new = export_new_spans(data.sql, data.spans_sql, data.connection, ctx.resolved.data_path)
            if new:
                shown = ", ".join(str(span) for span in new[:10]) + (
                    f" and {len(new) - 10} more" if len(new) > 10 else ""
                )
                print(
                    f"note: data.sql: exported span(s) {shown} ({len(listed) - len(new)} exported before).",
                    file=sys.stderr,
                )
        else:
            export_query(data.sql, data.connection, ctx.resolved.data_path)
    except SqlProblem as err:
        yield ctx.problem(err.key, str(err))


def _bigquery_data(ctx) -> Iterator[SpecProblem]:
    """A BigQuery spec's problems, else its profile from the spec (nothing is read here)."""
    if ctx.spec.data.spanned_query:
        # TFX's BigQueryExampleGen puts a span in the query only for a static range named at compile time,
        # and the spans cannot be listed here (the query runs on the cluster, with its credentials).
        yield ctx.problem(
            "data.sql",
            "`{SPAN}` in a BigQuery query: TFX's BigQueryExampleGen puts a span number in the query only for a "
            "span named when the pipeline is compiled, and the spans cannot be listed here (the query runs on the "
            "cluster). Expected a query without `{SPAN}` for a `bigquery://` connection. Remove `{SPAN}` and "
            "`spans_sql` (filter the rows in the query, e.g. on a date), or query a database this machine reaches "
            "with the local, beam or airflow target.",
        )
        return
    problems = list(bigquery_problems(ctx.spec))
    for key, message in problems:
        yield ctx.problem(key, message)
    if not problems:
        names = (*ctx.spec.features, *data_rules.label_columns(ctx.spec))
        ctx.profile = bigquery_profile(ctx.spec, tuple(dict.fromkeys(names)))
