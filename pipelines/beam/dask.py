"""`orchestrator.beam: {runner: dask, address: HOST:PORT}`: Beam-powered components on a dask.distributed cluster.

Each Beam-powered component sends its Beam pipeline to the Dask scheduler at
`address` through Beam's DaskRunner (with the fixes in
`compat.beam.dask_runner`); the scheduler's workers run it. All of
this project's Beam-powered components run there (ExampleGen, StatisticsGen,
Transform, Evaluator; docs/orchestrators.md, "Dask"). Start a cluster on this machine with

    dask scheduler --host 127.0.0.1 --port 8786
    dask worker 127.0.0.1:8786 --nthreads 1     # one per core, in the environment the pipeline runs in

The scheduler and the workers unpickle this project's DoFns, so they need this
project installed (`pip install -e .`) or on their `PYTHONPATH`.

Example:
    >>> from pipelines.spec.orchestrator import BeamRunnerSpec, OrchestratorSpec
    >>> component_beam_args(OrchestratorSpec(beam=BeamRunnerSpec(runner="dask", address="127.0.0.1:8786")))[:2]
    ('--runner=compat.beam.dask_runner.AllSinksDaskRunner', '--dask_client_address=127.0.0.1:8786')
"""

from __future__ import annotations

import socket

from pipelines.beam.args import setup_file_arg
from pipelines.spec.orchestrator import OrchestratorSpec

__all__ = [
    "RUNNER",
    "DaskUnavailable",
    "component_beam_args",
    "check_scheduler",
    "check_scheduler_of",
]

RUNNER = "compat.beam.dask_runner.AllSinksDaskRunner"
_INSTALL = "pip install dask distributed"


class DaskUnavailable(RuntimeError):
    """The Dask scheduler of `orchestrator.beam.address` cannot run the components' Beam pipelines."""


def component_beam_args(orchestrator: OrchestratorSpec) -> tuple[str, ...]:
    """The Beam arguments every Beam-powered component gets for `orchestrator.beam`.

    Args:
      orchestrator: a checked orchestrator section with `beam` set.

    Returns:
      DaskRunner flags for the scheduler at `beam.address`, this project's `--setup_file`
      (which stops TFX from packaging itself for every Beam step), then the declared
      `beam_args` (for example `--dask_npartitions=8`).
    """
    assert orchestrator.beam is not None and orchestrator.beam.runner == "dask"
    setup_file = setup_file_arg()
    return (
        f"--runner={RUNNER}",
        f"--dask_client_address={orchestrator.beam.address}",
        *setup_file,
        *(orchestrator.beam_args or ()),
    )


def check_scheduler(address: str, timeout: float = 10.0) -> int:
    """Asks the Dask scheduler at `address` for its workers; returns how many there are.

    Raises:
      DaskUnavailable: dask is not installed, no scheduler answers at `address`, or it has no workers.
    """
    try:
        import distributed
    except ImportError as error:
        raise DaskUnavailable(
            f"`orchestrator.beam: {{runner: dask}}` needs dask.distributed. Expected it installed. "
            f"Received: {error}. Install it with `{_INSTALL}`."
        ) from None
    try:
        host, _, port = address.rpartition(":")
        if port.isdigit():  # a refused TCP connection fails here at once; dask's Client retries until `timeout`
            socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
        with distributed.Client(address, timeout=timeout, set_as_default=False) as client:
            workers = len(client.nthreads())
    except (OSError, TimeoutError) as error:
        raise DaskUnavailable(
            f"no Dask scheduler answers at {address} (orchestrator.beam.address). Expected a running "
            f"`dask scheduler`. Received: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}. "
            f"Start one with `dask scheduler --host HOST --port PORT` and workers with `dask worker {address}`, "
            "or fix `address`."
        ) from None
    if not workers:
        raise DaskUnavailable(
            f"the Dask scheduler at {address} has no workers. Expected at least one. Received: 0 workers. "
            f"Start them with `dask worker {address} --nthreads 1`."
        )
    return workers


def check_scheduler_of(orchestrator) -> None:
    """With `orchestrator.beam: {runner: dask}`, checks its scheduler (`check_scheduler`); else nothing.

    Called where a pipeline is about to run (the local runner, the Beam target, an Airflow task), never
    where one is only compiled: compiling a spec contacts no cluster.

    Raises:
      DaskUnavailable: as `check_scheduler`.
    """
    if orchestrator.beam is not None:
        check_scheduler(orchestrator.beam.address)
