"""A real HTTP server on 127.0.0.1 speaking the bits of the Kubernetes API kubeflow-training's TrainingClient uses.

- `POST /apis/kubeflow.org/v1/namespaces/NS/tfjobs` stores the TFJob (201; 409 when it exists,
  `refuse_create` for another Status answer).
- `GET  .../tfjobs/NAME` returns the stored object (404 when unknown), playing the training
  operator: each read moves the job's status one step through `statuses`, then it stays at the last.

Every request is recorded as `{"method", "path", "body"}`; errors are Kubernetes `Status` objects.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PREFIX = "/apis/kubeflow.org/v1/namespaces/"


def _status(code: int, reason: str, message: str) -> dict:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


class FakeKubernetes:
    """Start with `with FakeKubernetes(statuses) as server:`; `server.configuration()` points a client at it.

    Args:
        statuses: the TFJob `status` objects the operator moves through, one per read.
        refuse_create: `(code, reason, message)` to answer every create with.
    """

    def __init__(self, statuses: list[dict], refuse_create: tuple[int, str, str] | None = None):
        self.statuses = statuses
        self.refuse_create = refuse_create
        self.jobs: dict[tuple[str, str], dict] = {}
        self.reads: dict[tuple[str, str], int] = {}
        self.requests: list[dict] = []
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> FakeKubernetes:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def posted(self) -> list[dict]:
        return [r["body"] for r in self.requests if r["method"] == "POST"]

    def _answer(self, method: str, path: str, body: dict | None) -> tuple[int, dict]:
        if not path.startswith(PREFIX):
            return 404, _status(404, "NotFound", f"the server could not find the requested resource ({path})")
        parts = path[len(PREFIX) :].split("/")  # NS, tfjobs[, NAME]
        if method == "POST" and parts[1:] == ["tfjobs"]:
            if self.refuse_create:
                return self.refuse_create[0], _status(*self.refuse_create)
            key = (parts[0], body["metadata"]["name"])
            if key in self.jobs:
                return 409, _status(409, "AlreadyExists", f'tfjobs.kubeflow.org "{key[1]}" already exists')
            self.jobs[key] = body
            return 201, body
        if method == "GET" and len(parts) == 3 and parts[1] == "tfjobs":
            key = (parts[0], parts[2])
            if key not in self.jobs:
                return 404, _status(404, "NotFound", f'tfjobs.kubeflow.org "{parts[2]}" not found')
            step = min(self.reads.get(key, 0), len(self.statuses) - 1)
            self.reads[key] = step + 1
            self.jobs[key]["status"] = self.statuses[step]
            return 200, self.jobs[key]
        return 404, _status(404, "NotFound", f"the server could not find the requested resource ({path})")

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _serve(self, method: str) -> None:
                path = urllib.parse.urlparse(self.path).path
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                fake.requests.append({"method": method, "path": path, "body": body})
                code, answer = fake._answer(method, path, body)
                data = json.dumps(answer).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):  # noqa: N802 - http.server's API
                self._serve("GET")

            def do_POST(self):  # noqa: N802
                self._serve("POST")

        return Handler

    def configuration(self):
        """A `kubernetes.client.Configuration` for this server (what TrainingClient takes)."""
        from kubernetes import client

        configuration = client.Configuration()
        configuration.host = self.url
        return configuration

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
