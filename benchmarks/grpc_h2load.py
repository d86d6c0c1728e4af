"""gRPC load from h2load, nghttp2's HTTP/2 load generator, written in C.

A Python gRPC client costs 130-250 us of CPU per call; on a machine whose few
CPUs the server shares with its load generator, that cost is taken from the
server. h2load costs a few microseconds per request. gRPC is HTTP/2: a POST to
`/<package>.<Service>/<Method>` with `content-type: application/grpc` and
`te: trailers`, whose body is the message framed as 1 flag byte (0: not
compressed), a 4-byte big-endian length and the serialized message
(https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md). h2load
POSTs one such body over and over.

h2load checks the HTTP status only, and a gRPC server answers HTTP 200 even
when the call fails (the outcome is the `grpc-status` trailer), so
`run_h2load` takes the server's own count of answered calls by status before
and after and raises unless the server answered exactly the requests h2load
sent, all OK.

    from benchmarks.grpc_h2load import run_h2load
    result = run_h2load("127.0.0.1:8500", "/tensorflow.serving.PredictionService/Predict",
                        request.SerializeToString(), concurrency=32, duration=5, counts=server_counts)
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

__all__ = ["H2LOAD", "H2loadError", "H2loadResult", "grpc_frame", "parse_h2load_output", "run_h2load"]

H2LOAD = shutil.which("h2load") or ("/usr/bin/h2load" if Path("/usr/bin/h2load").exists() else None)
GRPC_HEADERS = ("content-type: application/grpc", "te: trailers")
_FINISHED = re.compile(r"^finished in ([\d.]+)(us|ms|s), ([\d.]+) req/s", re.MULTILINE)
_REQUESTS = re.compile(
    r"^requests: (?P<total>\d+) total, (?P<started>\d+) started, (?P<done>\d+) done, "
    r"(?P<succeeded>\d+) succeeded, (?P<failed>\d+) failed, (?P<errored>\d+) errored, (?P<timeout>\d+) timeout",
    re.MULTILINE,
)
_SECONDS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}


class H2loadError(RuntimeError):
    """h2load failed, or the server did not answer every request it sent with OK."""


@dataclasses.dataclass(frozen=True)
class H2loadResult:
    """One h2load run: its counts and rate, and the latency of each request in seconds."""

    seconds: float
    qps: float
    total: int
    succeeded: int
    failed: int
    errored: int
    timeout: int
    latencies: list[float] = dataclasses.field(default_factory=list)


def grpc_frame(message: bytes, *, compressed: bool = False) -> bytes:
    """Frames one serialized message as a gRPC request or response body.

    Args:
        message: The serialized protobuf message.
        compressed: Sets the compressed flag (the message must then be compressed).

    Returns:
        1 flag byte, the length as 4 bytes big-endian, then `message`.

    Raises:
        ValueError: The message is 4 GiB or larger (the length field's limit).
    """
    if len(message) >= 1 << 32:
        raise ValueError(
            f"gRPC message too large to frame: expected under 4 GiB (a 4-byte length), received {len(message)} bytes. "
            "Send a smaller request."
        )
    return bytes([1 if compressed else 0]) + len(message).to_bytes(4, "big") + message


def parse_h2load_output(output: str) -> H2loadResult:
    """Reads the summary h2load prints: the wall time, req/s and the request counts.

    Args:
        output: h2load's standard output.

    Returns:
        The counts and rate (no latencies: those come from its --log-file).

    Raises:
        H2loadError: The summary lines are missing (h2load failed before the load).
    """
    finished, requests = _FINISHED.search(output), _REQUESTS.search(output)
    if finished is None or requests is None:
        raise H2loadError(
            "h2load printed no summary: expected the lines 'finished in ..., N req/s' and 'requests: N total, ...', "
            f"received: {output[-600:]!r}. Run the h2load command by hand to see why."
        )
    counts = {key: int(value) for key, value in requests.groupdict().items()}
    return H2loadResult(
        seconds=float(finished.group(1)) * _SECONDS[finished.group(2)],
        qps=float(finished.group(3)),
        total=counts["total"],
        succeeded=counts["succeeded"],
        failed=counts["failed"],
        errored=counts["errored"],
        timeout=counts["timeout"],
    )


def _latencies(log_file: Path) -> list[float]:
    """Per-request latencies from h2load's --log-file (start us, HTTP status, duration us)."""
    return [int(line.split("\t")[2]) * 1e-6 for line in log_file.read_text().splitlines() if line]


def _settled(counts, quiet_seconds: float = 0.1, limit_seconds: float = 5.0) -> dict:
    """The server's counts once they stop changing for `quiet_seconds` (at most `limit_seconds` of waiting)."""
    last, deadline = dict(counts()), time.monotonic() + limit_seconds
    while time.monotonic() < deadline:
        time.sleep(quiet_seconds)
        now = dict(counts())
        if now == last:
            return now
        last = now
    return last


def _h2load(argv: list[str], timeout: float) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as err:
        raise H2loadError(f"h2load ran past {timeout:.0f} s: {' '.join(argv)}") from err
    if done.returncode != 0:
        raise H2loadError(
            f"h2load exited with status {done.returncode}: expected 0. Command: {' '.join(argv)}; "
            f"output: {(done.stdout + done.stderr)[-600:]!r}"
        )
    return done.stdout


def run_h2load(
    address: str,
    path: str,
    message: bytes,
    *,
    concurrency: int,
    duration: float,
    counts: Callable[[], Mapping[str, int]],
    connections: int = 1,
    warmup: float = 1.0,
    h2load: str | None = None,
) -> H2loadResult:
    """Loads a gRPC method with h2load and proves from the server's counts that every call succeeded.

    A timed warm-up run measures the rate; the measured run then sends a fixed
    number of requests (the rate times `duration`), so that the server's count
    can be compared with h2load's exactly.

    Args:
        address: The server's "host:port" (cleartext HTTP/2).
        path: The method's path, e.g. "/tensorflow.serving.PredictionService/Predict".
        message: The serialized request, sent unchanged with every call.
        concurrency: Calls in flight at any time, spread over `connections`.
        duration: About how long the measured run lasts, in seconds.
        counts: Returns the server's count of answered calls of this method by
            status ("OK", "INVALID_ARGUMENT", ...), cumulative.
        connections: HTTP/2 connections (h2load's -c); each keeps
            `concurrency / connections` streams open (-m).
        warmup: Seconds of the warm-up run; not counted.
        h2load: The h2load binary; the one on PATH by default.

    Returns:
        The measured run's counts, rate and per-request latencies.

    Raises:
        H2loadError: h2load is missing or failed, or the server's counts show a
            call that did not succeed or a different number of calls.
        ValueError: `concurrency` is not a multiple of `connections`.
    """
    binary = h2load or H2LOAD
    if binary is None:
        raise H2loadError("h2load is not installed: expected it on PATH. Install it: apt-get install nghttp2-client")
    if connections < 1 or concurrency % connections:
        raise ValueError(
            f"Invalid h2load connections: expected a divisor of concurrency {concurrency}, received {connections}."
        )
    with tempfile.TemporaryDirectory(prefix="h2load-") as tmp:
        body, log_file = Path(tmp) / "request.bin", Path(tmp) / "requests.tsv"
        body.write_bytes(grpc_frame(message))
        common = [binary, "-c", str(connections), "-m", str(concurrency // connections), "-d", str(body)]
        common += [arg for header in GRPC_HEADERS for arg in ("-H", header)]
        url = f"http://{address}{path}"
        warm = [*common, "-D", f"{max(1, round(warmup * 1000))}ms", url]  # h2load takes whole units
        rate = parse_h2load_output(_h2load(warm, warmup + 60)).qps
        before = _settled(counts)  # a timed run leaves calls in flight that the server answers after it ends
        requests = max(concurrency, round(rate * duration))
        output = _h2load([*common, "-n", str(requests), f"--log-file={log_file}", url], 10 * duration + 60)
        after = dict(counts())
        result = dataclasses.replace(parse_h2load_output(output), latencies=_latencies(log_file))
    answered = {status: after.get(status, 0) - before.get(status, 0) for status in after}
    answered = {status: n for status, n in answered.items() if n}
    if result.succeeded != requests or answered != {"OK": requests}:
        raise H2loadError(
            f"Not every gRPC call to {address}{path} succeeded: expected {requests} calls answered OK, received "
            f"h2load: {result.succeeded} succeeded, {result.failed} failed, {result.errored} errored, "
            f"{result.timeout} timed out; the server's count by status: {answered or 'none'}. Send one request "
            "with a gRPC client to see the error."
        )
    return result
