"""`python -m pipelines submit OUT --target vertex` against a stand-in Vertex AI and Cloud Storage API on 127.0.0.1.

The submission is google-cloud-aiplatform's own `PipelineJob.submit` / `create_schedule`, run in `.venv-kfp`;
every request body it sent is parsed back with aiplatform's types (`google.cloud.aiplatform_v1`).
"""

from __future__ import annotations

import json
import os
import shutil
import socket

import pytest
from fake_vertex import FakeVertex
from taxi_fixtures import REPO, taxi_spec, write_spec

from pipelines.cli import main as cli_main

types = pytest.importorskip("google.cloud.aiplatform_v1.types")

KFP_VENV = os.environ.get("KFP_VENV", os.path.join(REPO, ".venv-kfp"))
needs_venv = pytest.mark.skipif(
    not os.path.exists(os.path.join(KFP_VENV, "bin", "python")), reason="no .venv-kfp: `make extras` creates it"
)
ROOT = "gs://taxi-bucket/pipelines/taxi"
SERVICE_ACCOUNT = "runner@my-project.iam.gserviceaccount.com"
VERTEX = ("--target", "vertex", "--project", "my-project", "--region", "us-central1")


@pytest.fixture(scope="module")
def compiled(taxi_sample_csv, tmp_path_factory) -> str:
    from pipelines.load import load_spec
    from pipelines.targets import compile_target

    folder = tmp_path_factory.mktemp("vertex")
    spec = taxi_spec(taxi_sample_csv, ROOT, orchestrator={"target": "kubeflow", "schedule": "30 4 * * 7"})
    compile_target(load_spec(write_spec(folder / "spec.yaml", spec)), "kubeflow", str(folder / "out"))
    return str(folder / "out")


def submit(capsys, vertex: FakeVertex, *args: str) -> tuple[int, str, str]:
    """Runs the CLI in this process; the aiplatform calls run in `.venv-kfp`, their bucket check against `vertex`."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("STORAGE_EMULATOR_HOST", vertex.url)
        code = cli_main(["submit", *args, "--endpoint", vertex.url])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@needs_venv
def test_submit_creates_the_pipeline_job_of_the_vertex_file(compiled, capsys):
    with FakeVertex() as vertex:
        code, out, err = submit(capsys, vertex, compiled, *VERTEX, "--service-account", SERVICE_ACCOUNT)

    assert code == 0, err
    (body,) = vertex.posted("pipelineJobs")
    job = types.PipelineJob.from_json(json.dumps(body), ignore_unknown_fields=False)
    assert job.display_name == "chicago-taxi"
    assert job.runtime_config.gcs_output_directory == f"{ROOT}/artifacts"
    assert job.service_account == SERVICE_ACCOUNT
    with open(os.path.join(compiled, "vertex_pipeline_job.json"), encoding="utf-8") as handle:
        assert body["pipelineSpec"] == json.load(handle)["pipelineSpec"]
    (create,) = [r for r in vertex.requests if r["path"].endswith("/pipelineJobs")]
    assert create["path"] == "/v1/projects/my-project/locations/us-central1/pipelineJobs"
    job_id = create["query"]["pipelineJobId"][0]
    assert job_id.startswith("chicago-taxi-")
    assert f"pipeline job: projects/my-project/locations/us-central1/pipelineJobs/{job_id}" in out
    assert f"console: https://console.cloud.google.com/vertex-ai/locations/us-central1/pipelines/runs/{job_id}" in out
    # aiplatform's bucket check came first: the missing root bucket was created and shared with the runner.
    storage = [(r["method"], r["path"]) for r in vertex.requests if r["path"].startswith("/storage/")]
    assert storage == [
        ("GET", "/storage/v1/b/taxi-bucket"),
        ("POST", "/storage/v1/b"),
        ("GET", "/storage/v1/b/taxi-bucket/iam"),
        ("PUT", "/storage/v1/b/taxi-bucket/iam"),
    ]
    (grant,) = [r["body"] for r in vertex.requests if r["method"] == "PUT"]
    assert {b["role"]: b["members"] for b in grant["bindings"]} == {
        "roles/storage.objectCreator": [f"serviceAccount:{SERVICE_ACCOUNT}"],
        "roles/storage.objectViewer": [f"serviceAccount:{SERVICE_ACCOUNT}"],
    }


@needs_venv
def test_schedule_creates_the_vertex_schedule_on_the_compiled_cron(compiled, capsys):
    with FakeVertex() as vertex:
        code, out, err = submit(capsys, vertex, compiled, *VERTEX, "--schedule", "--service-account", SERVICE_ACCOUNT)

    assert code == 0, err
    (body,) = vertex.posted("schedules")
    schedule = types.Schedule.from_json(json.dumps(body), ignore_unknown_fields=False)
    assert schedule.cron == "30 4 * * 0"  # Sunday is 0 for Vertex's scheduler
    assert schedule.display_name == "chicago-taxi-schedule"
    assert schedule.max_concurrent_run_count == 1
    request = schedule.create_pipeline_job_request
    assert request.parent == "projects/my-project/locations/us-central1"
    assert request.pipeline_job.runtime_config.gcs_output_directory == f"{ROOT}/artifacts"
    assert request.pipeline_job.service_account == SERVICE_ACCOUNT
    assert vertex.posted("pipelineJobs") == []  # a schedule, not a run now
    assert "schedule: projects/my-project/locations/us-central1/schedules/1001 (cron `30 4 * * 0`)" in out


@needs_venv
def test_a_refusal_is_one_line_with_the_apis_answer(compiled, capsys):
    denied = (403, "PERMISSION_DENIED", "Permission 'aiplatform.schedules.create' denied on resource")
    with FakeVertex(refuse=denied) as vertex:
        code, out, err = submit(capsys, vertex, compiled, *VERTEX, "--schedule")

    assert code == 1
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"error: Vertex AI at {vertex.url} refused the submission: HTTP 403" in err
    assert "Permission 'aiplatform.schedules.create' denied on resource" in err
    assert "has the Vertex AI API enabled" in err


@needs_venv
def test_an_unreachable_endpoint_is_one_line_naming_it(compiled, capsys):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again below: nothing listens there
    code = cli_main(["submit", compiled, *VERTEX, "--schedule", "--endpoint", f"http://127.0.0.1:{port}"])
    err = capsys.readouterr().err

    assert code == 1
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"error: cannot reach the Vertex AI API at http://127.0.0.1:{port}" in err


@needs_venv
def test_no_application_default_credentials_says_how_to_log_in(compiled, tmp_path, capsys, monkeypatch):
    for name in ("GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.config/gcloud
    monkeypatch.setenv("NO_GCE_CHECK", "True")  # google-auth: not on a GCE VM, no metadata server
    code = cli_main(["submit", compiled, *VERTEX, "--schedule"])
    err = capsys.readouterr().err

    assert code == 1
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "error: no Google Cloud credentials. Expected Application Default Credentials for project my-project" in err
    assert "gcloud auth application-default login" in err


def _only_job_file(compiled: str, folder) -> str:
    shutil.copy(os.path.join(compiled, "vertex_pipeline_job.json"), folder)
    return str(folder)


@pytest.mark.parametrize(
    "case, message",
    [
        ("empty folder", "no Vertex AI pipeline job. Expected `vertex_pipeline_job.json`"),
        ("no schedule file", "no vertex_schedule.json next to"),
        ("no venv", "google-cloud-aiplatform is not installed: no venv at /nonexistent/venv"),
        ("no project", "submit --target vertex needs --project and --region"),
    ],
)
def test_bad_submissions_are_one_line_naming_the_fix(case, message, compiled, tmp_path, capsys, monkeypatch):
    target, extra = compiled, ["--endpoint", "http://127.0.0.1:9"]
    if case == "empty folder":
        target = str(tmp_path)
    elif case == "no schedule file":
        target, extra = _only_job_file(compiled, tmp_path), extra + ["--schedule"]
    elif case == "no venv":
        monkeypatch.setenv("KFP_VENV", "/nonexistent/venv")
    args = ["submit", target, "--target", "vertex"] + ([] if case == "no project" else list(VERTEX[2:]))
    code = cli_main(args + extra)
    err = capsys.readouterr().err

    assert code in (1, 2)
    assert err.count("\n") == 1 and message in err
