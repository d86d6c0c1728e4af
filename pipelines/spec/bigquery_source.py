"""`data: {sql, connection: "bigquery://PROJECT"}`: TFX's BigQueryExampleGen on Kubeflow/Vertex.

A BigQuery query runs where the pipeline runs (BigQueryExampleGen reads it
with Beam's BigQuery source, billed to the URL's project), not at `validate`:
this machine may have no credentials. So `validate` checks the spec without
the data: only `orchestrator.target: kubeflow` (Vertex included) takes such a
connection, a classification label needs `label.classes` declared (the classes
cannot be read from the table here), and the profile lists the columns the
spec names, numeric where the spec reads them as numbers. The data's own
defects surface in DataGate on the cluster.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlparse

from pipelines.profiling.data_checks import DataProfile

__all__ = ["is_bigquery", "bigquery_project", "bigquery_problems", "bigquery_profile"]

_NUMERIC_TRANSFORMS = {"zscore", "minmax", "log", "identity", "bucketize"}


def is_bigquery(connection: str | None) -> bool:
    """Whether `connection` names BigQuery (`bigquery://PROJECT[/DATASET]`, sqlalchemy-bigquery's scheme)."""
    return bool(connection) and connection.strip().lower().startswith("bigquery://")


def bigquery_project(connection: str) -> str:
    """The Google Cloud project of a `bigquery://PROJECT[/DATASET]` URL ('' when it names none)."""
    return urlparse(connection.strip()).netloc


def bigquery_problems(spec) -> Iterator[tuple[str, str]]:
    """(spec key, message) for each reason a BigQuery spec cannot compile."""
    if spec.orchestrator.target != "kubeflow":
        yield (
            "data.connection",
            "a `bigquery://` connection compiles to TFX's BigQueryExampleGen, which reads the query on Kubeflow or "
            "Vertex AI. Expected `orchestrator.target: kubeflow` (or `compile --target kubeflow`). Received: "
            f"target {spec.orchestrator.target}. Compile for kubeflow, or query a database this machine reaches "
            "(a PostgreSQL or SQLite URL).",
        )
    if not bigquery_project(spec.data.connection):
        yield (
            "data.connection",
            f"the BigQuery URL names no project. Expected `bigquery://PROJECT` (the project billed for the query). "
            f"Received: {spec.data.connection!r}.",
        )
    label = spec.label
    if label.task == "classification" and label.column is not None and label.classes is None:
        yield (
            "label.classes",
            "a BigQuery query is not read at compile time, so the label's classes cannot be found in the data. "
            "Expected `label.classes` listing them. Add e.g. `classes: [no, yes]` under `label:`.",
        )


def bigquery_profile(spec, columns: tuple[str, ...]):
    """A DataProfile naming `columns` (the spec's), numeric where the spec reads them as numbers, no rows."""

    numeric = {name for name, feature in spec.features.items() if feature.transform in _NUMERIC_TRANSFORMS}
    if spec.label.column is None or spec.label.task == "regression":
        numeric |= set(columns) - set(spec.features)
    return DataProfile((), "bigquery", tuple(columns), frozenset(numeric & set(columns)), 0)
