"""End to end: the docs' worked example runs on the taxi sample, with a scaffolded step and the Prometheus hook.

The spec's `steps:` block is read from docs/adding_a_component.md itself:
RowFilter goes between ExampleGen and StatisticsGen. A package made by
`new-component` and pip-installed (entry points) is chained after it. The
run is asserted from ML Metadata: rows were dropped, and every built-in
reader consumed the custom steps' examples. The hook pushed run events to
a Pushgateway stand-in on 127.0.0.1.
"""

from __future__ import annotations

import csv
import http.server
import os
import re
import threading

import pytest
import yaml
from ml_metadata import metadata_store
from ml_metadata.proto import metadata_store_pb2
from scaffold_fixtures import cli_env, run_pipelines_cli, scaffold_and_install
from taxi_fixtures import REPO, taxi_spec, write_spec

pytestmark = pytest.mark.e2e


def docs_steps() -> list:
    text = open(os.path.join(REPO, "docs", "adding_a_component.md"), encoding="utf-8").read()
    block = re.search(r"```yaml\n(steps:.*?)```", text, re.S).group(1)
    return yaml.safe_load(block)["steps"]


class _Gateway(http.server.BaseHTTPRequestHandler):
    def do_PUT(self):  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
        self.server.pushes.append((self.path, body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def gateway():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Gateway)
    server.pushes = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def run(taxi_sample_csv, tmp_path_factory, gateway):
    root = tmp_path_factory.mktemp("row_filter_e2e")
    _, site = scaffold_and_install(root)
    steps = docs_steps() + [
        {
            "name": "SampleRows",
            "uses": "sample_rows",
            "inputs": {"examples": "DropShortTrips.filtered_examples"},
            "replaces": "DropShortTrips.filtered_examples",
        }
    ]
    hooks = [{"uses": "prometheus", "parameters": {"pushgateway_url": f"http://127.0.0.1:{gateway.server_port}"}}]
    spec = taxi_spec(taxi_sample_csv, str(root / "run"), pipeline={"name": "taxi_filtered"}, steps=steps, hooks=hooks)
    spec["training"].update(train_steps=50, eval_steps=5)
    spec_file = write_spec(root / "spec.yaml", spec)
    completed = run_pipelines_cli("run", spec_file, env=cli_env(PYTHONPATH=site))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return {"stdout": completed.stdout, "metadata": str(root / "run" / "metadata.sqlite")}


def store_for(path: str) -> metadata_store.MetadataStore:
    config = metadata_store_pb2.ConnectionConfig()
    config.sqlite.filename_uri = path
    config.sqlite.connection_mode = metadata_store_pb2.SqliteMetadataSourceConfig.READONLY
    return metadata_store.MetadataStore(config)


def _states(store) -> dict:
    states = {}
    for context in store.get_contexts():
        if context.type == "node":
            for execution in store.get_executions_by_context(context.id):
                states[context.name.split(".", 1)[1]] = execution.last_known_state
    return states


def _outputs_of(store, node_id: str) -> list:
    (context,) = [c for c in store.get_contexts() if c.type == "node" and c.name.endswith(f".{node_id}")]
    executions = store.get_executions_by_context(context.id)
    events = store.get_events_by_execution_ids([e.id for e in executions])
    ids = [e.artifact_id for e in events if e.type == metadata_store_pb2.Event.OUTPUT]
    return store.get_artifacts_by_id(ids)


def _input_ids_of(store, node_id: str) -> set:
    (context,) = [c for c in store.get_contexts() if c.type == "node" and c.name.endswith(f".{node_id}")]
    executions = store.get_executions_by_context(context.id)
    events = store.get_events_by_execution_ids([e.id for e in executions])
    return {e.artifact_id for e in events if e.type == metadata_store_pb2.Event.INPUT}


def test_custom_steps_run_between_example_gen_and_statistics_gen(run):
    states = _states(store_for(run["metadata"]))
    for node in ("ExampleGen", "DropShortTrips", "SampleRows", "StatisticsGen", "Transform", "Trainer", "Evaluator"):
        assert states[node] == metadata_store_pb2.Execution.COMPLETE, states
    assert "] DropShortTrips " in run["stdout"] and "] SampleRows " in run["stdout"]


def test_rows_were_dropped_and_built_in_steps_read_the_filtered_examples(run, taxi_sample_csv):
    with open(taxi_sample_csv, encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    short = sum(1 for row in rows if not row["trip_miles"] or float(row["trip_miles"]) <= 1.0)
    store = store_for(run["metadata"])
    (filtered,) = _outputs_of(store, "DropShortTrips")
    dropped = filtered.custom_properties["rows_dropped"].int_value
    kept = filtered.custom_properties["rows_kept"].int_value
    assert dropped == short > 0
    assert kept + dropped == len(rows)
    (sampled,) = [a for a in _outputs_of(store, "SampleRows") if a.type_id == filtered.type_id]
    assert sum(sampled.custom_properties[f"rows_{s}"].int_value for s in ("train", "eval")) == kept
    for reader in ("StatisticsGen", "Transform", "Trainer", "Evaluator"):
        assert sampled.id in _input_ids_of(store, reader), reader
        assert filtered.id not in _input_ids_of(store, reader), reader


def test_prometheus_hook_pushed_the_run_events(run, gateway):
    path, body = gateway.pushes[-1]
    assert path.startswith("/metrics/job/yaml_tfx/pipeline/taxi_filtered/run_id/")  # one group per run
    assert (
        'pipeline_component_runs_total{component="DropShortTrips",pipeline="taxi_filtered",status="executed"} 1.0'
        in body
    )
    assert 'pipeline_run_success{pipeline="taxi_filtered"} 1.0' in body
