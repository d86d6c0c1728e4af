"""TF Serving's warmup rules (`assets.extra/tf_serving_warmup_requests`), over the wire.

Translated from tensorflow/serving's `servables/tensorflow/saved_model_warmup_util_test.cc`
(RunSavedModelWarmupUntrackedTest) and `saved_model_warmup_test.cc`
(SavedModelBundleWarmupTest). Each case is a copy of TF Serving's
`saved_model_half_plus_two_cpu/00000123` with its own warmup file, all served by
one embedded server; what is asserted is the version's state in
GetModelStatus (REST) and its error: AVAILABLE when TF Serving's warmup
succeeds, END when it fails, with TF Serving's code (DATA_LOSS, INVALID_ARGUMENT,
UNIMPLEMENTED, or the failing request's own) and message first.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import tensorflow as tf
from serving_helpers import http
from tensorflow_serving.apis import prediction_log_pb2
from tfs_contract_helpers import HALF_PLUS_TWO, start_server, tfs_testdata

from serving import config as cfg
from serving.errors import ServingError
from serving.savedmodel import CLASSIFY_METHOD, REGRESS_METHOD
from serving.server.lifecycle.versions import State
from serving.warmup_file import MAX_WARMUP_RECORDS, WARMUP_FILE

VERSION = 123


def _with_example(request) -> None:
    request.input.example_list.examples.add().features.feature["x"].float_list.value.append(2.0)


def _predict_log(x=tf.constant([2.0])) -> prediction_log_pb2.PredictionLog:
    log = prediction_log_pb2.PredictionLog()
    log.predict_log.request.inputs["x"].CopyFrom(tf.make_tensor_proto(x))
    return log


def _classify_log() -> prediction_log_pb2.PredictionLog:
    log = prediction_log_pb2.PredictionLog()
    log.classify_log.request.model_spec.signature_name = "classify_x_to_y"
    _with_example(log.classify_log.request)
    return log


def _regress_log() -> prediction_log_pb2.PredictionLog:
    log = prediction_log_pb2.PredictionLog()
    log.regress_log.request.model_spec.signature_name = "regress_x_to_y"
    _with_example(log.regress_log.request)
    return log


def _multi_inference_log() -> prediction_log_pb2.PredictionLog:
    """As TF Serving's PopulateMultiInferenceRequest: tasks of a model named "test_model" (not the
    served name: warmup runs them on the version being loaded)."""
    log = prediction_log_pb2.PredictionLog()
    request = log.multi_inference_log.request
    for signature_name, method_name in [("regress_x_to_y", REGRESS_METHOD), ("classify_x_to_y", CLASSIFY_METHOD)]:
        task = request.tasks.add()
        task.model_spec.name = "test_model"
        task.model_spec.signature_name = signature_name
        task.method_name = method_name
    _with_example(request)
    return log


def _mixed() -> list[bytes]:
    """AddMixedWarmupData: one record of each log type that warmup runs."""
    logs = [_regress_log(), _classify_log(), _predict_log(), _multi_inference_log()]
    return [log.SerializeToString() for log in logs]


def _session_run() -> list[bytes]:
    log = prediction_log_pb2.PredictionLog()
    log.session_run_log.SetInParent()
    return [log.SerializeToString()]


def _predict_streamed() -> list[bytes]:
    log = prediction_log_pb2.PredictionLog()
    log.predict_streamed_log.request.add().inputs["x"].CopyFrom(tf.make_tensor_proto([2.0]))
    return [log.SerializeToString()]


def _write_records(path: Path, records: list[bytes]) -> None:
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record)


# Each case: name -> how to write its warmup file (None: assets.extra/ without the file).
CASES: dict[str, Callable[[Path], None] | None] = {
    "no_warmup_data_file": None,
    "warmup_data_file_empty": lambda path: _write_records(path, []),
    "run_success": lambda path: _write_records(path, _mixed() * 5),
    "log_without_a_type": lambda path: _write_records(path, [b""]),
    "unsupported_file_format": lambda path: path.write_bytes(b"".join(_session_run() * 10)),
    "too_many_warmup_records": lambda path: _write_records(
        path, [_predict_log().SerializeToString()] * (MAX_WARMUP_RECORDS + 1)
    ),
    "unparsable_record": lambda path: _write_records(path, [b"malformed_record"] * 10),
    "run_failure": lambda path: _write_records(path, _mixed() + [_predict_log(tf.constant(["a"])).SerializeToString()]),
    "session_run_log": lambda path: _write_records(path, _session_run() * 10),
    "predict_streamed_log": lambda path: _write_records(path, _predict_streamed() * 10),
}


def _wait_until_settled(server, name: str, timeout: float = 60.0) -> None:
    """Until the version is AVAILABLE or END (its warmup replayed or failed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = server.manager.status(name, VERSION)[0].state
        except ServingError:  # not seen yet
            state = None
        if state in (State.AVAILABLE, State.END):
            return
        time.sleep(0.05)
    pytest.fail(f"{name} version {VERSION} did not finish loading in {timeout}s", pytrace=False)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("tfs_warmup")
    source = tfs_testdata() / HALF_PLUS_TWO / "00000123"
    for name, write in CASES.items():
        version_dir = shutil.copytree(source, root / name / "00000123")
        (version_dir / WARMUP_FILE).parent.mkdir(exist_ok=True)
        if write is not None:
            write(version_dir / WARMUP_FILE)
    server = start_server(root / "config", *(cfg.model_config(name, root / name) for name in CASES))
    for name in CASES:
        _wait_until_settled(server, name)
    yield server
    server.stop()


def _status(server, name: str) -> dict:
    code, body = http(server.rest_url, "GET", f"/v1/models/{name}/versions/{VERSION}")
    assert code == 200, body
    [status] = body["model_version_status"]
    return status


@pytest.mark.parametrize(
    "name",
    ["no_warmup_data_file", "warmup_data_file_empty", "run_success", "log_without_a_type"],
    ids=["NoWarmupDataFile", "WarmupDataFileEmpty", "RunSuccess_MixedWarmupData", "log_type_not_set"],
)
def test_warmup_that_succeeds_leaves_the_version_available(server, name):
    """No file, an empty file, predict/classify/regress/multi_inference records (5 rounds), and a
    record without a log (TF Serving's RunWarmupRequest skips it): the version is AVAILABLE and serves."""
    status = _status(server, name)
    assert (status["state"], status["status"]["error_code"]) == ("AVAILABLE", "OK")
    code, body = http(server.rest_url, "POST", f"/v1/models/{name}:predict", {"instances": [2.0]})
    assert (code, body) == (200, {"predictions": [3.0]})


@pytest.mark.parametrize(
    "name, tf_serving_code, text",
    [
        ("unsupported_file_format", "DATA_LOSS", ". Please verify your warmup data is in TFRecord format"),
        ("too_many_warmup_records", "INVALID_ARGUMENT", "Number of warmup records exceeds the maximum (1000) at "),
        ("unparsable_record", "INVALID_ARGUMENT", "Failed to parse warmup record: "),
        # `log_type_case()` printed as a number: session_run_log is field 5, predict_streamed_log 7.
        ("session_run_log", "UNIMPLEMENTED", "Unsupported log_type for warmup: 5. "),
        ("predict_streamed_log", "UNIMPLEMENTED", "Unsupported log_type for warmup: 7. "),
        ("run_failure", "INVALID_ARGUMENT", "Expects arg[0] to be float but string is provided"),
    ],
    ids=[
        "UnsupportedFileFormat",
        "TooManyWarmupRecords",
        "UnparsableRecord",
        "UnsupportedLogType_SessionRun",
        "UnsupportedLogType_PredictStreamed",
        "RunFailure",
    ],
)
def test_failed_warmup_ends_the_version_with_tf_servings_code(server, name, tf_serving_code, text):
    """The load fails: END with TF Serving's code and words (saved_model_warmup_util.cc's
    `RunSavedModelWarmupUntracked`: InvalidArgumentError, DataLossError; saved_model_warmup.cc's
    `RunWarmupRequest`: UnimplementedError; a failing request's status unchanged)."""
    status = _status(server, name)
    assert (status["state"], status["status"]["error_code"]) == ("END", tf_serving_code)
    assert text in status["status"]["error_message"]
    if name != "unsupported_file_format":  # DATA_LOSS starts with the TFRecord reader's own words
        assert status["status"]["error_message"].startswith(text)  # TF Serving's wording first


def test_failed_run_names_its_record(server):
    """RunFailure: the failing request's own error, then the record that failed (the 5th)."""
    message = _status(server, "run_failure")["status"]["error_message"]
    assert "(warmup record 4 of " in message
