"""Transform outputs of images and free text: `transform: image` and `transform: text`.

An image cell holds encoded JPEG or PNG bytes. It becomes a float32
`[batch, height, width, channels]` tensor of values 0-255, resized to the
declared `image_size` (bilinear, aspect ratio not kept). The size is read
from the file's header before it is decoded, so a file that claims more than
`MAX_IMAGE_PIXELS` pixels (a decompression bomb) is refused without
allocating it; a missing cell is an all-zero image. Normalisation for a
backbone and training-only augmentation are layers of the model
(`components.trainer.models.image_classifier.builder`): the same graph serves raw bytes.

A text cell is lower-cased, split into words (runs of letters and digits;
punctuation is dropped), and each word becomes its id in a vocabulary of the
train split's `top_k` most frequent words (tf.Transform). Ids start at 1;
0 pads a row to `sequence_length`, and longer rows are cut there. Words
outside the vocabulary share `oov_buckets` ids after the vocabulary's.
With `tokenizer: wordpiece` the words are split further into subword pieces
of a vocabulary learned from the train split (`components.transform.wordpiece`).
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf
import tensorflow_transform as tft

from components.transform.config import vocabulary_name

__all__ = [
    "MAX_IMAGE_PIXELS",
    "DEFAULT_TOP_K",
    "image_pixels",
    "decode_images",
    "text_tokens",
    "text_ids",
    "image_shape",
]

# 40 million pixels: a 7,360 x 5,440 camera photo fits; decoded it takes 120 MB as RGB.
MAX_IMAGE_PIXELS = 40_000_000
# How many images of one batch are decoded at the same time (bounds memory: 2 x 120 MB at most).
_PARALLEL_DECODES = 2
DEFAULT_TOP_K = 20_000
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_WORD_SEPARATORS = r"[^\p{L}\p{N}]+"


def image_shape(feature: dict[str, Any]) -> tuple[int, int, int]:
    """(height, width, channels) of a `transform: image` feature's output."""
    height, width = feature["image_size"]
    return int(height), int(width), int(feature.get("channels") or 3)


def image_pixels(encoded: tf.Tensor) -> tf.Tensor:
    """Height x width of one encoded image, read from its header (int64; -1 when it is neither JPEG nor PNG).

    Args:
      encoded: a scalar string tensor, the file's bytes.

    Returns:
      A scalar int64 tensor.
    """

    def jpeg_pixels():
        shape = tf.cast(tf.image.extract_jpeg_shape(encoded), tf.int64)
        return shape[0] * shape[1]

    def png_pixels():
        # The IHDR chunk: width then height, big-endian uint32, at bytes 16-23.
        size = tf.io.decode_raw(tf.strings.substr(encoded, 16, 8), tf.int32, little_endian=False)
        size = tf.cast(size, tf.int64)
        return size[0] * size[1]

    is_png = tf.logical_and(
        tf.strings.length(encoded) >= 24, tf.equal(tf.strings.substr(encoded, 0, 8), _PNG_SIGNATURE)
    )
    return tf.case(
        [(tf.io.is_jpeg(encoded), jpeg_pixels), (is_png, png_pixels)],
        default=lambda: tf.constant(-1, tf.int64),
        exclusive=False,
    )


def _decode_one(encoded: tf.Tensor, shape: tuple[int, int, int]) -> tf.Tensor:
    height, width, channels = shape

    def blank():
        return tf.zeros(shape, tf.float32)

    def decode():
        pixels = image_pixels(encoded)
        checks = [
            tf.debugging.assert_non_negative(
                pixels, message="an image cell holds neither JPEG nor PNG bytes. Send the file's bytes unchanged"
            ),
            tf.debugging.assert_less_equal(
                pixels,
                tf.constant(MAX_IMAGE_PIXELS, tf.int64),
                message=f"an image's header claims more than {MAX_IMAGE_PIXELS:,} pixels. Resize it first",
            ),
        ]
        with tf.control_dependencies(checks):
            image = tf.io.decode_image(encoded, channels=channels, dtype=tf.uint8, expand_animations=False)
        image.set_shape([None, None, channels])
        return tf.image.resize(tf.cast(image, tf.float32), [height, width])

    return tf.cond(tf.equal(tf.strings.length(encoded), 0), blank, decode)


def decode_images(encoded: tf.Tensor, shape: tuple[int, int, int]) -> tf.Tensor:
    """Decodes and resizes a [batch] of encoded images.

    Args:
      encoded: [batch] strings, JPEG or PNG bytes ("" for a missing cell).
      shape: (height, width, channels) of the output.

    Returns:
      float32 [batch, height, width, channels], values 0-255.

    Raises:
      tf.errors.InvalidArgumentError (when run): a cell is not JPEG/PNG, is damaged, or claims more than
        `MAX_IMAGE_PIXELS` pixels.
    """
    images = tf.map_fn(
        lambda one: _decode_one(one, shape),
        encoded,
        fn_output_signature=tf.TensorSpec(shape, tf.float32),
        parallel_iterations=_PARALLEL_DECODES,
    )
    return tf.ensure_shape(images, [None, *shape])


def text_tokens(text: tf.Tensor) -> tf.RaggedTensor:
    """[batch] strings -> ragged [batch, words]: lower-cased runs of letters and digits."""
    lowered = tf.strings.lower(text, encoding="utf-8")
    spaced = tf.strings.regex_replace(lowered, _WORD_SEPARATORS, " ")
    return tf.strings.split(tf.strings.strip(spaced))


def text_ids(column: str, feature: dict[str, Any], text: tf.Tensor) -> tf.Tensor:
    """Word (or WordPiece) ids of a [batch] of texts, padded with 0 or cut to `sequence_length`.

    Args:
      column: the feature's column (names its vocabulary file).
      feature: the feature's settings (`sequence_length`, `top_k`, `oov_buckets`; `tokenizer`, `vocab_size`).
      text: [batch] strings.

    Returns:
      int64 [batch, sequence_length]; ids 1..vocabulary+oov_buckets, 0 for padding (WordPiece:
      `wordpiece.wordpiece_ids`).
    """
    length = int(feature["sequence_length"])
    tokens = text_tokens(text)
    if feature.get("tokenizer") == "wordpiece":
        from components.transform import wordpiece  # tensorflow-text only when asked for

        return wordpiece.wordpiece_ids(column, feature, tokens)
    ids = tft.compute_and_apply_vocabulary(
        tokens.to_sparse(),
        top_k=feature.get("top_k") or DEFAULT_TOP_K,
        num_oov_buckets=max(int(feature.get("oov_buckets", 1)), 1),
        vocab_filename=vocabulary_name(column),
    )
    ids = tf.SparseTensor(ids.indices, ids.values + 1, ids.dense_shape)
    ragged = tf.RaggedTensor.from_sparse(ids)[:, :length]
    return tf.ensure_shape(ragged.to_tensor(default_value=0, shape=[None, length]), [None, length])
