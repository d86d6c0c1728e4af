"""The baseline resolver leaves the candidate model out."""

from __future__ import annotations

from tfx.types import standard_artifacts

from components.resolver.baseline import LatestBlessedBaselineStrategy


def _model(artifact_id: int):
    model = standard_artifacts.Model()
    model.id = artifact_id
    return model


def _blessing(model_id: int, blessed: bool):
    blessing = standard_artifacts.ModelBlessing()
    blessing.id = 100 + model_id
    blessing.set_int_custom_property("current_model_id", model_id)
    blessing.set_int_custom_property("blessed", int(blessed))
    return blessing


def _resolve(models, blessings, candidates):
    result = LatestBlessedBaselineStrategy().resolve_artifacts(
        None, {"model": models, "model_blessing": blessings, "candidate": candidates}
    )
    return [a.id for a in result["model"]], [a.id for a in result["model_blessing"]]


def test_latest_blessed_model_is_the_baseline():
    models = [_model(1), _model(2), _model(3)]
    blessings = [_blessing(1, True), _blessing(2, True), _blessing(3, False)]
    assert _resolve(models, blessings, [_model(4)]) == ([2], [102])


def test_the_candidate_is_never_its_own_baseline():
    models = [_model(1), _model(2)]
    blessings = [_blessing(1, True), _blessing(2, True)]
    assert _resolve(models, blessings, [_model(2)]) == ([1], [101])


def test_no_blessed_model_means_no_baseline():
    assert _resolve([_model(1)], [_blessing(1, False)], [_model(2)]) == ([], [])
    assert _resolve([_model(1)], [_blessing(1, True)], [_model(1)]) == ([], [])
