"""The beam target's orchestration graph (`pipelines.targets.beam_dag`): which signals each node waits
for, and real TFX pipelines on it (ML Metadata in SQLite, the orchestration on the in-process
FnApiRunner): every node runs once after its upstream nodes, and a chain of nodes is one Beam stage."""

import pytest
from apache_beam.runners.portability.fn_api_runner import fn_runner
from tfx import v1 as tfx
from tfx.dsl.compiler import compiler
from tfx.orchestration.beam.beam_dag_runner import BeamDagRunner
from tfx.proto.orchestration import local_deployment_config_pb2, pipeline_pb2

from pipelines.outcome.fingerprint import max_execution_id
from pipelines.targets.beam import _orchestration_on_fn_api_runner
from pipelines.targets.beam_dag import FusedBeamDagRunner, node_deployment_config, signal_plan
from pipelines.targets.beam_progress import HookedBeamDagRunner, observing, substitute_run_id
from pipelines.targets.mlmd_states import states_after


def _ir(*nodes: tuple[str, list[str]], skip: tuple[str, ...] = (), snapshot: str | None = None):
    """A pipeline IR of `(node id, upstream ids)` in this (topological) order."""
    ir = pipeline_pb2.Pipeline()
    for node_id, upstream in nodes:
        node = ir.nodes.add().pipeline_node
        node.node_info.id = node_id
        node.upstream_nodes.extend(upstream)
        if node_id in skip:  # `skip` and `run` are one oneof
            node.execution_options.skip.SetInParent()
        elif snapshot:
            node.execution_options.run.perform_snapshot = node_id == snapshot
            node.execution_options.run.depends_on_snapshot = True
    return ir


def _waits(ir) -> list[tuple[str, str | None, tuple[str, ...]]]:
    return [(step.node_id, step.main, step.side) for step in signal_plan(ir)]


def test_the_taxi_graph_becomes_a_chain_of_main_inputs():
    ir = _ir(
        ("ExampleGen", []),
        ("StatisticsGen", ["ExampleGen"]),
        ("SchemaGen", ["StatisticsGen"]),
        ("ExampleValidator", ["SchemaGen", "StatisticsGen"]),
        ("DataGate", ["ExampleValidator", "SchemaGen", "StatisticsGen"]),
        ("Transform", ["DataGate", "ExampleGen", "SchemaGen"]),
        ("Trainer", ["ExampleGen", "SchemaGen", "Transform"]),
        ("BaselineResolver", ["Trainer"]),
        ("Evaluator", ["BaselineResolver", "ExampleGen", "Trainer"]),
        ("Pusher", ["Evaluator", "Trainer"]),
    )
    ids = [node.pipeline_node.node_info.id for node in ir.nodes]

    assert _waits(ir) == [(ids[0], None, ())] + [(node, before, ()) for before, node in zip(ids, ids[1:])]


def test_branches_keep_their_signals_the_latest_as_main_input():
    # A -> B, A -> C, (B, C) -> D, (A, D) -> E, and F on its own.
    ir = _ir(("A", []), ("B", ["A"]), ("C", ["A"]), ("D", ["C", "B"]), ("E", ["A", "D"]), ("F", []))

    assert _waits(ir) == [
        ("A", None, ()),
        ("B", "A", ()),
        ("C", "A", ()),
        ("D", "C", ("B",)),  # C comes after B in the pipeline's order
        ("E", "D", ()),  # A is implied by D
        ("F", None, ()),
    ]


def test_skipped_nodes_are_left_out_and_the_snapshot_node_is_waited_for():
    ir = _ir(("A", []), ("B", ["A"]), ("C", ["B"]), ("D", ["C", "A"]), skip=("A",), snapshot="B")

    assert _waits(ir) == [("B", None, ()), ("C", "B", ()), ("D", "C", ())]


def test_a_node_that_depends_on_a_missing_snapshot_is_refused():
    ir = _ir(("A", []), ("B", ["A"]))
    ir.nodes[0].pipeline_node.execution_options.run.depends_on_snapshot = True

    with pytest.raises(ValueError, match="node A depends on the snapshot"):
        signal_plan(ir)


@tfx.dsl.components.component
def Source(out: tfx.dsl.components.OutputArtifact[tfx.types.standard_artifacts.Examples]) -> None:  # noqa: N802
    with open(f"{out.uri}/data.txt", "w", encoding="utf-8") as handle:
        handle.write("source")


@tfx.dsl.components.component
def Relay(  # noqa: N802
    source: tfx.dsl.components.InputArtifact[tfx.types.standard_artifacts.Examples],
    out: tfx.dsl.components.OutputArtifact[tfx.types.standard_artifacts.Examples],
    explode: tfx.dsl.components.Parameter[int] = 0,
) -> None:
    if explode:
        raise ValueError("Relay was told to explode")
    with open(f"{source.uri}/data.txt", encoding="utf-8") as before, open(f"{out.uri}/data.txt", "w") as after:
        after.write(before.read() + "+relay")


@tfx.dsl.components.component
def Join(  # noqa: N802
    left: tfx.dsl.components.InputArtifact[tfx.types.standard_artifacts.Examples],
    right: tfx.dsl.components.InputArtifact[tfx.types.standard_artifacts.Examples],
) -> None:
    for side in (left, right):
        with open(f"{side.uri}/data.txt", encoding="utf-8") as handle:
            assert handle.read() == "source+relay"


def _pipeline(root, components):
    return tfx.dsl.Pipeline(
        pipeline_name="fused",
        pipeline_root=str(root / "artifacts"),
        components=components,
        enable_cache=True,
        metadata_connection_config=tfx.orchestration.metadata.sqlite_metadata_connection_config(
            str(root / "metadata.sqlite")
        ),
    )


def _run(pipeline, monkeypatch, run_options=None):
    """Runs on the beam target's runner; returns (node ids in the order they finished, first failed, bundles run)."""
    bundles = []
    execute_bundle = fn_runner.FnApiRunner._execute_bundle

    def counting(self, *args, **kwargs):
        bundles.append(1)
        return execute_bundle(self, *args, **kwargs)

    monkeypatch.setattr(fn_runner.FnApiRunner, "_execute_bundle", counting)
    ir = compiler.Compiler().compile(pipeline)
    run_id = substitute_run_id(ir)
    error = None
    with observing(run_id, ir, []) as observer:
        try:
            with _orchestration_on_fn_api_runner():
                HookedBeamDagRunner().run_with_ir(ir, run_options)
        except Exception as raised:  # noqa: BLE001 - the test inspects it
            error = raised
    return [r.component_id for r in observer.results], observer.failed, len(bundles), error


def test_a_chain_of_nodes_runs_in_order_as_one_beam_stage(tmp_path, monkeypatch):
    source = Source()
    first = Relay(source=source.outputs["out"]).with_id("First")
    second = Relay(source=first.outputs["out"]).with_id("Second")

    finished, failed, bundles, error = _run(_pipeline(tmp_path, [source, first, second]), monkeypatch)

    assert error is None and failed is None
    assert finished == ["Source", "First", "Second"]
    assert bundles == 1  # TFX's BeamDagRunner: one stage, so one bundle, per node
    assert states_after(str(tmp_path / "metadata.sqlite"), 0) == dict.fromkeys(finished, "COMPLETE")


def test_a_diamond_runs_each_node_once_after_its_upstream_nodes(tmp_path, monkeypatch):
    source = Source()
    left = Relay(source=source.outputs["out"]).with_id("Left")
    right = Relay(source=source.outputs["out"]).with_id("Right")
    join = Join(left=left.outputs["out"], right=right.outputs["out"])

    finished, failed, _, error = _run(_pipeline(tmp_path, [source, left, right, join]), monkeypatch)

    assert error is None and failed is None
    assert sorted(finished) == ["Join", "Left", "Right", "Source"]  # once each
    assert finished[0] == "Source" and finished[-1] == "Join"
    assert states_after(str(tmp_path / "metadata.sqlite"), 0) == dict.fromkeys(finished, "COMPLETE")


def test_a_failed_node_stops_the_rest_of_its_chain(tmp_path, monkeypatch):
    source = Source()
    first = Relay(source=source.outputs["out"], explode=1).with_id("First")
    second = Relay(source=first.outputs["out"]).with_id("Second")

    finished, failed, _, error = _run(_pipeline(tmp_path, [source, first, second]), monkeypatch)

    assert error is not None and "Relay was told to explode" in str(error)
    assert finished == ["Source"] and failed[0] == "First"
    states = states_after(str(tmp_path / "metadata.sqlite"), 0)
    assert states["Source"] == "COMPLETE" and states["First"] == "FAILED" and "Second" not in states


def test_a_partial_run_skips_the_nodes_before_it_and_reuses_their_outputs(tmp_path, monkeypatch):
    def components():
        source = Source()
        first = Relay(source=source.outputs["out"]).with_id("First")
        return [source, first, Relay(source=first.outputs["out"]).with_id("Second")]

    assert _run(_pipeline(tmp_path, components()), monkeypatch)[0] == ["Source", "First", "Second"]
    before = max_execution_id(str(tmp_path / "metadata.sqlite"))
    options = pipeline_pb2.RunOptions()
    options.partial_run.from_nodes.append("Second")
    options.partial_run.snapshot_settings.latest_pipeline_run_strategy.SetInParent()

    finished, failed, _, error = _run(_pipeline(tmp_path, components()), monkeypatch, options)

    assert error is None and failed is None
    assert finished == ["Second"]  # the snapshot node: its DoFn carries the pipeline to take the snapshot
    # The snapshot records the skipped nodes' reused outputs as cached executions; Second's inputs are unchanged.
    states = states_after(str(tmp_path / "metadata.sqlite"), before)
    assert states == {"Source": "CACHED", "First": "CACHED", "Second": "CACHED"}


def test_each_dofn_carries_only_its_own_nodes_platform_config():
    config = local_deployment_config_pb2.LocalDeploymentConfig()
    config.node_level_platform_configs["A"].docker_platform_config.name = "a"
    config.node_level_platform_configs["B"].docker_platform_config.name = "b"
    config.executor_specs["A"].python_class_executable_spec.class_path = "a.Executor"

    own = node_deployment_config(config, "A")

    assert list(own.node_level_platform_configs) == ["A"] and not own.executor_specs
    assert own.node_level_platform_configs["A"] == config.node_level_platform_configs["A"]
    assert node_deployment_config(config, "C") == local_deployment_config_pb2.LocalDeploymentConfig()


def test_the_fused_runner_is_tfx_s_beam_dag_runner():
    assert issubclass(HookedBeamDagRunner, FusedBeamDagRunner)
    assert isinstance(HookedBeamDagRunner(), BeamDagRunner)
