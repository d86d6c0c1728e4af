"""Per-call overheads of Beam's in-process SDK worker, removed for the runs of this process.

The components' Beam pipelines run in this process (the local target, and
the beam target for small data), so the SDK worker's bookkeeping is paid by
the run: `beam_state_cache` (weighing cached values) and `beam_dofn_specs`
(the state-and-timer check of each DoFn) say what each one saves and why the
answers stay Beam's.
"""

from __future__ import annotations

from pipelines.runners import beam_dofn_specs, beam_state_cache

__all__ = ["install"]


def install() -> dict[str, bool]:
    """Installs both in this process; returns which ones this Beam allowed."""
    return {"state cache": beam_state_cache.install(), "DoFn specs": beam_dofn_specs.install()}
