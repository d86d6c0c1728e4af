"""Images and texts in the generated preprocessing_fn, run by tf.Transform on Beam in TF1 graph mode and TF2 mode.

Images: JPEG and PNG bytes (RGB and grey) decode to 0-255 pixels at the declared
size; a missing cell is a black image; bytes that are not an image, and a
header that claims a decompression bomb's size, stop the graph with a message.
Texts: words lower-cased without punctuation, ids from 1 by frequency, 0 pads.
"""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform.beam as tft_beam
from PIL import Image
from tensorflow_transform.tf_metadata import dataset_metadata, schema_utils

from components.transform import media
from components.transform.config import TransformConfig
from components.transform.preprocessing import preprocessing_fn


def _encoded(colour: tuple[int, ...], size: tuple[int, int], kind: str, mode: str = "RGB") -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, size, colour if mode == "RGB" else colour[0]).save(buffer, format=kind)
    return buffer.getvalue()


def _png_header(width: int, height: int) -> bytes:
    """A PNG signature and IHDR chunk claiming `width` x `height` (no pixel data follows)."""
    chunk = b"IHDR" + struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))


FEATURES = {
    "photo": {"transform": "image", "image_size": [8, 12]},
    "scan": {"transform": "image", "image_size": [4, 4], "channels": 1},
    "review": {"transform": "text", "sequence_length": 5, "oov_buckets": 1},
}
RAW_SPEC = {
    "photo": tf.io.VarLenFeature(tf.string),
    "scan": tf.io.FixedLenFeature([], tf.string),
    "review": tf.io.FixedLenFeature([], tf.string),
    "kind": tf.io.FixedLenFeature([], tf.string),
}
ROWS = [
    {
        "photo": [_encoded((255, 0, 0), (30, 20), "PNG")],
        "scan": _encoded((200,), (9, 7), "PNG", "L"),
        "review": "Great film, GREAT cast!",
        "kind": "a",
    },
    {
        "photo": [_encoded((0, 0, 255), (16, 16), "JPEG")],
        "scan": _encoded((10, 10, 10), (5, 5), "JPEG"),
        "review": "great",
        "kind": "b",
    },
    {"photo": [], "scan": _encoded((0, 0, 0), (4, 4), "PNG"), "review": "", "kind": "a"},
    {
        "photo": [_encoded((0, 255, 0), (8, 12), "PNG")],
        "scan": _encoded((255,), (4, 4), "PNG", "L"),
        "review": "a film. a cast; a film",
        "kind": "b",
    },
]
CONFIG = TransformConfig(features=FEATURES, label_name="kind", task="classification", label_column="kind")
CONFIG = TransformConfig(**{**CONFIG.to_dict(), "classes": ["a", "b"]})


def _transform(rows: list[dict], temp_dir: str, graph_mode: bool) -> list[dict]:
    metadata = dataset_metadata.DatasetMetadata(schema_utils.schema_from_feature_spec(RAW_SPEC))
    with tft_beam.Context(temp_dir=temp_dir, force_tf_compat_v1=graph_mode):
        (transformed, _), _ = (rows, metadata) | tft_beam.AnalyzeAndTransformDataset(
            lambda inputs: preprocessing_fn(inputs, CONFIG.to_dict())
        )
    return transformed


@pytest.fixture(scope="module", params=[True, False], ids=["tf1_graph_mode", "tf2_mode"])
def transformed(request, tmp_path_factory) -> list[dict]:
    return _transform(ROWS, str(tmp_path_factory.mktemp("tft")), request.param)


def test_images_decode_to_the_declared_size_with_0_to_255_pixels(transformed):
    photos = np.array([row["photo_xf"] for row in transformed])
    assert photos.shape == (4, 8, 12, 3)
    np.testing.assert_allclose(photos[0].mean(axis=(0, 1)), [255, 0, 0], atol=1)
    np.testing.assert_allclose(photos[1].mean(axis=(0, 1)), [0, 0, 255], atol=8)  # JPEG is lossy
    np.testing.assert_allclose(photos[3].mean(axis=(0, 1)), [0, 255, 0], atol=1)


def test_a_missing_image_is_all_zero(transformed):
    assert not np.array(transformed[2]["photo_xf"]).any()


def test_grey_channels_take_rgb_and_grey_files(transformed):
    scans = np.array([row["scan_xf"] for row in transformed])
    assert scans.shape == (4, 4, 4, 1)
    np.testing.assert_allclose(scans[:, 0, 0, 0], [200, 10, 0, 255], atol=2)


def test_text_ids_by_word_frequency_padded_with_zero(transformed):
    ids = [list(row["review_xf"]) for row in transformed]
    # Words by count: a (3), film (3), great (3), cast (2); equal counts order by the word, descending.
    vocabulary = {"great": 1, "film": 2, "a": 3, "cast": 4}
    assert ids[0] == [vocabulary["great"], vocabulary["film"], vocabulary["great"], vocabulary["cast"], 0]
    assert ids[1] == [vocabulary["great"], 0, 0, 0, 0]
    assert ids[2] == [0, 0, 0, 0, 0]
    assert ids[3] == [vocabulary["a"], vocabulary["film"], vocabulary["a"], vocabulary["cast"], vocabulary["a"]]


def test_text_tokens_drop_punctuation_and_keep_unicode_letters():
    tokens = media.text_tokens(tf.constant(["Ça   va? Très-bien!! 42x", ""])).to_list()
    assert tokens == [[b"\xc3\xa7a", b"va", b"tr\xc3\xa8s", b"bien", b"42x"], []]


@pytest.mark.parametrize(
    "cell, message",
    [
        (b"just some text", "neither JPEG nor PNG"),
        (_png_header(60_000, 60_000), "more than 40,000,000 pixels"),
    ],
    ids=["not_an_image", "decompression_bomb"],
)
def test_bad_image_bytes_stop_with_a_message_before_decoding(cell, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        media.decode_images(tf.constant([cell]), (8, 8, 3))


def test_image_pixels_are_read_from_the_header():
    assert int(media.image_pixels(tf.constant(_png_header(300, 200)))) == 60_000
    assert int(media.image_pixels(tf.constant(_encoded((1, 2, 3), (40, 30), "JPEG")))) == 1_200
