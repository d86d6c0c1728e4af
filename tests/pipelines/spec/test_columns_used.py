"""The columns a spec uses: what ExampleGen writes and `validate` profiles."""

from __future__ import annotations

import dataclasses

from pipelines.spec.data_rules import columns_used
from pipelines.spec.models import (
    DataSpec,
    FeatureSpec,
    LabelSpec,
    PipelineSection,
    PipelineSpec,
    StepSpec,
    TransformSpec,
)


def _spec(**changes) -> PipelineSpec:
    spec = PipelineSpec(
        pipeline=PipelineSection(name="wide"),
        data=DataSpec(path="data.csv"),
        features={"f0": FeatureSpec(), "city": FeatureSpec(transform="vocabulary")},
        label=LabelSpec(name="big_tip", expression="tips > 0.2 * fare"),
    )
    return dataclasses.replace(spec, **changes)


def test_the_features_and_the_label_s_columns():
    assert columns_used(_spec()) == ("city", "f0", "fare", "tips")
    assert columns_used(_spec(label=LabelSpec(name="y", column="species"))) == ("city", "f0", "species")


def test_every_column_when_the_spec_may_read_others_than_it_names():
    assert columns_used(_spec(transform=TransformSpec(module="my_features:extra"))) is None
    # A TFX preprocessing_fn reads whatever columns it likes (TFX's taxi module: all 17).
    assert columns_used(_spec(transform=TransformSpec(module_file="taxi_utils_native_keras.py"))) is None
    assert columns_used(_spec(), schema_path="schema.pbtxt") is None
    step = StepSpec(name="Drop", uses="row_filter", inputs={"examples": "ExampleGen.examples"})
    assert columns_used(_spec(steps=[step])) is None


def test_label_missing_drop_keeps_only_the_used_columns():
    # `label.missing: drop` adds a step reading ExampleGen.examples, but it reads only the label column.
    from pipelines.spec.label_missing import with_drop_step

    spec = with_drop_step(_spec(label=LabelSpec(name="y", column="species", missing="drop")))
    assert [step.name for step in spec.steps] == ["DropMissingLabels"]
    assert columns_used(spec) == ("city", "f0", "species")
