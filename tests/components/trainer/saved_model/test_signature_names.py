"""Any column name as a SignatureDef input key: tensor names are derived, keys are the column names."""

from __future__ import annotations

import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

from components.common.names import tensor_name, tensor_names
from components.trainer.saved_model.signature_names import rename_signature_inputs

COLUMNS = ["mean radius", "température.2", "2nd, try", "a b", "a_b", "fare"]
_TF_NAME = r"[A-Za-z0-9.][A-Za-z0-9_.\-/>]*"


@pytest.mark.parametrize("column", COLUMNS)
def test_tensor_name_is_a_valid_op_and_python_name(column):
    name = tensor_name(column)
    assert name.isidentifier() and name.isascii(), name
    tf.TensorSpec([None], tf.float32, name=name)  # no warning-and-rename: TF accepts it as is
    assert tensor_name(column) == name  # deterministic


def test_plain_names_are_kept_and_others_never_collide():
    assert tensor_name("fare") == "fare" and tensor_name("a_b") == "a_b"
    assert len(set(tensor_names(COLUMNS))) == len(COLUMNS)
    assert tensor_name("a b") != tensor_name("a_b")


def test_empty_column_name_is_refused_with_the_fix():
    with pytest.raises(ValueError, match="a column name is empty.*Name it in the header line"):
        tensor_name("")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    export_dir = str(tmp_path_factory.mktemp("sm"))
    specs = [tf.TensorSpec([None], tf.float32, name=tensor_name(c)) for c in COLUMNS]

    @tf.function(input_signature=specs)
    def serve(*tensors):
        return {"total": tf.add_n(list(tensors))}

    tf.saved_model.save(tf.Module(), export_dir, signatures={"serving_raw": serve})
    renamed = rename_signature_inputs(export_dir, "serving_raw", {tensor_name(c): c for c in COLUMNS})
    return export_dir, renamed


def test_signature_def_keys_are_the_column_names(saved):
    export_dir, renamed = saved
    assert renamed == 4  # `a_b` and `fare` were plain already
    model = saved_model_pb2.SavedModel()
    with open(f"{export_dir}/saved_model.pb", "rb") as handle:
        model.ParseFromString(handle.read())
    inputs = model.meta_graphs[0].signature_def["serving_raw"].inputs
    assert sorted(inputs) == sorted(COLUMNS)
    assert inputs["mean radius"].name.startswith("serving_raw_mean_radius_")


def test_loaded_signature_still_runs_by_tensor_names(saved):
    export_dir, _ = saved
    loaded = tf.saved_model.load(export_dir)
    args = {tensor_name(c): tf.constant([float(i)]) for i, c in enumerate(COLUMNS)}
    assert loaded.signatures["serving_raw"](**args)["total"].numpy().tolist() == [15.0]


def test_renaming_onto_an_existing_key_is_refused(saved, tmp_path):
    export_dir, _ = saved
    with pytest.raises(ValueError, match="already has an input `fare`.*Rename one of the columns"):
        rename_signature_inputs(export_dir, "serving_raw", {"mean radius": "fare"})
