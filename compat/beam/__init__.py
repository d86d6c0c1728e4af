"""Apache Beam internals this project uses, one module per concern (see `compat` for the policy).

Written for apache-beam `PINNED`; `tests/compat/test_beam.py` fails when another
version is installed, so that each entry below is re-read before `PINNED` moves.

- `compat.beam.dofn_specs`: `userstate.get_dofn_specs` replaced by a per-class cache.
- `compat.beam.state_cache`: `statecache.get_deep_size` replaced by a weigh without the module walk
  (reads `statecache._size_func`, `_get_referents_func`, `_filter_func`).
- `compat.beam.runners`: the FnApiRunner's subprocess worker command rewritten, and
  `StandardOptions.DEFAULT_RUNNER` set for a block.
- `compat.beam.dask_runner`: a fork of Beam's Dask translation (`_OutputHandler`, `_Read`,
  `DaskOptions._extract_bag_kwargs`, a side input's `_view_options`), the defects of which
  `compat/beam_dask.patch` fixes upstream.

Importing this package imports no part of Beam.
"""

from __future__ import annotations

__all__ = ["PINNED", "DISTRIBUTION"]

DISTRIBUTION = "apache-beam"
PINNED = "2.74.0"
