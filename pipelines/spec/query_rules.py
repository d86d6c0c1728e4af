"""`validate` on `data.sql`: the query's rows become the data before `rule_data` profiles them.

A BigQuery connection gets a profile from the spec (`bigquery_source`: the
query runs on the cluster); any other connection's rows are exported to the
root's Parquet file (`sql_source`), which `rule_data` then profiles as Parquet.
"""

from __future__ import annotations

from collections.abc import Iterator

from pipelines.spec import data_rules
from pipelines.spec.bigquery_source import bigquery_problems, bigquery_profile, is_bigquery
from pipelines.spec.errors import SpecProblem
from pipelines.spec.sql_source import SqlProblem, export_query

__all__ = ["query_data"]


def query_data(ctx) -> Iterator[SpecProblem]:
    """`data.sql`: a BigQuery spec's profile (the query runs on the cluster), or the rows exported to the
    root's Parquet file (`sql_source`), which the rest of `rule_data` profiles as Parquet."""
    connection = ctx.spec.data.connection
    if is_bigquery(connection):
        problems = list(bigquery_problems(ctx.spec))
        for key, message in problems:
            yield ctx.problem(key, message)
        if not problems:
            names = (*ctx.spec.features, *data_rules.label_columns(ctx.spec))
            ctx.profile = bigquery_profile(ctx.spec, tuple(dict.fromkeys(names)))
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
        export_query(ctx.spec.data.sql, connection, ctx.resolved.data_path)
    except SqlProblem as err:
        yield ctx.problem(err.key, str(err))
