"""A stand-in Kubeflow Pipelines API server on 127.0.0.1: the v2beta1 REST endpoints `kfp.Client` calls.

No KFP cluster runs here. This server records every request (method, path, query, JSON body or
multipart upload) and answers as the KFP API does (ids added to the posted object; errors as
`{"error", "code", "message"}`), so tests can parse what was sent with kfp_server_api's models.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PREFIX = "/apis/v2beta1"


def as_kfp_model(data: dict, model: str):
    """Deserializes `data` into a kfp_server_api model (`V2beta1Run`, ...), as the KFP client reads API bodies."""
    import kfp_server_api

    class Response:
        def __init__(self, payload):
            self.data = json.dumps(payload)

    return kfp_server_api.ApiClient().deserialize(Response(data), model)


class FakeKfp:
    """Start with `with FakeKfp() as kfp:`; `kfp.url` is the host, `kfp.requests` what it received."""

    def __init__(self, healthz_status: int = 200) -> None:
        self.requests: list[dict] = []
        self.experiments: list[dict] = []
        self.pipelines: list[dict] = []
        self.healthz_status = healthz_status
        self._ids = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeKfp:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def calls(self) -> list[tuple[str, str]]:
        return [(r["method"], r["path"]) for r in self.requests]

    def _new_id(self, kind: str) -> str:
        return f"{kind}-{next(self._ids)}"

    def _answer(self, method: str, path: str, query: dict, body) -> tuple[int, dict]:
        if path == f"{PREFIX}/healthz" and method == "GET":
            if self.healthz_status != 200:
                return self.healthz_status, {"error": "not found", "code": 5, "message": "not found"}
            return 200, {"commit_sha": "stand-in", "tag_name": "2.5.0", "multi_user": False}
        if path == f"{PREFIX}/experiments" and method == "GET":
            wanted = _filtered_name(query)
            found = [e for e in self.experiments if wanted is None or e["display_name"] == wanted]
            return 200, {"experiments": found, "total_size": len(found)} if found else {}
        if path == f"{PREFIX}/experiments" and method == "POST":
            experiment = dict(body, experiment_id=self._new_id("experiment"), storage_state="AVAILABLE")
            self.experiments.append(experiment)
            return 200, experiment
        if path == f"{PREFIX}/pipelines" and method == "GET":
            wanted = _filtered_name(query)
            found = [p for p in self.pipelines if wanted is None or p["display_name"] == wanted]
            return 200, {"pipelines": found, "total_size": len(found)} if found else {}
        if path == f"{PREFIX}/pipelines/upload" and method == "POST":
            pipeline = {"pipeline_id": self._new_id("pipeline"), "display_name": query["name"][0]}
            self.pipelines.append(pipeline)
            return 200, pipeline
        if path == f"{PREFIX}/pipelines/upload_version" and method == "POST":
            return 200, {
                "pipeline_id": query["pipelineid"][0],
                "pipeline_version_id": self._new_id("version"),
                "display_name": query["name"][0],
            }
        if path == f"{PREFIX}/runs" and method == "POST":
            return 200, dict(body, run_id=self._new_id("run"), state="PENDING")
        if path == f"{PREFIX}/recurringruns" and method == "POST":
            return 200, dict(body, recurring_run_id=self._new_id("recurring"), status="ENABLED")
        return 404, {"error": f"no route {method} {path}", "code": 5, "message": f"no route {method} {path}"}

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def _serve(self, method: str) -> None:
                parsed = urllib.parse.urlsplit(self.path)
                query = urllib.parse.parse_qs(parsed.query)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                content_type = self.headers.get("Content-Type", "")
                record = {"method": method, "path": parsed.path, "query": query, "headers": dict(self.headers)}
                body = None
                if content_type.startswith("multipart/form-data"):
                    record["files"] = _multipart_files(content_type, raw)
                elif raw:
                    body = json.loads(raw)
                    record["body"] = body
                fake.requests.append(record)
                status, answer = fake._answer(method, parsed.path, query, body)
                payload = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self):  # noqa: N802 - http.server's API
                self._serve("GET")

            def do_POST(self):  # noqa: N802
                self._serve("POST")

        return Handler


def _filtered_name(query: dict) -> str | None:
    if "filter" not in query:
        return None
    predicates = json.loads(query["filter"][0]).get("predicates", [])
    names = [
        p.get("stringValue") or p.get("string_value") for p in predicates if p.get("key") in ("display_name", "name")
    ]
    return names[0] if names else None


def _multipart_files(content_type: str, raw: bytes) -> dict[str, bytes]:
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw
    )
    return {
        part.get_param("name", header="content-disposition"): part.get_payload(decode=True)
        for part in message.iter_parts()
    }
