"""Replays a version's warmup file before the version becomes AVAILABLE.

As TensorFlow Serving's `RunSavedModelWarmup`: records are read and run one at
a time; predict, classify, regress and multi_inference logs run as those
requests would (inputs and outputs checked); a record without a log is
skipped; session_run and predict_streamed logs are "Unsupported log_type for
warmup". The first failure fails the load with TensorFlow Serving's code and
wording first (`RunSavedModelWarmup`, servables/tensorflow/saved_model_warmup_util.cc
and saved_model_warmup.cc): DATA_LOSS for a file that is not TFRecord,
INVALID_ARGUMENT for a record that is not a PredictionLog or more than 1,000
records, UNIMPLEMENTED for an unsupported log type, and a failing request's own
code; the version's status is END with that error, as TF Serving reports it. The file itself is
written and read by `serving.warmup_file`.
"""

from __future__ import annotations

import grpc
from tensorflow_serving.apis import inference_pb2, prediction_log_pb2

from serving.errors import ServingError, Unimplemented, message
from serving.server.inference import methods as inference
from serving.server.inference.multi_inference import check_tasks, fill_result, task_signatures
from serving.server.model.servable import Servable
from serving.server.wire.examples import examples_from_input
from serving.server.wire.tensor_protos import proto_inputs
from serving.warmup_file import WarmupFileError, iter_warmup_records, warmup_path

__all__ = ["replay_warmup"]

_UNSUPPORTED = ("session_run_log", "predict_streamed_log")


class _Unsupported(Exception):
    """A record of a log type TensorFlow Serving does not replay."""


def _predict(servable: Servable, request) -> None:
    signature = inference.predict_signature(servable, request.model_spec.signature_name)
    inputs = inference.checked_inputs(
        signature,
        lambda sig: proto_inputs(request.inputs, sig, servable.name),
        list(request.output_filter),
        servable.name,
    )
    signature.run(inputs)


def _classify(servable: Servable, request) -> None:
    signature = inference.classify_signature(servable, request.model_spec.signature_name)
    examples = examples_from_input(request.input)
    inference.classification_results(signature.run({inference.EXAMPLES_INPUT: examples}), len(examples))


def _regress(servable: Servable, request) -> None:
    signature = inference.regress_signature(servable, request.model_spec.signature_name)
    examples = examples_from_input(request.input)
    inference.regression_results(signature.run({inference.EXAMPLES_INPUT: examples}), len(examples))


def _multi_inference(servable: Servable, request) -> None:
    # The tasks' model name need not be the servable's: TensorFlow Serving's warmup runs them on this version.
    check_tasks(request)
    signatures = task_signatures(servable, request)
    examples = examples_from_input(request.input)
    for task, signature in zip(request.tasks, signatures):
        outputs = signature.run({inference.EXAMPLES_INPUT: examples})
        fill_result(inference_pb2.InferenceResult(), task, servable.version, outputs, len(examples))


_REPLAY = {
    "predict_log": _predict,
    "classify_log": _classify,
    "regress_log": _regress,
    "multi_inference_log": _multi_inference,
}


def _replay_one(servable: Servable, log: prediction_log_pb2.PredictionLog) -> None:
    kind = log.WhichOneof("log_type")
    if kind in _UNSUPPORTED:
        raise _Unsupported(kind)
    if kind is not None:  # a record without a log is skipped, as in TensorFlow Serving
        _REPLAY[kind](servable, getattr(log, kind).request)


def _unsupported(kind: str, index: int, path) -> Unimplemented:
    # TF Serving prints `log_type_case()`, the oneof's field number (session_run_log is 5).
    number = prediction_log_pb2.PredictionLog.DESCRIPTOR.fields_by_name[kind].number
    return Unimplemented(
        message(
            f"Unsupported log_type for warmup: {number}",
            expected="predict_log, classify_log, regress_log or multi_inference_log records",
            received=f"record {index} of {path}: {kind}",
            fix="Write PredictRequests with serving.warmup_file.write_warmup_file.",
        )
    )


def _coded(code: grpc.StatusCode | str, text: str) -> ServingError:
    error = ServingError(text)
    error.code = code if isinstance(code, grpc.StatusCode) else grpc.StatusCode[code]
    return error


def _code_of(err: Exception) -> grpc.StatusCode:
    """A ServingError's code; a TensorFlow error's own (as TF Serving's session reports it); else UNKNOWN."""
    if isinstance(err, ServingError):
        return err.code
    number = getattr(err, "error_code", None)
    return next((c for c in grpc.StatusCode if c.value[0] == number), grpc.StatusCode.UNKNOWN)


def _failed(err: Exception, index: int, path) -> ServingError:
    """The request's own code and words, as TF Serving returns the executor's status unchanged
    (TF_RETURN_IF_ERROR), then which record failed."""
    code = _code_of(err)
    text = err.text if isinstance(err, ServingError) else (str(err) or type(err).__name__)
    first_line = text.splitlines()[0] if text else type(err).__name__
    return _coded(
        code,
        f"{first_line.rstrip('.')}. (warmup record {index} of {path}) "
        "Rewrite the warmup file from requests this model accepts, or remove it.",
    )


def _next_record(records, path):
    """The next record, None at the end; a file error fails the load with TensorFlow Serving's wording."""
    try:
        return next(records, None)
    except WarmupFileError as err:
        raise _coded(err.code, str(err)) from None
    except Exception as err:  # noqa: BLE001 - the file could not be read at all (TF Serving: the reader's status)
        raise _coded(_code_of(err), f"Failed to read warmup file {path}: {type(err).__name__}: {err}") from None


def replay_warmup(servable: Servable) -> int:
    """Runs every warmup record against `servable`; returns how many were read.

    Raises:
        ServingError: The file is unreadable, a record is malformed,
            unsupported or fails; the load fails with TensorFlow Serving's code.
    """
    path = warmup_path(servable.path)
    if not path.is_file():
        return 0
    records = iter_warmup_records(path)
    count = 0
    while (log := _next_record(records, path)) is not None:
        try:
            _replay_one(servable, log)
        except _Unsupported as err:
            raise _unsupported(str(err), count, path) from None
        except Exception as err:  # noqa: BLE001 - reported as a load failure
            raise _failed(err, count, path) from None
        count += 1
    return count
