"""`python -m pipelines submit OUT --target kubeflow --host URL` against a stand-in KFP API server on 127.0.0.1.

Every request body is parsed with kfp_server_api's models and the pipeline spec with kfp-pipeline-spec;
where `.venv-kfp` exists, the real `kfp.Client` submits the same package to the same server and the two
must call the same endpoints with the same kind of body.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest
import yaml
from fake_kfp import PREFIX, FakeKfp, as_kfp_model
from taxi_fixtures import REPO, taxi_spec, write_spec

kfp_server_api = pytest.importorskip("kfp_server_api")
pipeline_spec_pb2 = pytest.importorskip("kfp.pipeline_spec.pipeline_spec_pb2")

KFP_PYTHON = os.path.join(os.environ.get("KFP_VENV", os.path.join(REPO, ".venv-kfp")), "bin", "python")
CLIENT_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kfp_client_submit.py")


@pytest.fixture(scope="module")
def compiled(taxi_sample_csv, tmp_path_factory) -> str:
    from pipelines.load import load_spec
    from pipelines.targets import compile_target

    folder = tmp_path_factory.mktemp("submit")
    orchestrator = {
        "target": "kubeflow",
        "schedule": "0 5 * * 7",
        "platform": "gke",
        "components": {"Trainer": {"gpus": 1, "accelerator": "NVIDIA_L4"}},
    }
    spec = taxi_spec(taxi_sample_csv, "gs://bucket/taxi", orchestrator=orchestrator)
    compile_target(load_spec(write_spec(folder / "spec.yaml", spec)), "kubeflow", str(folder / "out"))
    return str(folder / "out")


def submit(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run(
        [sys.executable, "-m", "pipelines", "submit", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _parse_inline_spec(inline: dict) -> pipeline_spec_pb2.PipelineSpec:
    from google.protobuf import json_format

    spec = pipeline_spec_pb2.PipelineSpec()
    json_format.ParseDict(inline["pipeline_spec"], spec)
    json_format.ParseDict(inline["platform_spec"], pipeline_spec_pb2.PlatformSpec())
    return spec


def _posted(kfp: FakeKfp, path: str) -> list[dict]:
    return [r for r in kfp.requests if r["method"] == "POST" and r["path"] == f"{PREFIX}{path}"]


def test_submit_creates_a_run_with_the_spec_inline_in_the_default_experiment(compiled):
    with FakeKfp() as kfp:
        completed = submit(compiled, "--target", "kubeflow", "--host", kfp.url)

    assert completed.returncode == 0, completed.stderr
    assert kfp.calls() == [
        ("GET", f"{PREFIX}/healthz"),
        ("GET", f"{PREFIX}/experiments"),
        ("POST", f"{PREFIX}/experiments"),
        ("POST", f"{PREFIX}/runs"),
    ]
    (experiment,) = _posted(kfp, "/experiments")
    assert as_kfp_model(experiment["body"], "V2beta1Experiment").display_name == "Default"
    run = as_kfp_model(_posted(kfp, "/runs")[0]["body"], "V2beta1Run")
    assert run.experiment_id == "experiment-1"
    assert run.runtime_config.pipeline_root == "gs://bucket/taxi/artifacts"
    assert _parse_inline_spec(run.pipeline_spec).pipeline_info.name == "chicago-taxi"
    assert f"run: {kfp.url}/#/runs/details/run-2" in completed.stdout


def test_upload_twice_makes_a_pipeline_then_a_new_version(compiled):
    with FakeKfp() as kfp:
        first = submit(compiled, "--host", kfp.url, "--upload")
        second = submit(compiled, "--host", kfp.url, "--upload")

    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    (upload,) = _posted(kfp, "/pipelines/upload")
    assert upload["query"]["name"] == ["chicago-taxi"]
    sent = list(yaml.safe_load_all(upload["files"]["uploadfile"]))
    with open(os.path.join(compiled, "pipeline.yaml"), encoding="utf-8") as handle:
        assert sent == list(yaml.safe_load_all(handle))
    (version,) = _posted(kfp, "/pipelines/upload_version")
    assert version["query"]["pipelineid"] == ["pipeline-1"]
    assert "pipeline: " in second.stdout and "/#/pipelines/details/pipeline-1" in second.stdout


def test_schedule_posts_the_recurring_run_in_the_experiment(compiled):
    with FakeKfp() as kfp:
        completed = submit(compiled, "--host", kfp.url, "--schedule", "--experiment", "nightly")

    assert completed.returncode == 0, completed.stderr
    recurring = as_kfp_model(_posted(kfp, "/recurringruns")[0]["body"], "V2beta1RecurringRun")
    assert recurring.trigger.cron_schedule.cron == "0 0 5 * * 0"
    assert recurring.experiment_id == "experiment-1" and recurring.mode == "ENABLE"
    assert _parse_inline_spec(recurring.pipeline_spec).default_pipeline_root == "gs://bucket/taxi/artifacts"


def test_an_unreachable_host_is_one_line_naming_it(compiled):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again below: nothing listens there
    completed = submit(compiled, "--host", f"http://127.0.0.1:{port}")

    assert completed.returncode == 1
    assert f"error: cannot reach the Kubeflow Pipelines API at http://127.0.0.1:{port}" in completed.stderr
    assert "kubectl port-forward" in completed.stderr and "Traceback" not in completed.stderr


def test_a_server_that_is_not_kfp_is_named_with_its_answer(compiled):
    with FakeKfp(healthz_status=404) as kfp:
        completed = submit(compiled, "--host", kfp.url)

    assert completed.returncode == 1
    assert f"{kfp.url} answered GET /apis/v2beta1/healthz with HTTP 404" in completed.stderr
    assert [c for c in kfp.calls() if c[0] == "POST"] == []


def test_a_folder_without_a_package_says_to_compile_first(tmp_path):
    completed = submit(str(tmp_path), "--host", "http://127.0.0.1:9")
    assert completed.returncode == 1
    assert "no Kubeflow package. Expected `pipeline.yaml`" in completed.stderr


@pytest.mark.skipif(not os.path.exists(KFP_PYTHON), reason="no .venv-kfp: `make extras` creates it")
@pytest.mark.parametrize(
    "mode, ours", [(["run"], []), (["upload"], ["--upload"]), (["schedule", "0 0 5 * * 0"], ["--schedule"])]
)
def test_the_real_kfp_client_makes_the_same_requests(compiled, mode, ours):
    package = os.path.join(compiled, "pipeline.yaml")
    with FakeKfp() as sdk_server:
        completed = subprocess.run(
            [KFP_PYTHON, CLIENT_SCRIPT, sdk_server.url, package, *mode], capture_output=True, text=True, timeout=120
        )
        assert completed.returncode == 0, completed.stderr[-2000:]
    with FakeKfp() as our_server:
        assert submit(compiled, "--host", our_server.url, *ours).returncode == 0

    def posts(server):
        return [
            (r["path"], sorted(r.get("body") or r.get("files") or {})) for r in server.requests if r["method"] == "POST"
        ]

    sdk_posts, our_posts = posts(sdk_server), posts(our_server)
    assert [p for p, _ in sdk_posts] == [p for p, _ in our_posts]
    for (path, sdk_keys), (_, our_keys) in zip(sdk_posts, our_posts):
        assert set(sdk_keys) <= set(our_keys) | {"description", "namespace"}, path


def test_kubeflow_without_a_host_says_which_option_is_missing(tmp_path, capsys):
    from pipelines.cli import main as cli_main

    code = cli_main(["submit", str(tmp_path), "--target", "kubeflow"])
    err = capsys.readouterr().err
    assert code == 2
    assert "error: submit --target kubeflow needs --host. Expected e.g. --host http://127.0.0.1:8080" in err
