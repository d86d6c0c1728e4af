"""Replays a version's warmup file before the version becomes AVAILABLE."""

from __future__ import annotations

from serving.errors import FailedPrecondition, ServingError, message
from serving.server import inference
from serving.server.examples import examples_from_input
from serving.server.servable import Servable
from serving.server.tensors import proto_inputs
from serving.warmup import read_warmup_file, warmup_path

__all__ = ["replay_warmup"]


def _replay_one(servable: Servable, log) -> None:
    kind = log.WhichOneof("log_type")
    if kind == "predict_log":
        request = log.predict_log.request
        signature = inference.predict_signature(servable, request.model_spec.signature_name)
        signature.run(proto_inputs(request.inputs, signature, servable.name))
    elif kind in ("classify_log", "regress_log"):
        request = getattr(log, kind).request
        pick = inference.classify_signature if kind == "classify_log" else inference.regress_signature
        signature = pick(servable, request.model_spec.signature_name)
        signature.run({inference.EXAMPLES_INPUT: examples_from_input(request.input)})
    else:
        raise FailedPrecondition(
            message(
                f"Unsupported log_type for warmup: {kind}",
                expected="predict_log, classify_log or regress_log records",
                received=str(kind),
                fix="Write PredictRequests with serving.warmup.write_warmup_file.",
            )
        )


def replay_warmup(servable: Servable) -> int:
    """Runs every warmup record against `servable`; returns how many ran.

    Raises:
        FailedPrecondition: A record is malformed or fails; the load fails,
            as in TensorFlow Serving.
    """
    path = warmup_path(servable.path)
    if not path.is_file():
        return 0
    try:
        logs = read_warmup_file(path)
    except Exception as err:  # noqa: BLE001 - reported as a load failure
        raise FailedPrecondition(f"Failed to read warmup file {path}: {err}") from None
    for index, log in enumerate(logs):
        try:
            _replay_one(servable, log)
        except Exception as err:  # noqa: BLE001 - reported as a load failure
            text = err.text if isinstance(err, ServingError) else f"{type(err).__name__}: {err}"
            raise FailedPrecondition(
                message(
                    f"Warmup record {index} of {path} failed",
                    expected="every warmup request to succeed on the new version",
                    received=text.splitlines()[0] if text else type(err).__name__,
                    fix="Rewrite the warmup file from rows this model accepts, or remove it.",
                )
            ) from None
    return len(logs)
