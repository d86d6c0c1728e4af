"""Every use of a library's private names, and every monkeypatch, in one place.

The project uses TFX, Beam, TFMA, tf.Transform, tfx_bsl, Keras, TensorFlow and
grpcio through their public APIs. Where only a private name will do (a speed-up
the public API cannot give, a defect of the library), it lives here, one module
per library (`compat.tfx`, `compat.beam`, ...), and nowhere else: ruff's SLF001
rule is on everywhere outside this package and the tests.

Each entry in a library's module says:
- what it changes or reads, and why the public API does not do;
- the version it was written for (the module's `PINNED`, the version in
  requirements.lock);
- a shape check (`compat.check_shape`) made before the private name is used: when
  the library no longer has the expected shape, the entry falls back to the
  library's own behaviour and logs one line saying so;
- a test in `tests/compat/` that fails when the installed version is not
  `PINNED` (so an upgrade makes someone re-read each entry) and that checks the
  shape on the pinned version.

Checks are lazy: importing `compat` imports no library (the up-to-date check runs
before TensorFlow or TFX is imported).

What is here (pinned version; entries):
- `compat.tfx` (tfx 1.16.0): `beam_dag` (BeamDagRunner's node DoFn and helpers),
  `transform` (the TransformProcessor swap, `_CreateTFXIO`), `example_gen`
  (`_ParsedCsvToTfExample`), `spans` (ExampleGen's span/version file matching), `executor_stack` (the running executor's
  `output_dict` and context), `resolver` (the Kubeflow baseline strategy swap),
  `airflow` (pip dependencies, the component launcher).
- `compat.beam` (apache-beam 2.74.0): `dofn_specs`, `state_cache`, `runners`
  (local workers' command, the default runner), `dask_runner` (the DaskRunner
  translation; `compat/beam_dask.patch` is the fix to send upstream).
- `compat.tfx_bsl` (tfx-bsl 1.16.1): a TFExampleRecord reading another source;
  string outputs of a Predict signature in RunInference (the BulkInferrer).
- `compat.tfma` (tensorflow-model-analysis 0.47.1): `fast_combiners`.
- `compat.tensorflow` (tensorflow 2.16.2): session callables without Python's feed
  check, collective keys, deprecation silencing, op registry, AutoGraph rules.
- `compat.keras` (tf-keras 2.16.0): compiled state, layer graph, attention sizes.
- `compat.grpcio` (grpcio 1.85.1): `CallAcceptor`, Predict calls accepted by
  several loops.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from importlib import metadata

__all__ = ["check_shape", "installed_version", "warn_fallback"]

_log = logging.getLogger("compat")
_warned: set[str] = set()


def installed_version(distribution: str) -> str:
    """The installed version of `distribution` (e.g. "tfx"), or "" when it is not installed."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return ""


def warn_fallback(entry: str, reason: str) -> None:
    """Logs once per process that `entry` falls back to the library's own behaviour, and why."""
    if entry in _warned:
        return
    _warned.add(entry)
    _log.warning("compat: %s falls back to the library's own behaviour: %s", entry, reason)


def check_shape(entry: str, check: Callable[[], str | None]) -> bool:
    """Runs `check` (None: the shape is as expected; else what differs); False, after one log line, otherwise.

    Args:
        entry: the compat entry's dotted name, e.g. "compat.beam.cached_dofn_specs".
        check: looks at the private names the entry needs; an exception counts as a differing shape.

    Returns:
        True when the entry may use the private names.
    """
    try:
        problem = check()
    except Exception as error:  # noqa: BLE001 - any failure of the check means "not the shape we know"
        problem = f"{type(error).__name__}: {error}"
    if problem is None:
        return True
    warn_fallback(entry, problem)
    return False
