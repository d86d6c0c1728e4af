"""Hostile images against the pipeline's image model in a real server process
(`python -m serving up --embedded`, RSS read with psutil): headers claiming
huge sizes, truncated files, bytes that are no image. Each is answered 400
naming the problem, the server keeps answering good requests, and its memory
stays bounded."""

from __future__ import annotations

import base64
import struct
import zlib

import grpc
import pytest
import tensorflow as tf
from media_models import encoded_square, example, image_run
from server_process import MIB, ServerProcess
from serving_helpers import MODEL, http
from tensorflow_serving.apis import classification_pb2, predict_pb2, prediction_service_pb2_grpc

pytestmark = pytest.mark.e2e

# What two 36-megapixel PNGs (a 270 KB request) leave in the server: Transform decodes two images at a
# time, each as uint8 (108 MB) cast to float32 (432 MB) before resizing, and oneDNN's allocator keeps that
# peak (1.08 GB measured; malloc_trim gives none of it back, TF_ENABLE_ONEDNN_OPTS=0 does). Resizing the
# uint8 image directly would cut it to ~0.25 GB (reported to the lead in h5_findings.md).
AFTER_LARGE_IMAGES = 1400 * MIB
# Hostile images are refused from their headers: they leave next to nothing.
AFTER_HOSTILE_IMAGE = 100 * MIB
GROWTH_PER_REPEAT = 60 * MIB


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width: int, height: int, pixel_rows: bytes | None = None) -> bytes:
    """An RGB PNG whose header says width x height; its pixel data is `pixel_rows` (default: one zero row)."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = pixel_rows if pixel_rows is not None else b"\0" * (1 + 3 * min(width, 16))
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(rows)) + _chunk(b"IEND", b"")


def zero_png(side: int) -> bytes:
    """A real side x side black PNG: ~0.1% of its decoded size on the wire."""
    compressor = zlib.compressobj(9)
    row = b"\0" * (1 + 3 * side)
    data = b"".join(compressor.compress(row) for _ in range(side)) + compressor.flush()
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", data) + _chunk(b"IEND", b"")


def jpeg_claiming(width: int, height: int) -> bytes:
    """A real JPEG whose frame header (SOF0) is rewritten to say width x height."""
    data = bytearray(encoded_square("red", fmt="JPEG"))
    sof = data.index(b"\xff\xc0")
    data[sof + 5 : sof + 9] = struct.pack(">HH", height, width)
    return bytes(data)


GOOD = encoded_square("green", fmt="PNG")
HOSTILE = {
    "png claiming 100000x100000": (png(100_000, 100_000), "claims more than 40,000,000 pixels"),
    "png claiming 2^31-1 square": (png(2**31 - 1, 2**31 - 1), "claims more than 40,000,000 pixels"),
    "jpeg claiming 65000x65000": (jpeg_claiming(65_000, 65_000), "claims more than 40,000,000 pixels"),
    "truncated png": (encoded_square("red", fmt="PNG")[:60], ""),
    "truncated jpeg": (encoded_square("red", fmt="JPEG")[:200], ""),
    "png with damaged pixel data": (png(16, 16, b"\x07" * 40), ""),
    "text": (b"hello, I am not an image", "neither JPEG nor PNG"),
    "gif": (b"GIF89a\x01\x00\x01\x00\x00\x00\x00;", "neither JPEG nor PNG"),
    "png signature only": (b"\x89PNG\r\n\x1a\n", "neither JPEG nor PNG"),
}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The image pipeline's pushed model in its own server process (served as `lin`)."""
    run = image_run(tmp_path_factory)
    base = tmp_path_factory.mktemp("media-hostile")
    (base / "models").mkdir()
    (base / "models" / MODEL).symlink_to(run.serving_dir / run.model_name)
    server = ServerProcess(base / "models", base / "cfg")
    for _ in range(3):
        assert _rest(server, [GOOD])[0] == 200
    server.baseline = server.rss()
    yield server
    server.close()


def _rest(server, images: list[bytes]) -> tuple[int, dict]:
    instances = [{"image": {"b64": base64.b64encode(data).decode()}} for data in images]
    return http(
        server.rest_url,
        "POST",
        f"/v1/models/{MODEL}:predict",
        {"signature_name": "serving_raw", "instances": instances},
        timeout=120,
    )


def _grpc_predict(stub, images: list[bytes]):
    request = predict_pb2.PredictRequest()
    request.model_spec.name = MODEL
    request.model_spec.signature_name = "serving_raw"
    request.inputs["image"].CopyFrom(tf.make_tensor_proto(images, dtype=tf.string))
    return stub.Predict(request, timeout=120)


def _grpc_classify(stub, images: list[bytes]):
    request = classification_pb2.ClassificationRequest()
    request.model_spec.name = MODEL
    request.model_spec.signature_name = "classification"
    for data in images:
        request.input.example_list.examples.add().ParseFromString(example(image=data))
    return stub.Classify(request, timeout=120)


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_image_is_refused_and_the_server_keeps_answering(served, case):
    data, text = HOSTILE[case]
    status, body = _rest(served, [GOOD, data])
    assert status == 400, body
    assert text in body["error"]
    with grpc.insecure_channel(served.grpc_address) as channel:
        stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
        for call in (_grpc_predict, _grpc_classify):
            with pytest.raises(grpc.RpcError) as caught:
                call(stub, [data])
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
            assert text in caught.value.details()
        assert len(_grpc_classify(stub, [GOOD]).result.classifications) == 1
    assert _rest(served, [GOOD])[0] == 200
    assert served.alive()
    assert served.rss() < served.baseline + AFTER_HOSTILE_IMAGE


def test_empty_image_cell_is_an_all_zero_image(served):
    status, body = _rest(served, [b"", GOOD])
    assert status == 200, body
    assert len(body["predictions"]) == 2


def test_large_real_images_under_the_pixel_limit_leave_memory_bounded(served):
    picture = zero_png(6000)  # 36 million pixels: 108 MB decoded, ~100 KB sent
    assert len(picture) < MIB
    status, body = _rest(served, [picture, picture])
    assert status == 200, body
    after_first = served.rss()
    assert after_first < served.baseline + AFTER_LARGE_IMAGES
    for _ in range(3):
        assert _rest(served, [picture, picture])[0] == 200
    assert served.rss() < after_first + GROWTH_PER_REPEAT
    assert _rest(served, [GOOD])[0] == 200
