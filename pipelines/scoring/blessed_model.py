"""The pipeline's newest blessed model, from the ML Metadata of its root.

A model is blessed when the Evaluator's ModelBlessing for it says
`blessed = 1` (the same test as the Evaluator's baseline resolver). The newest
is the one with the highest artifact id; its SavedModel is TFX's serving
folder under the Model artifact (`<uri>/Format-Serving`), the folder the
Pusher copied.
"""

from __future__ import annotations

import dataclasses
import os

from pipelines.outcome.metadata_file import open_metadata

__all__ = ["BlessedModel", "NoBlessedModel", "newest_blessed_model", "trained_schema_path"]

SERVING_FOLDER = "Format-Serving"  # tfx.utils.path_utils.serving_model_dir's name for a Model artifact
SCHEMA_FILE = "schema.pbtxt"  # SchemaGen's file in its Schema artifact
_INPUT, _OUTPUT = 3, 4  # Event.INPUT, Event.OUTPUT


class NoBlessedModel(RuntimeError):
    """The pipeline root has no blessed model to score with."""


@dataclasses.dataclass(frozen=True)
class BlessedModel:
    """A blessed model: its Model artifact id and its SavedModel folder."""

    model_id: int
    path: str


def newest_blessed_model(metadata_path: str, pipeline_name: str) -> BlessedModel:
    """The blessed model with the highest artifact id.

    Raises:
        NoBlessedModel: the root has never run, or no run blessed a model (the message says which and what to do).
    """
    if not os.path.exists(metadata_path):
        raise NoBlessedModel(
            f"pipeline `{pipeline_name}` has not run yet: {metadata_path} does not exist. Expected a root whose "
            "run blessed a model. Run the pipeline first (`python -m pipelines run SPEC`)."
        )
    store = open_metadata(metadata_path)
    blessed_ids = {
        blessing.custom_properties["current_model_id"].int_value
        for blessing in store.get_artifacts_by_type("ModelBlessing")
        if blessing.custom_properties.get("blessed") is not None
        and blessing.custom_properties["blessed"].int_value == 1
    }
    models = sorted(
        (model for model in store.get_artifacts_by_id(sorted(blessed_ids)) if model.uri), key=lambda m: -m.id
    )
    for model in models:
        path = os.path.join(model.uri, SERVING_FOLDER)
        if os.path.exists(os.path.join(path, "saved_model.pb")):
            return BlessedModel(model.id, path)
    raise NoBlessedModel(
        f"pipeline `{pipeline_name}` has no blessed model in {metadata_path}"
        + (f" whose SavedModel still exists (looked at model ids {[m.id for m in models]})" if models else "")
        + ". Expected a run whose Evaluator blessed the model. Run the pipeline until a model passes "
        "`evaluation.thresholds` (the run summary says why one did not)."
    )


def trained_schema_path(metadata_path: str, model_id: int) -> str | None:
    """The `schema.pbtxt` the Trainer that wrote model `model_id` was given (its `schema` input), or None.

    The schema's feature types are how ExampleGen typed the columns the model was trained on: what a model
    without a `serving_raw` signature (a `training.module_file` model) says about its raw inputs.
    """
    store = open_metadata(metadata_path)
    producers = [e.execution_id for e in store.get_events_by_artifact_ids([model_id]) if e.type == _OUTPUT]
    events = store.get_events_by_execution_ids(producers) if producers else []
    inputs = [e.artifact_id for e in events if e.type == _INPUT and e.path.steps and e.path.steps[0].key == "schema"]
    for schema in store.get_artifacts_by_id(inputs) if inputs else []:
        path = os.path.join(schema.uri, SCHEMA_FILE)
        if os.path.isfile(path):
            return path
    return None
