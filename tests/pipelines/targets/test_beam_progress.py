"""The beam target's hooks around each node: a real two-node TFX pipeline on `HookedBeamDagRunner`,
ML Metadata in SQLite, the orchestration on the in-process FnApiRunner."""

import io
import re

from tfx import v1 as tfx
from tfx.dsl.compiler import compiler

from pipelines.runners.progress import ProgressPrinter
from pipelines.targets import beam_progress
from pipelines.targets.beam import _orchestration_on_fn_api_runner
from pipelines.targets.beam_progress import HookedBeamDagRunner, observing, substitute_run_id


@tfx.dsl.components.component
def Produce(numbers: tfx.dsl.components.OutputArtifact[tfx.types.standard_artifacts.Examples]) -> None:  # noqa: N802
    with open(f"{numbers.uri}/numbers.txt", "w", encoding="utf-8") as handle:
        handle.write("1 2 3")


@tfx.dsl.components.component
def Consume(  # noqa: N802
    numbers: tfx.dsl.components.InputArtifact[tfx.types.standard_artifacts.Examples],
    explode: tfx.dsl.components.Parameter[int] = 0,
) -> None:
    if explode:
        raise ValueError("Consume was told to explode")


def _run(root, explode: int):
    produce = Produce()
    consume = Consume(numbers=produce.outputs["numbers"], explode=explode)
    pipeline = tfx.dsl.Pipeline(
        pipeline_name="hooked",
        pipeline_root=str(root / "artifacts"),
        components=[produce, consume],
        enable_cache=True,
        metadata_connection_config=tfx.orchestration.metadata.sqlite_metadata_connection_config(
            str(root / "metadata.sqlite")
        ),
    )
    ir = compiler.Compiler().compile(pipeline)
    run_id = substitute_run_id(ir)
    stream = io.StringIO()
    error = None
    with observing(run_id, ir, [ProgressPrinter(stream)]) as observer:
        try:
            with _orchestration_on_fn_api_runner():
                HookedBeamDagRunner().run_with_ir(ir)
        except Exception as raised:  # noqa: BLE001 - the test inspects it
            error = raised
    return observer, stream.getvalue(), error


def _lines(output: str) -> list[tuple[str, str]]:
    return re.findall(r"^\[\d/2\] (\S+)\s+(\S+)\s+[\d.]+s$", output, re.MULTILINE)


def test_a_failed_node_gets_a_failed_line_and_is_named(tmp_path):
    observer, output, error = _run(tmp_path, explode=1)

    assert error is not None and "Consume was told to explode" in str(error)
    assert _lines(output) == [("Produce", "executed"), ("Consume", "FAILED")], output
    component_id, cause = observer.failed
    assert component_id == "Consume" and isinstance(cause, ValueError)
    assert [(r.component_id, r.status) for r in observer.results] == [("Produce", "executed")]
    assert beam_progress._OBSERVERS == {}  # unregistered after a failed run too


def test_a_rerun_reports_what_tfx_served_from_cache(tmp_path):
    first, _, error = _run(tmp_path, explode=0)
    assert error is None
    second, output, error = _run(tmp_path, explode=0)

    assert error is None
    assert _lines(output) == [("Produce", "cached"), ("Consume", "cached")], output
    assert [r.execution_id for r in second.results] != [r.execution_id for r in first.results]
    assert beam_progress._OBSERVERS == {}
