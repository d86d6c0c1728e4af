"""`submit --target kubeflow`: sends the compiled package to a Kubeflow Pipelines API server.

The requests are the ones the KFP SDK's `kfp.Client` sends, made with the
same generated REST client it is built on (`kfp_server_api`; `kfp` itself
needs protobuf 4+, which TFX 1.16's protobuf 3.20 pin rules out here):

- always: `GET /apis/v2beta1/healthz`, so an unreachable host is one clear
  line before anything else;
- `--upload`: the package as a pipeline (`POST /apis/v2beta1/pipelines/upload`),
  or as a new version when a pipeline of that name exists
  (`kfp.Client.upload_pipeline` / `upload_pipeline_version`);
- a run (default): the experiment is found or created, then
  `POST /apis/v2beta1/runs` with the pipeline spec inline
  (`kfp.Client.create_run_from_pipeline_package`);
- `--schedule`: `recurring_run.json` in the experiment
  (`POST /apis/v2beta1/recurringruns`, `kfp.Client.create_recurring_run`).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os

import yaml

__all__ = ["KubeflowSubmission", "SubmitError", "submit_kubeflow"]

_EQUALS = 1  # the API filter's EQUALS operation


class SubmitError(RuntimeError):
    """The submission could not be made; the message names the host and what to check."""


@dataclasses.dataclass(frozen=True)
class KubeflowSubmission:
    """What the server answered: ids and the UI links a person follows."""

    host: str
    experiment_id: str | None = None
    pipeline_id: str | None = None
    pipeline_version_id: str | None = None
    run_id: str | None = None
    recurring_run_id: str | None = None

    def links(self) -> list[str]:
        prefix = f"{self.host.rstrip('/')}/#"
        found = []
        if self.pipeline_id:
            found.append(f"pipeline: {prefix}/pipelines/details/{self.pipeline_id}")
        if self.run_id:
            found.append(f"run: {prefix}/runs/details/{self.run_id}")
        if self.recurring_run_id:
            found.append(f"recurring run: {prefix}/recurringrun/details/{self.recurring_run_id}")
        return found


def _package_files(compiled: str) -> tuple[str, str]:
    """(pipeline.yaml, folder) for a compiled folder or the package file itself."""
    folder = compiled if os.path.isdir(compiled) else os.path.dirname(os.path.abspath(compiled))
    package = os.path.join(compiled, "pipeline.yaml") if os.path.isdir(compiled) else compiled
    if not os.path.isfile(package) or not package.endswith((".yaml", ".yml")):
        raise SubmitError(
            f"no Kubeflow package. Expected `pipeline.yaml` from `python -m pipelines compile SPEC --target kubeflow`, "
            f"or the folder holding it. Received: {compiled}. Compile first, then submit that folder."
        )
    return package, folder


def _pipeline_doc(package: str) -> tuple[dict, dict | None]:
    with open(package, encoding="utf-8") as handle:
        documents = [d for d in yaml.safe_load_all(handle) if d]
    if not documents or "pipelineInfo" not in documents[0]:
        raise SubmitError(
            f"{package} is not a Kubeflow pipeline package. Expected a PipelineSpec YAML (with `pipelineInfo`). "
            "Received a file without one. Compile again with `--target kubeflow`."
        )
    return documents[0], (documents[1] if len(documents) > 1 else None)


def _api_client(host: str, token: str | None):
    import kfp_server_api

    configuration = kfp_server_api.Configuration(host=host.rstrip("/"))
    client = kfp_server_api.ApiClient(configuration)
    if token:
        client.set_default_header("Authorization", f"Bearer {token}")
    return client


def _check_reachable(client, host: str) -> None:
    import kfp_server_api
    import urllib3

    try:
        kfp_server_api.HealthzServiceApi(client).healthz_service_get_healthz(_request_timeout=10)
    except urllib3.exceptions.HTTPError as error:
        raise SubmitError(
            f"cannot reach the Kubeflow Pipelines API at {host}: {type(error).__name__}. Expected the KFP API server "
            "(`ml-pipeline-ui` or `ml-pipeline` service). Check the URL and port, that it is reachable from here "
            "(e.g. `kubectl port-forward -n kubeflow svc/ml-pipeline-ui 8080:80`, then --host http://127.0.0.1:8080)."
        ) from None
    except kfp_server_api.ApiException as error:
        raise SubmitError(
            f"{host} answered GET /apis/v2beta1/healthz with HTTP {error.status} {error.reason}. Expected the KFP API "
            "server's health answer. Check that --host is the Kubeflow Pipelines endpoint (not the cluster API) and, "
            "on a multi-user cluster, pass --token."
        ) from None


def _experiment_id(client, name: str, namespace: str | None) -> str:
    import kfp_server_api

    api = kfp_server_api.ExperimentServiceApi(client)
    name_filter = json.dumps({"predicates": [{"operation": _EQUALS, "key": "display_name", "stringValue": name}]})
    kwargs = {"namespace": namespace} if namespace else {}
    found = api.experiment_service_list_experiments(filter=name_filter, **kwargs)
    if found.experiments:
        return found.experiments[0].experiment_id
    created = api.experiment_service_create_experiment(
        experiment=kfp_server_api.V2beta1Experiment(display_name=name, namespace=namespace)
    )
    return created.experiment_id


def _upload(client, package: str, name: str) -> tuple[str, str | None]:
    """Uploads the package; a second upload of the same name becomes a new version."""
    import kfp_server_api

    uploads = kfp_server_api.PipelineUploadServiceApi(client)
    name_filter = json.dumps({"predicates": [{"operation": _EQUALS, "key": "display_name", "stringValue": name}]})
    existing = kfp_server_api.PipelineServiceApi(client).pipeline_service_list_pipelines(filter=name_filter)
    if existing.pipelines:
        pipeline_id = existing.pipelines[0].pipeline_id
        version_name = f"{name}-{datetime.datetime.now(datetime.timezone.utc):%Y%m%d-%H%M%S}"
        version = uploads.upload_pipeline_version(package, name=version_name, pipelineid=pipeline_id)
        return pipeline_id, version.pipeline_version_id
    pipeline = uploads.upload_pipeline(package, name=name)
    return pipeline.pipeline_id, None


def submit_kubeflow(
    compiled: str,
    host: str,
    *,
    experiment: str = "Default",
    upload: bool = False,
    schedule: bool = False,
    namespace: str | None = None,
    token: str | None = None,
) -> KubeflowSubmission:
    """Submits `compiled` (the kubeflow output folder, or its pipeline.yaml) to the KFP API at `host`.

    Raises:
        SubmitError: no package, the host cannot be reached, or the server refused a request (its answer is named).
    """
    import kfp_server_api

    package, folder = _package_files(compiled)
    pipeline_spec, platform_spec = _pipeline_doc(package)
    client = _api_client(host, token)
    _check_reachable(client, host)
    name = pipeline_spec["pipelineInfo"]["name"]
    try:
        pipeline_id = version_id = run_id = recurring_id = None
        if upload:
            pipeline_id, version_id = _upload(client, package, name)
        experiment_id = None
        if schedule or not upload:
            experiment_id = _experiment_id(client, experiment, namespace)
        if schedule:
            path = os.path.join(folder, "recurring_run.json")
            if not os.path.isfile(path):
                raise SubmitError(
                    f"no recurring_run.json next to {package}. Expected one: `orchestrator.schedule` writes it. "
                    "Add a schedule to the spec and compile again, or submit without --schedule for one run."
                )
            with open(path, encoding="utf-8") as handle:
                body = json.load(handle)
            body["experiment_id"] = experiment_id
            recurring = kfp_server_api.RecurringRunServiceApi(client).recurring_run_service_create_recurring_run(
                recurring_run=body
            )
            recurring_id = recurring.recurring_run_id
        elif not upload:
            inline = (
                {"pipeline_spec": pipeline_spec, "platform_spec": platform_spec} if platform_spec else pipeline_spec
            )
            run = kfp_server_api.V2beta1Run(
                display_name=f"{name} {datetime.datetime.now():%Y-%m-%d %H-%M-%S}",
                experiment_id=experiment_id,
                pipeline_spec=inline,
                runtime_config=kfp_server_api.V2beta1RuntimeConfig(
                    pipeline_root=pipeline_spec.get("defaultPipelineRoot"), parameters={}
                ),
            )
            run_id = kfp_server_api.RunServiceApi(client).run_service_create_run(run=run).run_id
    except kfp_server_api.ApiException as error:
        raise SubmitError(
            f"{host} refused the submission: HTTP {error.status} {error.reason}: {(error.body or '')[:500]}. "
            "Expected the request to be accepted. Check the message above; on a multi-user cluster pass "
            "--namespace and --token."
        ) from None
    return KubeflowSubmission(host, experiment_id, pipeline_id, version_id, run_id, recurring_id)
