"""`data: {sql, connection: bigquery://PROJECT}` compiles to TFX's BigQueryExampleGen for Kubeflow/Vertex.

Compiled, parsed with kfp-pipeline-spec, and (when `.venv-kfp` exists) loaded by
the kfp 2 SDK and aiplatform through `kfp_sdk_check.py`; never run. `validate`
refuses it for other targets and asks for `label.classes` on a class column.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import yaml
from taxi_fixtures import REPO, taxi_spec, write_spec

from pipelines.load import load_spec
from pipelines.spec import SpecError

pipeline_spec_pb2 = pytest.importorskip("kfp.pipeline_spec.pipeline_spec_pb2")

ROOT = "gs://my-bucket/pipelines/taxi"
# kfp_sdk_check.py reads a schedule and a GPU placement too (as in test_kfp_sdk.py).
ORCHESTRATOR = {
    "image": "registry.example/yaml-tfx:0.1",
    "schedule": "15 1 * * 7",
    "platform": "nvidia-gfd",
    "components": {"Trainer": {"gpus": 1, "accelerator": "NVIDIA_L4", "cpu": 4}},
}
QUERY = "SELECT fare, tips, trip_miles, company FROM `bigquery-public-data.chicago_taxi_trips.taxi_trips` LIMIT 10000"
KFP_PYTHON = os.path.join(os.environ.get("KFP_VENV", os.path.join(REPO, ".venv-kfp")), "bin", "python")
CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kfp_sdk_check.py")


def _spec_file(folder, target: str = "kubeflow", **label) -> str:
    spec = taxi_spec("unused.csv", ROOT, orchestrator=ORCHESTRATOR | {"target": target})
    spec["data"] = {"sql": QUERY, "connection": "bigquery://my-project"}
    spec["features"] = {"fare": {"transform": "zscore"}, "company": {"transform": "vocabulary"}}
    if label:
        spec["label"] = label
    return write_spec(folder / "spec.yaml", spec)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    from pipelines.targets import compile_target

    folder = tmp_path_factory.mktemp("bigquery")
    compile_target(load_spec(_spec_file(folder)), "kubeflow", str(folder / "out"))
    return folder / "out"


def test_the_package_runs_bigquery_example_gen_with_the_query_and_project(compiled):
    from google.protobuf import json_format

    documents = list(yaml.safe_load_all((compiled / "pipeline.yaml").read_text()))
    package = pipeline_spec_pb2.PipelineSpec()
    json_format.ParseDict(documents[0], package)
    deployment = json_format.MessageToDict(package.deployment_spec)
    container = deployment["executors"]["ExampleGen_executor"]["container"]
    assert "tfx.extensions.google_cloud_big_query.example_gen.executor.Executor" in json.dumps(container)
    assert "--project=my-project" in json.dumps(container)
    task_inputs = json.dumps(documents[0]["root"]["dag"]["tasks"]["ExampleGen"])
    assert (
        "bigquery-public-data.chicago_taxi_trips.taxi_trips" in task_inputs
    )  # the query is the input_config's pattern


@pytest.mark.skipif(not os.path.exists(KFP_PYTHON), reason=f"no kfp SDK venv at {KFP_PYTHON}: `make extras`")
def test_the_kfp_sdk_and_aiplatform_load_the_package(compiled):
    completed = subprocess.run([KFP_PYTHON, CHECK, str(compiled)], capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    view = json.loads(completed.stdout.strip().splitlines()[-1])
    assert "ExampleGen_executor" in view["executors"], view["executors"]


def _problems(spec_file) -> list:
    with pytest.raises(SpecError) as caught:
        load_spec(spec_file)
    return caught.value.problems


def test_another_target_is_refused_on_the_connection(tmp_path):
    (problem,) = [p for p in _problems(_spec_file(tmp_path, target="local")) if p.path == "data.connection"]
    assert "Expected `orchestrator.target: kubeflow`" in problem.message and "Received: target local" in problem.message


def test_a_class_column_needs_its_classes_declared(tmp_path):
    (problem,) = _problems(_spec_file(tmp_path, name="payment", column="payment_type", task="classification"))
    assert problem.path == "label.classes" and "Add e.g. `classes: [no, yes]`" in problem.message
