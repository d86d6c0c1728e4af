"""The per-request checks that run before anything large is allocated, and the
reload policy, on their own (no server)."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.framework import tensor_pb2

from serving import config as cfg
from serving.errors import FailedPrecondition, InvalidArgument, PermissionDenied
from serving.server.guards.request_checks import (
    MAX_INPUT_TENSORS,
    BudgetExceeded,
    JsonTooDeep,
    RequestLimits,
    check_input_count,
    check_json_depth,
    check_tensor_protos,
)
from serving.server.lifecycle.reload_policy import ReloadPolicy

MIB = 1024 * 1024


def _claiming(shape: list[int], dtype=tf.float32, values=(1.0,)) -> tensor_pb2.TensorProto:
    """A TensorProto with few values and a large declared shape (TensorFlow repeats the last value)."""
    proto = tensor_pb2.TensorProto(dtype=dtype.as_datatype_enum)
    for size in shape:
        proto.tensor_shape.dim.add(size=size)
    if dtype == tf.string:
        proto.string_val.extend(values)
    else:
        proto.float_val.extend(values)
    return proto


def test_input_count_is_bounded():
    check_input_count(MAX_INPUT_TENSORS)
    with pytest.raises(InvalidArgument, match=f"Request has {MAX_INPUT_TENSORS + 1} input tensors"):
        check_input_count(MAX_INPUT_TENSORS + 1)


def test_small_request_passes_and_reports_its_declared_size():
    protos = {"x": tf.make_tensor_proto(np.zeros((4, 3), np.float32)), "y": tf.make_tensor_proto([1.0, 2.0])}
    assert check_tensor_protos(protos, RequestLimits()) == 4 * 3 * 4 + 2 * 4


def test_601_byte_request_claiming_200m_floats_is_refused_before_decoding():
    proto = _claiming([200_000_000])
    assert proto.ByteSize() < 601
    with pytest.raises(BudgetExceeded) as caught:
        check_tensor_protos({"x": proto}, RequestLimits())
    text = str(caught.value)
    assert "800000000 bytes (762.9 MiB), over the per-request memory budget" in text
    assert "at most 268435456 bytes (256.0 MiB)" in text
    assert "input 'x' with shape [200000000]" in text
    assert "--request-memory-budget-mb" in text


@pytest.mark.parametrize(
    ("case", "protos", "budget", "text"),
    [
        ("sum over inputs", {"a": _claiming([600, 1000]), "b": _claiming([600, 1000])}, 4 * MIB, "4800000 bytes"),
        ("strings count per element", {"s": _claiming([1_000_000], tf.string, [b"a"])}, 8 * MIB, "shape [1000000]"),
        ("int overflow in numpy", {"x": _claiming([2**40, 2**40])}, 256 * MIB, "shape [1099511627776, 1099511627776]"),
    ],
)
def test_declared_size_over_budget_is_refused(case, protos, budget, text):
    with pytest.raises(BudgetExceeded) as caught:
        check_tensor_protos(protos, RequestLimits(memory_budget_bytes=budget))
    assert text in str(caught.value)


@pytest.mark.parametrize(
    ("case", "proto", "text"),
    [
        ("negative dimension", _claiming([-1, 3]), "negative dimension. Expected a TensorProto whose shape"),
        (
            "content shorter than the shape",
            tensor_pb2.TensorProto(
                dtype=tf.float32.as_datatype_enum,
                tensor_shape={"dim": [{"size": 1000}]},
                tensor_content=b"\0" * 8,
            ),
            "8 bytes of tensor_content for shape [1000] (4000 bytes)",
        ),
    ],
)
def test_malformed_tensor_proto_is_invalid_argument(case, proto, text):
    with pytest.raises(InvalidArgument) as caught:
        check_tensor_protos({"x": proto}, RequestLimits())
    assert "Malformed TensorProto for input 'x'" in str(caught.value)
    assert text in str(caught.value)


@pytest.mark.parametrize(
    ("case", "raw"),
    [
        ("100k nested arrays", b"[" * 100_000 + b"]" * 100_000),
        ("deep inside an object", b'{"instances": ' + b"[" * 65 + b"]" * 65 + b"}"),
        (
            "closing brackets in a string do not hide depth",
            b'{"a": "' + b"]" * 500 + b'", "b": ' + b"[" * 200 + b"]" * 200 + b"}",
        ),
    ],
)
def test_json_deeper_than_the_limit_is_refused_before_parsing(case, raw):
    def parse(_):
        raise AssertionError("parsed a body over the depth limit")

    with pytest.raises(JsonTooDeep) as caught:
        check_json_depth(raw, 64, parse)
    assert "JSON Parse error: document nested too deep. Expected at most 64 levels" in str(caught.value)


def test_unbalanced_deep_json_is_refused_not_a_recursion_error():
    with pytest.raises(JsonTooDeep) as caught:
        check_json_depth(b"[" * 100_000, 64, json.loads)
    assert "more than the parser's recursion limit" in str(caught.value)


@pytest.mark.parametrize(
    ("case", "raw"),
    [
        ("exactly at the limit", b"[" * 64 + b"]" * 64),
        ("many rows, shallow", json.dumps({"instances": [[1.0, 2.0, 3.0]] * 1000}).encode()),
        ("brackets inside strings", json.dumps({"instances": ["[" * 500, "{" * 500]}).encode()),
        ("escaped quotes", json.dumps({"instances": ['\\"' + "[" * 100, '"]]' * 50]}).encode()),
    ],
)
def test_json_within_the_limit_parses(case, raw):
    assert check_json_depth(raw, 64, json.loads) == json.loads(raw)


@pytest.mark.parametrize("field", ["memory_budget_bytes", "max_json_depth", "header_timeout_s", "body_timeout_s"])
def test_limits_must_be_positive(field):
    with pytest.raises(ValueError) as caught:
        RequestLimits(**{field: 0})
    assert f"Invalid request limit {field}. Expected a positive number. Received: {field}=0" in str(caught.value)


def _config(base_path) -> cfg.ModelServerConfig:
    return cfg.server_config(cfg.model_config("lin", base_path))


def test_reload_is_refused_unless_enabled(tmp_path):
    policy = ReloadPolicy.from_options(False, (), _config(tmp_path / "lin"))
    with pytest.raises(FailedPrecondition) as caught:
        policy.check(_config(tmp_path / "lin"))
    assert "HandleReloadConfigRequest is disabled on this server" in str(caught.value)
    assert "--allow-config-reload" in str(caught.value)


@pytest.mark.parametrize(
    ("case", "target"),
    [
        ("system directory", "/etc"),
        ("dot-dot out of the root", "{root}/../elsewhere"),
        ("symlink out of the root", "{root}/link"),
        ("sibling with the root as prefix", "{root}-evil"),
        ("a URL", "gs://bucket/models"),
    ],
)
def test_reload_outside_allowed_roots_is_permission_denied(tmp_path, case, target):
    root = tmp_path / "models"
    root.mkdir()
    (root / "link").symlink_to("/etc")
    policy = ReloadPolicy.from_options(True, (str(root),), _config(root / "lin"))
    with pytest.raises(PermissionDenied) as caught:
        policy.check(_config(target.format(root=root)))
    assert "base_path of model 'lin' is outside the allowed model roots" in str(caught.value)
    assert "--allowed-model-roots" in str(caught.value)


def test_reload_under_a_root_is_allowed_and_roots_default_to_served_paths(tmp_path):
    served = tmp_path / "models" / "lin"
    served.mkdir(parents=True)
    ReloadPolicy.from_options(True, (str(tmp_path / "models"),), _config(served)).check(_config(served / "sub"))
    default = ReloadPolicy.from_options(True, (), _config(served))
    default.check(_config(served))
    with pytest.raises(PermissionDenied):
        default.check(_config(tmp_path / "models" / "other"))


@pytest.mark.parametrize(
    ("case", "dtype", "name"),
    [
        ("unset", 0, "DT_INVALID"),
        ("resource handle", tf.resource.as_datatype_enum, "DT_RESOURCE"),
        ("unknown", 999, "999"),
    ],
)
def test_tensor_proto_without_a_request_dtype_is_invalid_argument(case, dtype, name):
    proto = tensor_pb2.TensorProto(dtype=dtype)
    proto.tensor_shape.dim.add(size=2)
    with pytest.raises(InvalidArgument) as caught:
        check_tensor_protos({"x": proto}, RequestLimits())
    assert str(caught.value).startswith("tensor parsing error: x. Expected a TensorProto with a dtype")
    assert f"Received: dtype {name}." in str(caught.value)


def _fastest_of_three(call) -> float:
    """Seconds of the fastest of three `call()`s."""
    times = []
    for _ in range(3):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return min(times)


@pytest.mark.parametrize(
    ("case", "raw"),
    [
        ("escaped quotes, never closed", b"[" * 65 + b'"' + b'\\"' * 1_000_000),
        ("a million tiny strings", b"[" * 65 + b'"x' * 1_000_000),
    ],
)
def test_depth_scan_stays_linear_on_hostile_strings(case, raw):
    def scan() -> None:
        with pytest.raises(json.JSONDecodeError):  # not too deep: the parser reports the broken string
            check_json_depth(raw, 64, json.loads)

    # No fixed bound (a loaded machine slows everything): compared with parsing a plain body of the
    # same size in the same run, the scan takes 1.7-2.6 times as long; a backtracking scan, hours.
    plain = b"[" + b"1," * (len(raw) // 2) + b"1]"
    assert _fastest_of_three(scan) < 20 * _fastest_of_three(lambda: json.loads(plain))
