"""TFX internals this project uses, one module per concern (see `compat` for the policy).

Written for tfx `PINNED`; `tests/compat/test_tfx.py` fails when another version
is installed, so that each entry below is re-read before `PINNED` moves.

- `compat.tfx.beam_dag`: BeamDagRunner's private config helpers and its node DoFn's
  `_node_id` / `_run_node`, for the fused orchestration graph.
- `compat.tfx.resolver`: a Resolver node's strategy and inputs swapped in place (Kubeflow).
- `compat.tfx.airflow`: TFX's `_airflow_component_launcher` and `_resolve_pip_dependencies`.
- `compat.tfx.transform`: the Transform executor's module-level `TransformProcessor`
  swapped, and its `_CreateTFXIO` extended.
- `compat.tfx.executor_stack`: the running executor's `output_dict` and `_context`,
  read from the call stack.
- `compat.tfx.example_gen`: CsvExampleGen's `_ParsedCsvToTfExample` DoFn.
- `compat.tfx.spans`: ExampleGen's `_create_matching_glob_and_regex` and
  `_find_matched_span_version_from_path`, to list every span of a `{SPAN}` pattern.

Importing this package imports no part of TFX; each module imports TFX when imported.
"""

from __future__ import annotations

__all__ = ["PINNED", "DISTRIBUTION"]

DISTRIBUTION = "tfx"
PINNED = "1.16.0"
