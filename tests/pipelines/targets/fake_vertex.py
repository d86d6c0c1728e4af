"""A stand-in Vertex AI API (REST, v1) and Cloud Storage JSON API on 127.0.0.1: what `PipelineJob.submit` calls.

No Google Cloud project is reachable here. google-cloud-aiplatform, pointed at this server with
`aiplatform.init(api_endpoint=URL, api_transport="rest")`, sends:

- `POST /v1/projects/P/locations/R/pipelineJobs?pipelineJobId=ID` (`PipelineJob.submit`): answered with the
  PipelineJob, its resource name, `PIPELINE_STATE_PENDING` and a create time, as the API does;
- `POST /v1/projects/P/locations/R/schedules` (`PipelineJob.create_schedule`): answered with the Schedule,
  its resource name and `ACTIVE`;
- the Cloud Storage JSON API (google-cloud-storage, via `STORAGE_EMULATOR_HOST`) for the pipeline root's
  bucket check `submit` makes first: `GET /storage/v1/b/BUCKET` (buckets in `buckets` exist, others are 404);
  for a missing one, `POST /storage/v1/b?project=P` creates it and `GET`/`PUT /storage/v1/b/BUCKET/iam`
  grant the run's service account access.

Every request is recorded (method, path, query, parsed JSON body). Errors are Google's JSON error
(`{"error": {"code", "message", "status"}}`); `refuse` makes the next pipelineJobs/schedules POST fail so.
"""

from __future__ import annotations

import datetime
import itertools
import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

API = "/v1/projects/"


class FakeVertex:
    """Start with `with FakeVertex() as vertex:`; `vertex.url` is the endpoint, `vertex.requests` what it got.

    Args:
        buckets: the Cloud Storage buckets that exist.
        refuse: `(http_code, status, message)` to answer every create with, as the API refuses one.
    """

    def __init__(self, buckets: tuple[str, ...] = (), refuse: tuple[int, str, str] | None = None) -> None:
        self.requests: list[dict] = []
        self.buckets = set(buckets)
        self.refuse = refuse
        self._ids = itertools.count(1001)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeVertex:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def posted(self, collection: str) -> list[dict]:
        """The JSON bodies POSTed to `.../locations/R/<collection>`, in order."""
        return [r["body"] for r in self.requests if r["method"] == "POST" and r["path"].endswith(f"/{collection}")]

    def _answer(self, method: str, path: str, body: dict | None) -> tuple[int, dict]:
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        if path.startswith("/storage/v1/b"):
            return self._storage(method, path, body)
        if not path.startswith(API) or method != "POST":
            return 404, _error(404, "NOT_FOUND", f"no such method: {method} {path}")
        parent, _, collection = path[len("/v1/") :].rpartition("/")
        if collection not in ("pipelineJobs", "schedules") or body is None:
            return 404, _error(404, "NOT_FOUND", f"no such method: {method} {path}")
        if self.refuse:
            code, status, message = self.refuse
            return code, _error(code, status, message)
        answer = dict(body, createTime=now, updateTime=now)
        if collection == "pipelineJobs":
            job_id = self.requests[-1]["query"].get("pipelineJobId", [str(next(self._ids))])[0]
            answer.update(name=f"{parent}/pipelineJobs/{job_id}", state="PIPELINE_STATE_PENDING")
        else:
            answer.update(name=f"{parent}/schedules/{next(self._ids)}", state="ACTIVE", nextRunTime=now)
        return 200, answer

    def _storage(self, method: str, path: str, body: dict | None) -> tuple[int, dict]:
        bucket, _, sub = urllib.parse.unquote(path[len("/storage/v1/b") :]).strip("/").partition("/")
        if method == "POST" and not bucket and body:
            self.buckets.add(body["name"])
            return 200, dict(body, kind="storage#bucket", id=body["name"], projectNumber="123456789")
        if bucket not in self.buckets:
            return 404, _error(404, "NOT_FOUND", f"The specified bucket does not exist: {bucket}")
        if sub == "iam":
            policy = {"kind": "storage#policy", "resourceId": f"projects/_/buckets/{bucket}", "version": 1}
            return 200, dict(policy, etag="CAE=", bindings=[]) if method == "GET" else dict(body or {}, etag="CAI=")
        if method == "GET" and not sub:
            return 200, {"kind": "storage#bucket", "id": bucket, "name": bucket, "projectNumber": "123456789"}
        return 404, _error(404, "NOT_FOUND", f"no such method: {method} {path}")

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _serve(self, method: str) -> None:
                parsed = urllib.parse.urlparse(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                fake.requests.append(
                    {"method": method, "path": parsed.path, "query": urllib.parse.parse_qs(parsed.query), "body": body}
                )
                code, answer = fake._answer(method, parsed.path, body)
                data = json.dumps(answer).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json; charset=UTF-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):  # noqa: N802 - http.server's API
                self._serve("GET")

            def do_POST(self):  # noqa: N802
                self._serve("POST")

            def do_PUT(self):  # noqa: N802
                self._serve("PUT")

        return Handler


def _error(code: int, status: str, message: str) -> dict:
    return {"error": {"code": code, "message": message, "status": status}}
