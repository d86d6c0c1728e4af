"""Spans across runs read from a real ML Metadata store (SQLite), written as both of TFX's launchers write it:
IR-based (`pipeline_run` and `node` contexts) and the older launcher of the airflow target (`run` contexts,
the component id as an execution property)."""

from __future__ import annotations

import json

import pytest
from ml_metadata import metadata_store
from ml_metadata.proto import metadata_store_pb2 as mlmd

from pipelines.report.mlmd_contexts import component_ids, run_contexts
from pipelines.report.span_history import run_spans, span_metrics


class Store:
    """A SQLite ML Metadata store with the types TFX registers, and helpers to record executions."""

    def __init__(self, path: str):
        config = mlmd.ConnectionConfig()
        config.sqlite.filename_uri = path
        config.sqlite.connection_mode = mlmd.SqliteMetadataSourceConfig.READWRITE_OPENCREATE
        self.store = metadata_store.MetadataStore(config)
        examples = mlmd.ArtifactType(name="Examples")
        examples.properties["span"] = mlmd.INT
        examples.properties["version"] = mlmd.INT
        self.examples = self.store.put_artifact_type(examples)
        self.blessing = self.store.put_artifact_type(mlmd.ArtifactType(name="ModelBlessing"))
        run = mlmd.ContextType(name="run")
        run.properties["run_id"] = mlmd.STRING
        self.types = {
            name: self.store.put_context_type(mlmd.ContextType(name=name)) for name in ("pipeline_run", "node")
        }
        self.types["run"] = self.store.put_context_type(run)
        execution = mlmd.ExecutionType(name="tfx.Component")
        execution.properties["component_id"] = mlmd.STRING
        self.execution_type = self.store.put_execution_type(execution)

    def context(self, type_name: str, name: str, run_id: str | None = None) -> int:
        context = mlmd.Context(type_id=self.types[type_name], name=name)
        if run_id:
            context.properties["run_id"].string_value = run_id
        (context_id,) = self.store.put_contexts([context])
        return context_id

    def execute(self, contexts: list[int], inputs=(), outputs=(), component_id: str | None = None) -> None:
        execution = mlmd.Execution(type_id=self.execution_type, last_known_state=mlmd.Execution.COMPLETE)
        if component_id:
            execution.properties["component_id"].string_value = component_id
        events = [(a, mlmd.Event(type=mlmd.Event.INPUT)) for a in inputs]
        events += [(a, mlmd.Event(type=mlmd.Event.OUTPUT)) for a in outputs]
        self.store.put_execution(execution, events, self.store.get_contexts_by_id(contexts))

    def examples_artifact(self, span: int) -> mlmd.Artifact:
        artifact = mlmd.Artifact(type_id=self.examples, uri=f"/x/{span}", state=mlmd.Artifact.LIVE)
        artifact.properties["span"].int_value = span
        (artifact.id,) = self.store.put_artifacts([artifact])
        return artifact


@pytest.fixture
def store(tmp_path):
    return Store(str(tmp_path / "metadata.sqlite"))


def test_ir_runs_give_the_spans_ingested_and_the_window_trained_on(store):
    span_1, span_2 = store.examples_artifact(1), store.examples_artifact(2)
    first, second = store.context("pipeline_run", "run-1"), store.context("pipeline_run", "run-2")
    example_gen, transform = store.context("node", "p.ExampleGen"), store.context("node", "p.Transform")
    store.execute([first, example_gen], outputs=[span_1])
    store.execute([first, transform], inputs=[span_1])
    store.execute([second, example_gen], outputs=[span_2])
    store.execute([second, transform], inputs=[span_1, span_2])
    spans = run_spans(store.store)
    assert (spans["run-1"].ingested, spans["run-1"].trained) == ([1], [1])
    assert (spans["run-2"].ingested, spans["run-2"].trained) == ([2], [1, 2])


def test_airflow_runs_are_read_from_run_contexts_and_component_id_properties(store):
    span_3 = store.examples_artifact(3)
    run = store.context("run", "p.scheduled__2024", run_id="scheduled__2024")
    store.execute([run], outputs=[span_3], component_id="ExampleGen")
    store.execute([run], inputs=[span_3], component_id="Trainer")
    assert [run_id for run_id, _ in run_contexts(store.store)] == ["scheduled__2024"]
    assert sorted(component_ids(store.store).values()) == ["ExampleGen", "Trainer"]
    spans = run_spans(store.store)["scheduled__2024"]
    assert (spans.ingested, spans.trained) == ([3], [3])  # no Transform: the Trainer's examples


def test_blessed_models_are_placed_at_their_newest_span(store, tmp_path):
    span_1, span_2 = store.examples_artifact(1), store.examples_artifact(2)
    nodes = {n: store.context("node", f"p.{n}") for n in ("ExampleGen", "Transform", "Evaluator")}
    for run_id, spans, blessed, auc in (("run-1", [span_1], 1, 0.8), ("run-2", [span_1, span_2], 0, 0.7)):
        run = store.context("pipeline_run", run_id)
        store.execute([run, nodes["ExampleGen"]], outputs=[spans[-1]])
        store.execute([run, nodes["Transform"]], inputs=spans)
        folder = tmp_path / run_id
        folder.mkdir()
        (folder / "verdict.json").write_text(
            json.dumps({"blessed": bool(blessed), "metrics": {"auc": auc}, "gated": ["auc"]})
        )
        blessing = mlmd.Artifact(type_id=store.blessing, uri=str(folder), state=mlmd.Artifact.LIVE)
        blessing.custom_properties["blessed"].int_value = blessed
        (blessing.id,) = store.store.put_artifacts([blessing])
        store.execute([run, nodes["Evaluator"]], outputs=[blessing])
    (point,) = span_metrics(store.store)  # run-2's model was not blessed: no point at span 2
    assert (point.span, point.run_id, point.trained, point.metrics, point.gated) == (
        1,
        "run-1",
        [1],
        {"auc": 0.8},
        ["auc"],
    )
