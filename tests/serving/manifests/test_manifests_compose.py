"""docker-compose + Prometheus + Grafana files: every reference between them resolves.

No compose-spec schema ships in a kept Python package, so this checks what
`docker compose up` would trip over at run time: every Prometheus target is a
port that something listens on where Prometheus runs, the trainer's port and
the Pushgateway are scraped, mounts point at rendered files, Grafana finds
Prometheus and its dashboards, and nothing listens beyond 127.0.0.1.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess

import pytest
import yaml
from google.protobuf import text_format

import serving.manifests as manifests
from serving import config as cfg
from serving.manifests import compose as compose_module

DASHBOARDS_MOUNT = "/var/lib/grafana/dashboards"


def _documents(files: dict[str, str]) -> dict[str, dict]:
    return {
        "compose": yaml.safe_load(files["docker-compose.yaml"]),
        "prometheus": yaml.safe_load(files["prometheus/prometheus.yml"]),
        "datasources": yaml.safe_load(files["grafana/provisioning/datasources/prometheus.yaml"]),
        "providers": yaml.safe_load(files["grafana/provisioning/dashboards/serving.yaml"]),
        "dashboard": json.loads(files["grafana/dashboards/serving.json"]),
        "monitoring": files["config/monitoring.config"],
    }


def _port(spec: str) -> tuple[str, str, str]:
    """(host address, host port, container port) of a short-syntax `ports` entry."""
    parts = spec.split(":")
    return ("0.0.0.0", *parts) if len(parts) == 2 else tuple(parts)


def _listen_address(service: dict) -> str | None:
    """host:port a host-network service listens on (Prometheus flag, Grafana env)."""
    for arg in service.get("command", []):
        if arg.startswith("--web.listen-address="):
            return arg.split("=", 1)[1]
    env = service.get("environment", {})
    if "GF_SERVER_HTTP_ADDR" in env:
        return f"{env['GF_SERVER_HTTP_ADDR']}:{env.get('GF_SERVER_HTTP_PORT', '3000')}"
    return None


def _host_listeners(services: dict) -> dict[str, str]:
    """{host:port reachable on the host's loopback: service}."""
    listeners = {}
    for name, service in services.items():
        for port in service.get("ports", []):
            host, host_port, _ = _port(port)
            listeners[f"{host}:{host_port}"] = name
        if service.get("network_mode") == "host" and _listen_address(service):
            listeners[_listen_address(service)] = name
    return listeners


def problems(files: dict[str, str]) -> list[str]:
    """What would break the rendered compose stack, as messages (empty: nothing)."""
    docs = _documents(files)
    services = docs["compose"]["services"]
    out = []
    for name, service in services.items():
        for port in service.get("ports", []):
            host, _, _ = _port(port)
            if host != "127.0.0.1":
                out.append(f"service {name} publishes {port!r} beyond 127.0.0.1")
        if service.get("network_mode") == "host":
            if service.get("ports"):
                out.append(f"service {name} runs on the host network and also publishes ports")
            address = _listen_address(service)
            if address is None or not address.startswith("127.0.0.1:"):
                out.append(f"service {name} runs on the host network listening on {address or 'all interfaces'}")
        elif not service.get("ports") and name != "tfserving":
            out.append(f"service {name} is on the bridge network and publishes nothing")
        for dependency in service.get("depends_on", []):
            if dependency not in services:
                out.append(f"service {name} depends on {dependency!r}, which is no service")
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            relative = source.removeprefix("./")
            if relative != "models" and not any(f == relative or f.startswith(relative + "/") for f in files):
                out.append(f"service {name} mounts {source!r}, which is not rendered")
    prometheus = services.get("prometheus", {})
    if prometheus.get("network_mode") != "host":
        out.append("prometheus is not on the host network, so it cannot reach the trainer on 127.0.0.1")
    listeners = _host_listeners(services)
    jobs = {job["job_name"]: job for job in docs["prometheus"]["scrape_configs"]}
    for job_name, job in jobs.items():
        for target in (t for c in job["static_configs"] for t in c["targets"]):
            if target not in listeners and job_name != "trainer":
                out.append(f"job {job_name} scrapes {target}, where no service listens ({sorted(listeners)})")
    for required in ("tfserving", "pushgateway", "trainer"):
        if required not in jobs:
            out.append(f"no Prometheus job {required!r}")
    if "pushgateway" in jobs:
        if not jobs["pushgateway"].get("honor_labels"):
            out.append("job pushgateway lacks honor_labels: pushed job/instance labels would be renamed")
        targets = [t for c in jobs["pushgateway"]["static_configs"] for t in c["targets"]]
        if not all(listeners.get(t) == "pushgateway" for t in targets):
            out.append(f"job pushgateway scrapes {targets}, not the pushgateway service")
    if "trainer" in jobs:
        targets = [t for c in jobs["trainer"]["static_configs"] for t in c["targets"]]
        if targets != [f"127.0.0.1:{compose_module.TRAINER_METRICS_PORT}"]:
            out.append(f"job trainer scrapes {targets}, not the trainer's 127.0.0.1 metrics port")
    if "tfserving" in jobs:
        monitoring = text_format.Parse(docs["monitoring"], cfg.MonitoringConfig()).prometheus_config
        if not monitoring.enable or jobs["tfserving"].get("metrics_path") != monitoring.path:
            out.append(
                f"job tfserving reads {jobs['tfserving'].get('metrics_path')}, the server serves {monitoring.path}"
            )
    (datasource,) = docs["datasources"]["datasources"]
    address = datasource["url"].removeprefix("http://")
    if listeners.get(address) != "prometheus":
        out.append(f"Grafana's datasource {datasource['url']} is not where Prometheus listens")
    uids = {t["datasource"]["uid"] for p in docs["dashboard"]["panels"] for t in p.get("targets", [])}
    if uids != {datasource["uid"]}:
        out.append(f"dashboard datasources {sorted(uids)} != provisioned {datasource['uid']!r}")
    provider_paths = {p["options"]["path"] for p in docs["providers"]["providers"]}
    mounts = {v.split(":")[1] for v in services.get("grafana", {}).get("volumes", [])}
    if not provider_paths <= mounts:
        out.append(f"Grafana reads dashboards from {sorted(provider_paths)}, mounted: {sorted(mounts)}")
    for arg in services.get("tfserving", {}).get("command", []):
        value = arg.split("=", 1)[-1]
        if value.startswith(compose_module.CONFIG_DIR + "/") and f"config/{value.rsplit('/', 1)[1]}" not in files:
            out.append(f"tfserving reads {value}, which is not rendered")
    return out


@pytest.fixture(scope="module")
def files() -> dict[str, str]:
    return manifests.render_manifests("chicago_taxi")


def test_rendered_compose_stack_has_no_broken_reference(files):
    assert problems(files) == []


def test_prometheus_scrapes_the_server_the_pushgateway_and_the_trainer(files):
    docs = _documents(files)
    jobs = {job["job_name"]: job for job in docs["prometheus"]["scrape_configs"]}
    assert set(jobs) == {"tfserving", "pushgateway", "trainer"}
    assert docs["compose"]["services"]["pushgateway"]["image"].startswith("prom/pushgateway:")
    assert docs["compose"]["services"]["pushgateway"]["ports"] == ["127.0.0.1:9091:9091"]


_NO_COMPOSE = "needs docker-compose to check against the compose spec (Debian: apt-get install docker-compose)"


def _compose_config(directory) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["docker-compose", "-f", str(directory / "docker-compose.yaml"), "config", "-q"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.skipif(shutil.which("docker-compose") is None, reason=_NO_COMPOSE)
def test_docker_compose_accepts_the_file(tmp_path):
    manifests.write_manifests(tmp_path, "chicago_taxi")
    result = _compose_config(tmp_path)
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(shutil.which("docker-compose") is None, reason=_NO_COMPOSE)
def test_docker_compose_rejects_a_misspelt_option(tmp_path, files):
    document = yaml.safe_load(files["docker-compose.yaml"])
    document["services"]["pushgateway"]["portz"] = document["services"]["pushgateway"].pop("ports")
    (tmp_path / "docker-compose.yaml").write_text(yaml.safe_dump(document))
    result = _compose_config(tmp_path)
    assert result.returncode != 0
    assert "Unsupported config option for services.pushgateway: 'portz'" in result.stderr


def _mutated(files: dict[str, str], path: str, change) -> dict[str, str]:
    broken = dict(files)
    document = yaml.safe_load(files[path])
    change(document)
    broken[path] = yaml.safe_dump(document)
    return broken


@pytest.mark.parametrize(
    ("path", "change", "message"),
    [
        ("docker-compose.yaml", lambda d: d["services"].pop("pushgateway"), "job pushgateway scrapes 127.0.0.1:9091"),
        ("docker-compose.yaml", lambda d: d["services"]["prometheus"].pop("network_mode"), "not on the host network"),
        (
            "docker-compose.yaml",
            lambda d: d["services"]["tfserving"].update(ports=["8501:8501"]),
            "beyond 127.0.0.1",
        ),
        (
            "docker-compose.yaml",
            lambda d: d["services"]["grafana"]["environment"].pop("GF_SERVER_HTTP_ADDR"),
            "grafana runs on the host network listening on all interfaces",
        ),
        ("docker-compose.yaml", lambda d: d["services"]["grafana"].update(depends_on=["prom"]), "depends on 'prom'"),
        (
            "docker-compose.yaml",
            lambda d: d["services"]["prometheus"].update(volumes=["./prom.yml:/etc/prometheus/prometheus.yml"]),
            "mounts './prom.yml', which is not rendered",
        ),
        ("prometheus/prometheus.yml", lambda d: d["scrape_configs"][1].pop("honor_labels"), "lacks honor_labels"),
        ("prometheus/prometheus.yml", lambda d: d["scrape_configs"].pop(2), "no Prometheus job 'trainer'"),
        (
            "prometheus/prometheus.yml",
            lambda d: d["scrape_configs"][0].update(metrics_path="/metrics"),
            "job tfserving reads /metrics",
        ),
        (
            "prometheus/prometheus.yml",
            lambda d: d["scrape_configs"][0]["static_configs"][0].update(targets=["tfserving:8501"]),
            "scrapes tfserving:8501, where no service listens",
        ),
        (
            "grafana/provisioning/datasources/prometheus.yaml",
            lambda d: d["datasources"][0].update(url="http://prometheus:9090"),
            "is not where Prometheus listens",
        ),
    ],
)
def test_reference_check_catches_a_broken_stack(files, path, change, message):
    found = problems(_mutated(copy.deepcopy(files), path, change))
    assert any(message in problem for problem in found), found
