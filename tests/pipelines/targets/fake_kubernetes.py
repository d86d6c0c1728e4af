"""A real HTTP server on 127.0.0.1 speaking the bits of the Kubernetes API a TFJob launcher uses.

- `POST /apis/kubeflow.org/v1/namespaces/NS/tfjobs` stores the TFJob (201).
- `GET  .../tfjobs?watch=true&fieldSelector=metadata.name=NAME` streams watch
  events, one JSON object a line, playing the training operator: the job's
  status moves through `statuses` and the stream ends.
- `GET  .../tfjobs/NAME` returns the stored object (404 when unknown).
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PREFIX = "/apis/kubeflow.org/v1/namespaces/"


class FakeKubernetes:
    def __init__(self, statuses: list[dict], event_gap: float = 0.05):
        self.statuses = statuses
        self.event_gap = event_gap
        self.jobs: dict[tuple[str, str], dict] = {}
        self.requests: list[tuple[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _send(self, code: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _parts(self):
                parsed = urllib.parse.urlparse(self.path)
                if not parsed.path.startswith(PREFIX):
                    return None
                parts = parsed.path[len(PREFIX) :].split("/")  # NS, tfjobs[, NAME]
                return parts, urllib.parse.parse_qs(parsed.query)

            def do_POST(self):  # noqa: N802 - http.server's API
                server.requests.append(("POST", self.path))
                parsed = self._parts()
                if not parsed or parsed[0][1:] != ["tfjobs"]:
                    return self._send(404, {"kind": "Status", "code": 404})
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                key = (parsed[0][0], body["metadata"]["name"])
                if key in server.jobs:
                    return self._send(409, {"kind": "Status", "code": 409, "reason": "AlreadyExists"})
                server.jobs[key] = body
                self._send(201, body)

            def do_GET(self):  # noqa: N802
                server.requests.append(("GET", self.path))
                parsed = self._parts()
                if not parsed:
                    return self._send(404, {"kind": "Status", "code": 404})
                parts, query = parsed
                if len(parts) == 3:
                    job = server.jobs.get((parts[0], parts[2]))
                    return self._send(200, job) if job else self._send(404, {"kind": "Status", "code": 404})
                if query.get("watch", [""])[0].lower() != "true":
                    return self._send(200, {"items": [j for (ns, _), j in server.jobs.items() if ns == parts[0]]})
                name = query["fieldSelector"][0].split("=", 1)[1]
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Connection", "close")
                self.end_headers()
                job = server.jobs[(parts[0], name)]
                for index, status in enumerate(server.statuses):
                    job["status"] = status
                    event = {"type": "ADDED" if index == 0 else "MODIFIED", "object": job}
                    self.wfile.write((json.dumps(event) + "\n").encode())
                    self.wfile.flush()
                    time.sleep(server.event_gap)
                self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> FakeKubernetes:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def api_client(self):
        from kubernetes import client

        configuration = client.Configuration()
        configuration.host = self.url
        return client.ApiClient(configuration)

    def kubeconfig(self) -> dict:
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "users": [{"name": "fake", "user": {"token": "fake-token"}}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}],
            "current-context": "fake",
        }


def condition(kind: str, message: str = "") -> dict:
    return {"type": kind, "status": "True", "reason": f"TFJob{kind}", "message": message}


SUCCEEDING = [
    {},
    {"conditions": [condition("Created", "TFJob is created.")]},
    {
        "conditions": [condition("Created"), condition("Running", "TFJob is running.")],
        "replicaStatuses": {"Chief": {"active": 1}, "Worker": {"active": 2}},
    },
    {
        "conditions": [
            condition("Created"),
            condition("Running"),
            condition("Succeeded", "TFJob successfully completed."),
        ],
        "replicaStatuses": {"Chief": {"succeeded": 1}, "Worker": {"succeeded": 2}},
    },
]
FAILING = [
    {},
    {"conditions": [condition("Created")], "replicaStatuses": {"Chief": {"active": 1}}},
    {
        "conditions": [
            condition("Created"),
            condition("Failed", "TFJob has failed because 1 Worker replica(s) failed."),
        ],
        "replicaStatuses": {"Chief": {"active": 1}, "Worker": {"failed": 1}},
    },
]
