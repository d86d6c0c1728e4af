"""Reading and patching SignatureDef method names in saved_model.pb."""

from __future__ import annotations

import shutil

import pytest

from serving.savedmodel import CLASSIFY_METHOD, PREDICT_METHOD, read_signature_defs, set_method_names


def test_signature_defs_and_method_names(exports):
    signatures = read_signature_defs(exports[1])
    assert sorted(signatures) == ["classification", "regression", "serving_default", "serving_raw"]
    assert signatures["classification"].method_name == CLASSIFY_METHOD
    assert signatures["serving_raw"].method_name == PREDICT_METHOD
    assert list(signatures["serving_default"].inputs) == ["examples"]


def test_set_method_names_rewrites_saved_model_pb(tmp_path, exports):
    export = shutil.copytree(exports[1], tmp_path / "1")
    set_method_names(export, {"serving_raw": CLASSIFY_METHOD})
    assert read_signature_defs(export)["serving_raw"].method_name == CLASSIFY_METHOD
    assert sorted(p.name for p in export.iterdir() if p.name.startswith(".tmp")) == []


@pytest.mark.parametrize(
    ("mapping", "error", "text"),
    [
        ({"nope": CLASSIFY_METHOD}, KeyError, "Signature 'nope' is not in"),
        ({"serving_raw": "tensorflow/serving/explain"}, ValueError, "Unknown method name"),
    ],
)
def test_set_method_names_rejects_bad_input(tmp_path, exports, mapping, error, text):
    export = shutil.copytree(exports[1], tmp_path / "1")
    with pytest.raises(error, match=text):
        set_method_names(export, mapping)


def test_reading_a_directory_without_a_saved_model(tmp_path):
    with pytest.raises(FileNotFoundError, match="No saved_model.pb in"):
        read_signature_defs(tmp_path)
