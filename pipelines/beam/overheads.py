"""Per-call overheads of Beam's in-process SDK worker, removed for the runs of this process.

The components' Beam pipelines run in this process (the local target, and
the beam target for small data), so the SDK worker's bookkeeping is paid by
the run: `compat.beam.state_cache` (weighing cached values) and
`compat.beam.dofn_specs` (the state-and-timer check of each DoFn) say what
each one saves and why the answers stay Beam's.
"""

from __future__ import annotations

from compat.beam import dofn_specs, state_cache

__all__ = ["install"]


def install() -> dict[str, bool]:
    """Installs both in this process; returns which ones this Beam allowed."""
    return {"state cache": state_cache.install(), "DoFn specs": dofn_specs.install()}
