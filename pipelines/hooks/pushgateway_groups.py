"""Keeps a Pushgateway's per-run groups bounded: the last N runs of a pipeline stay, older ones are deleted.

The Pushgateway keeps every group until it is deleted, and its docs advise
against groups that pile up (one per run) for this reason. The pipeline hook
and the trainer push one group per run (`{job, pipeline, run_id}`); after a
run, `prune_runs` lists the groups through the Pushgateway's API
(`GET /api/v1/metrics`, Pushgateway 1.0 and later), orders a pipeline's runs
by their last push (`push_time_seconds`) and deletes all but the newest
`keep` with prometheus_client's `delete_from_gateway`.

Example:
    >>> prune_runs("http://127.0.0.1:9091", job="yaml_tfx", pipeline="taxi", keep=10)
    ['2026-11-20T10:00:00.000001']
"""

from __future__ import annotations

import json
import urllib.request

from prometheus_client import delete_from_gateway

__all__ = ["run_groups", "prune_runs"]


def _base_url(gateway: str) -> str:
    return gateway.rstrip("/") if "://" in gateway else f"http://{gateway.rstrip('/')}"


def run_groups(gateway: str, job: str, pipeline: str, timeout: float = 5.0) -> list[tuple[str, float]]:
    """The `(run_id, last push time)` of each group of `job` and `pipeline`, newest first.

    Args:
        gateway: the Pushgateway's address (`http://host:9091` or `host:9091`).
        job: the job the groups were pushed under.
        pipeline: the `pipeline` grouping label.
        timeout: seconds to wait for the Pushgateway.

    Returns:
        One pair per group that has a `run_id` label.

    Raises:
        OSError: the Pushgateway did not answer.
        ValueError: the answer is not the Pushgateway API's JSON (an older Pushgateway, or not one).
    """
    url = f"{_base_url(gateway)}/api/v1/metrics"
    with urllib.request.urlopen(url, timeout=timeout) as response:
        body = response.read()
    try:
        groups = json.loads(body)["data"]
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(
            f"{url} did not answer with the Pushgateway API's JSON. Expected {{'data': [groups]}} "
            f"(Pushgateway 1.0 or later). Received: {body[:200]!r}."
        ) from error
    runs = []
    for group in groups:
        labels = group.get("labels", {})
        if labels.get("job") != job or labels.get("pipeline") != pipeline or "run_id" not in labels:
            continue
        pushed = group.get("push_time_seconds", {}).get("metrics") or [{"value": "0"}]
        runs.append((labels["run_id"], float(pushed[0]["value"])))
    return sorted(runs, key=lambda run: run[1], reverse=True)


def prune_runs(gateway: str, job: str, pipeline: str, keep: int, timeout: float = 5.0) -> list[str]:
    """Deletes the groups of `job` and `pipeline` beyond the newest `keep` runs.

    Args:
        gateway: the Pushgateway's address.
        job: the job the groups were pushed under.
        pipeline: the `pipeline` grouping label.
        keep: how many of the newest runs stay (at least 1).
        timeout: seconds to wait for each request.

    Returns:
        The run ids whose groups were deleted, oldest last.

    Raises:
        ValueError: `keep` is below 1, or the Pushgateway's answer is not its API's JSON.
        OSError: the Pushgateway did not answer.
    """
    if keep < 1:
        raise ValueError(f"`keep_runs` must be at least 1. Received: keep_runs={keep}. Use null to keep every run.")
    old = [run_id for run_id, _ in run_groups(gateway, job, pipeline, timeout)[keep:]]
    for run_id in old:
        delete_from_gateway(gateway, job=job, grouping_key={"pipeline": pipeline, "run_id": run_id}, timeout=timeout)
    return old
