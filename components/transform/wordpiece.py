"""`tokenizer: wordpiece` for `transform: text`: subword ids learned from the train split.

The words (`media.text_tokens`: lower-cased runs of letters and digits) of the
train split are counted in tf.Transform's analyze phase, and tensorflow-text's
WordPiece learner (`wordpiece_tokenizer_learner_lib.learn`, the one
`bert_vocab_from_dataset` uses) turns the counts into at most `vocab_size`
pieces: every character seen, as a word start (`e`) and as a continuation
(`##e`), then the frequent longer pieces (`token`, `##ize`). The vocabulary is
a text file, one piece a line, stored with the Transform graph as an asset
named like the words vocabulary (`vocab_<column>`), so
`TFTransformOutput.vocabulary_size_by_name` counts it.

At transform (and serving) time tensorflow-text's `WordpieceTokenizer` splits
each word into the longest pieces of the vocabulary, greedily from the left.
Line 0 is `[PAD]`, so id 0 pads a row to `sequence_length` (longer rows are
cut there); line 1 is `[UNK]`, the id of a word holding a character the train
split never showed. The ids a model sees are 0 .. vocabulary size - 1.

The graph uses tensorflow-text's `WordpieceTokenizeWithOffsets` op: whatever
loads it (Trainer, Evaluator, the embedded server) must import tensorflow_text
first (`serving.custom_ops`). TensorFlow Serving's own binary links the op.

Learning is pure Python, in one Beam worker: its time grows with the distinct
words (at most `MAX_INPUT_WORDS`, the most frequent, are used). Untested:
Beam's multi-process runners load this graph in worker processes, which may
need `--beam_plugins=tensorflow_text` to have the ops.
"""

from __future__ import annotations

import collections
import contextlib
import os
from collections.abc import Iterable, Mapping
from typing import Any

import apache_beam as beam
import numpy as np
import tensorflow as tf
import tensorflow_transform as tft

from components.transform.config import WORDPIECE_VOCAB_SIZE, vocabulary_name

__all__ = ["PAD", "UNKNOWN", "learn_vocabulary", "wordpiece_ids"]

PAD, UNKNOWN = "[PAD]", "[UNK]"
# A piece must occur this often in the train split (the learner's default, 10, leaves small data sets with
# characters only).
_MIN_PIECE_COUNT = 2
MAX_INPUT_WORDS = 1_000_000


def _learner():
    try:
        from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib
    except ImportError as error:  # pragma: no cover - tensorflow-text is in requirements.lock
        raise ImportError(
            "`tokenizer: wordpiece` needs tensorflow-text. Expected it installed next to TensorFlow 2.16. "
            f"Received: {error}. Install it with `pip install tensorflow-text==2.16.1`."
        ) from error
    return wordpiece_tokenizer_learner_lib


def learn_vocabulary(word_counts: Mapping[str, int], vocab_size: int) -> list[str]:
    """The WordPiece vocabulary of `word_counts`: `[PAD]`, `[UNK]`, characters, then pieces by count.

    Args:
      word_counts: word -> how often the train split has it.
      vocab_size: the most pieces to keep (the learner aims at 95-100% of it when the data allow).

    Returns:
      The pieces in id order (`##` starts a piece that continues a word).

    Example:
      >>> learn_vocabulary({"tokenize": 5, "tokenizer": 4, "token": 3}, 40)[:2]
      ['[PAD]', '[UNK]']
    """
    counts = {word: count for word, count in word_counts.items() if word}
    if not counts:
        return [PAD, UNKNOWN]
    return _learner().learn(
        counts,
        vocab_size,
        [PAD, UNKNOWN],
        lower_thresh=_MIN_PIECE_COUNT,
        max_input_tokens=MAX_INPUT_WORDS,
    )


class _CountWords(beam.CombineFn):
    """Counts the words of (words,) batches, bytes -> count."""

    def create_accumulator(self):
        return collections.Counter()

    def add_input(self, counts, batch):
        counts.update(batch[0].tolist())
        return counts

    def merge_accumulators(self, accumulators: Iterable[collections.Counter]):
        merged = collections.Counter()
        for counts in accumulators:
            merged.update(counts)
        return merged

    def extract_output(self, counts):
        return counts


def _write_vocabulary(counts: collections.Counter, folder: str, file_name: str, vocab_size: int) -> np.ndarray:
    words = {word.decode("utf-8") if isinstance(word, bytes) else word: n for word, n in counts.items()}
    pieces = learn_vocabulary(words, vocab_size)
    tf.io.gfile.makedirs(folder)
    path = os.path.join(folder, file_name)
    with tf.io.gfile.GFile(path, "w") as file:
        file.write("".join(f"{piece}\n" for piece in pieces))
    return np.array(path.encode())


def _vocabulary_learner(file_name: str, vocab_size: int):
    import tensorflow_transform.beam as tft_beam

    class LearnWordpieceVocabulary(tft_beam.experimental.PTransformAnalyzer):
        """(words,) batches -> one element: the path of the vocabulary file it wrote."""

        def expand(self, batches):
            folder = self.base_temp_dir  # set by tf.Transform before expand; a fresh folder per run
            return (
                batches
                | "CountWords" >> beam.CombineGlobally(_CountWords())
                | "Learn" >> beam.Map(_write_vocabulary, folder, file_name, vocab_size)
            )

    return LearnWordpieceVocabulary()


def _tokenize(length: int):
    def lookup(words: tf.RaggedTensor, vocabulary_path) -> tuple[tf.Tensor, tf.Tensor]:
        import tensorflow_text

        with tf.init_scope() if _lift(vocabulary_path) else contextlib.nullcontext():
            table = tf.lookup.StaticHashTable(
                tf.lookup.TextFileInitializer(
                    vocabulary_path,
                    tf.string,
                    tf.lookup.TextFileIndex.WHOLE_LINE,
                    tf.int64,
                    tf.lookup.TextFileIndex.LINE_NUMBER,
                ),
                default_value=1,  # [UNK]; the tokenizer only asks for pieces it found, and [UNK]
            )
        tokenizer = tensorflow_text.WordpieceTokenizer(table, token_out_type=tf.int64, unknown_token=UNKNOWN)
        pieces = tokenizer.tokenize(words).merge_dims(1, 2)[:, :length]
        ids = tf.ensure_shape(pieces.to_tensor(default_value=0, shape=[None, length]), [None, length])
        return ids, table.size()

    return lookup


def _lift(vocabulary_path: Any) -> bool:
    """Build the table outside a tf.function being traced when the path is already known (tf.Transform's TF2 mode)."""
    return tf.inside_function() and isinstance(vocabulary_path, (str, bytes, type(tf.constant(""))))


def wordpiece_ids(column: str, feature: Mapping[str, Any], words: tf.RaggedTensor) -> tf.Tensor:
    """WordPiece ids of ragged [batch, words], padded with 0 or cut to `sequence_length`.

    Args:
      column: the feature's column (names its vocabulary file).
      feature: the feature's settings (`sequence_length`, `vocab_size`).
      words: ragged [batch, words] strings (`media.text_tokens`).

    Returns:
      int64 [batch, sequence_length]; 0 pads, 1 is `[UNK]`.
    """
    vocab_size = int(feature.get("vocab_size") or WORDPIECE_VOCAB_SIZE)
    file_name = tft.analyzers.sanitized_vocab_filename(vocabulary_name(column))
    (path,) = tft.experimental.ptransform_analyzer(
        [words.flat_values],
        _vocabulary_learner(file_name, vocab_size),
        output_dtypes=[tf.string],
        output_shapes=[[]],
        output_asset_default_values=[f"{PAD}\n{UNKNOWN}\n".encode()],
        name=f"wordpiece_{file_name}",
    )
    return tft.apply_vocabulary(words, path, lookup_fn=_tokenize(int(feature["sequence_length"])))
