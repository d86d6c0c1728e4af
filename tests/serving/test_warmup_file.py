"""Warmup files: written from sample rows, replayed by the server on load."""

from __future__ import annotations

import shutil

import pytest
import tensorflow as tf
from serving_helpers import MODEL, example, http, push

from serving import config as cfg
from serving.warmup_file import MAX_WARMUP_RECORDS, read_warmup_file, warmup_path, write_warmup_file

ROWS = [example([1.0, 2.0, 3.0]), example([0.0, 0.0, 1.0])]


@pytest.fixture
def version_dir(tmp_path, exports):
    return shutil.copytree(exports[1], tmp_path / "1")


def test_warmup_file_holds_one_predict_request_per_row(version_dir):
    path = write_warmup_file(version_dir, ROWS, model_name=MODEL)
    assert path == version_dir / "assets.extra" / "tf_serving_warmup_requests"
    logs = read_warmup_file(path)
    assert [log.WhichOneof("log_type") for log in logs] == ["predict_log"] * 2
    request = logs[1].predict_log.request
    assert (request.model_spec.name, request.model_spec.signature_name) == (MODEL, "serving_default")
    assert tf.make_ndarray(request.inputs["examples"]).tolist() == [ROWS[1]]  # alias read from the SignatureDef


@pytest.mark.parametrize(
    ("kwargs", "error", "text"),
    [
        ({"examples": []}, ValueError, "No examples to write"),
        ({"max_records": MAX_WARMUP_RECORDS + 1}, ValueError, "max_records <= 1000"),
        ({"signature_name": "serving_raw"}, ValueError, "exactly one string input"),
        ({"signature_name": "nope"}, KeyError, "Signature 'nope' is not in"),
    ],
)
def test_bad_warmup_arguments(version_dir, kwargs, error, text):
    with pytest.raises(error, match=text):
        write_warmup_file(version_dir, **{"examples": ROWS, **kwargs})


def test_server_replays_warmup_and_fails_the_load_on_a_bad_record(make_server, model_dir, exports):
    server = make_server(model_dir, policy=cfg.latest_policy(1))
    bad = shutil.copytree(exports[2], model_dir.parent / "staging-2")
    write_warmup_file(bad, [b"not an example"], model_name=MODEL)
    push(model_dir, 2, bad)
    server.manager.wait_for(MODEL, 2, 50, timeout=30)  # END
    _, body = http(server.rest_url, "GET", f"/v1/models/{MODEL}/versions/2")
    [status] = body["model_version_status"]
    # The record's own error, as TF Serving returns it: an Example that does not parse is INVALID_ARGUMENT.
    assert status["status"]["error_code"] == "INVALID_ARGUMENT"
    assert "(warmup record 0 of" in status["status"]["error_message"]
    _, body = http(server.rest_url, "GET", f"/v1/models/{MODEL}/versions/1")
    assert body["model_version_status"][0]["state"] == "AVAILABLE"  # version 1 kept serving
    assert warmup_path(model_dir / "2").is_file()
