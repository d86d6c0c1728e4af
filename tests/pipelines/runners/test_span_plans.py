"""Which spans a run ingests, read from a real ML Metadata (SQLite) store written as TFX writes it."""

from __future__ import annotations

import pytest
from taxi_fixtures import taxi_spec, write_spec

from pipelines.load import load_spec
from pipelines.outcome.metadata_file import open_metadata
from pipelines.runners.spans import ingested_spans, plan_spans


@pytest.fixture
def resolved(tmp_path, taxi_sample_csv):
    header, *rows = open(taxi_sample_csv, encoding="utf-8").readlines()
    for number in (1, 2, 3):
        folder = tmp_path / "data" / f"span-{number}"
        folder.mkdir(parents=True)
        (folder / "part.csv").write_text(header + "".join(rows[number - 1 :: 3]), encoding="utf-8")
    spec = taxi_spec("data/span-{SPAN}/*.csv", str(tmp_path / "run"), pipeline={"name": "span_plans"})
    loaded = load_spec(write_spec(tmp_path / "spec.yaml", spec))
    (tmp_path / "run").mkdir()
    return loaded


def publish(resolved, node: str, type_name: str, span: int, live: bool = True) -> None:
    """One artifact of `type_name` with the `span` property (and ExampleGen's custom `span`, as its driver
    records it), attributed to node `node`'s context, LIVE or (not `live`) PENDING."""
    from ml_metadata.proto import metadata_store_pb2

    store = open_metadata(resolved.metadata_path, readonly=False)
    artifact_type = metadata_store_pb2.ArtifactType(name=type_name)
    artifact_type.properties["span"] = metadata_store_pb2.INT
    type_id = store.put_artifact_type(artifact_type)
    context_type = store.put_context_type(metadata_store_pb2.ContextType(name="node"))
    name = f"{resolved.name}.{node}"
    context = store.get_context_by_type_and_name("node", name)
    if context is None:
        (context_id,) = store.put_contexts([metadata_store_pb2.Context(type_id=context_type, name=name)])
    else:
        context_id = context.id
    state = metadata_store_pb2.Artifact.LIVE if live else metadata_store_pb2.Artifact.PENDING
    artifact = metadata_store_pb2.Artifact(type_id=type_id, uri=f"/{node}/{span}", state=state)
    artifact.properties["span"].int_value = span
    if node == "ExampleGen":
        artifact.custom_properties["span"].int_value = span
    (artifact_id,) = store.put_artifacts([artifact])
    store.put_attributions_and_associations(
        [metadata_store_pb2.Attribution(artifact_id=artifact_id, context_id=context_id)], []
    )


def test_a_span_is_ingested_once_its_examples_and_statistics_are_live(resolved):
    publish(resolved, "ExampleGen", "Examples", 1)
    publish(resolved, "StatisticsGen", "ExampleStatistics", 1)
    publish(resolved, "ExampleGen", "Examples", 2)
    publish(resolved, "StatisticsGen", "ExampleStatistics", 2, live=False)

    assert ingested_spans(resolved) == {1: None}


def test_a_span_whose_statistics_a_killed_run_never_wrote_is_ingested_again(resolved):
    """Killed in StatisticsGen of an older span, after its ExampleGen: the next run ingests it again (ExampleGen
    from TFX's cache), so that span gets the statistics the drift check of the next span compares with. The
    killed StatisticsGen's input, span 2's Examples, is in StatisticsGen's context too, as TFX records it."""
    for span in (1, 2):
        publish(resolved, "ExampleGen", "Examples", span)
    publish(resolved, "StatisticsGen", "ExampleStatistics", 1)
    publish(resolved, "StatisticsGen", "Examples", 2)  # an input in the node's context

    plan = plan_spans(resolved, ingested_spans(resolved))

    assert [span.number for span in plan.ingest_only] == [2]
    assert plan.train.number == 3
    assert [span.number for span in plan.new] == [2, 3]


def test_before_any_run_every_span_is_new(resolved):
    assert ingested_spans(resolved) == {}
    plan = plan_spans(resolved, ingested_spans(resolved))
    assert [span.number for span in plan.ingest_only] == [1, 2] and plan.train.number == 3
