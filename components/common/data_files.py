"""Which data files a data path holds, and how to open one: the one answer `validate` and ExampleGen share.

`validate` profiles the files this module lists and ExampleGen reads the same
ones, so the two cannot disagree again: hidden files (a name starting with a
dot: `.DS_Store`, `._data.csv`, `.ipynb_checkpoints`) and sub-folders are not
data, and a file whose name ends in `.gz` is gzip-compressed.

Example:
    >>> data_files("data/")  # doctest: +SKIP
    ['data/part-1.csv', 'data/part-2.csv.gz']
"""

from __future__ import annotations

import gzip
import io
import os

__all__ = ["data_files", "is_data_file_name", "is_gzip", "keep_data_files", "open_text"]


def is_data_file_name(path: str) -> bool:
    """False for hidden files (their name starts with a dot), which are never data."""
    return not os.path.basename(path.rstrip("/")).startswith(".")


def is_gzip(path: str) -> bool:
    """Whether the file is read through gzip (its name ends in `.gz`, as Beam's and Arrow's readers decide)."""
    return path.endswith(".gz")


def data_files(path: str) -> list[str]:
    """The data files at `path`: the file itself, or a folder's regular files in name order (hidden ones,
    sub-folders, pipes and sockets left out); empty when nothing is there."""
    if os.path.isdir(path):
        return keep_data_files(os.path.join(path, name) for name in os.listdir(path))
    return [path] if os.path.isfile(path) else []


def keep_data_files(paths, isdir=os.path.isdir) -> list[str]:
    """`paths` (a folder listing, or what a file pattern matched) without hidden files and folders, sorted.

    Args:
        paths: file paths; a local one is kept only when it is a regular file.
        isdir: how to tell a folder in an object store (`gs://...`; ExampleGen passes TFX's `fileio.isdir`).
    """
    return sorted(
        path
        for path in paths
        if is_data_file_name(path) and (not isdir(path) if "://" in path else os.path.isfile(path))
    )


def open_text(path: str) -> io.TextIOBase:
    """The file as UTF-8 text for Python's `csv` module (a byte-order mark dropped; gzip decompressed)."""
    if is_gzip(path):
        return gzip.open(path, "rt", newline="", encoding="utf-8-sig")
    return open(path, newline="", encoding="utf-8-sig")
