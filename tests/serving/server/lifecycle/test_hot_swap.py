"""A new version swapped in under concurrent load loses no request."""

from __future__ import annotations

import threading
import time

import pytest
from serving_helpers import MODEL, http, logit, push

from serving import config as cfg

X = [1.0, 2.0, 3.0]
THREADS = 8


def _load(server, stop: threading.Event, results: list, errors: list) -> None:
    while not stop.is_set():
        try:
            status, body = http(
                server.rest_url,
                "POST",
                f"/v1/models/{MODEL}:predict",
                {"signature_name": "serving_raw", "instances": [X]},
                timeout=10,
            )
        except OSError as err:
            errors.append(repr(err))
            continue
        if status != 200:
            errors.append((status, body))
        else:
            results.append((time.monotonic(), body["predictions"][0]["logit"]))


def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


@pytest.mark.parametrize("batching", [False, True], ids=["unbatched", "batched"])
def test_version_swap_under_load_loses_no_request(make_server, model_dir, exports, batching):
    params = cfg.batching_parameters(max_batch_size=8, batch_timeout_micros=2000, num_batch_threads=2)
    server = make_server(model_dir, policy=cfg.latest_policy(1), batching=params if batching else None)
    stop, results, errors = threading.Event(), [], []
    threads = [threading.Thread(target=_load, args=(server, stop, results, errors)) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    try:
        _wait(lambda: len(results) > 50, 20, "traffic on version 1")
        push(model_dir, 2, exports[2])  # the poller loads 2, then unloads 1
        _wait(
            lambda: (
                [s["state"] for s in http(server.rest_url, "GET", f"/v1/models/{MODEL}")[1]["model_version_status"]]
                == ["AVAILABLE", "END"]
            ),
            30,
            "version 1 to be unloaded",
        )
        swapped_at = time.monotonic()
        count = len(results)
        _wait(lambda: len(results) > count + 50, 20, "traffic on version 2")
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    assert errors == []
    served = {round(value, 4) for _, value in results}
    assert served == {round(logit(1, X), 4), round(logit(2, X), 4)}
    assert all(value == pytest.approx(logit(2, X), rel=1e-6) for at, value in results if at > swapped_at + 0.1)
