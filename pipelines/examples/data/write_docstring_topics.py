"""Writes `topics.csv` beside this file: docstrings of Python's standard library, labelled by package.

A text-classification corpus that needs no download: the first paragraph of the
docstring of every public function, class and method (and of every module) in
a few standard-library packages, read from their source files with `ast` (nothing
is imported), whitespace collapsed. Column `text` is the paragraph, `topic` the
package it comes from (`asyncio`, `email`, ...). Paragraphs under five words are
left out, and a paragraph found in two packages is left out of both (it says
nothing about either); repeats within one package are kept once. Rows are in
package order, then file path, then position in the file.

The CSV is checked in (its rows depend on the Python version's sources: this
copy is from CPython 3.10.13); this script is how it was made, and
`tests/pipelines/test_media_examples_e2e.py` checks the copy's labels and rows.

Usage:
    .venv/bin/python pipelines/examples/data/write_docstring_topics.py [OUT]   # OUT: default data/topics.csv
"""

from __future__ import annotations

import ast
import csv
import io
import os
import sys
import sysconfig

__all__ = ["CSV_PATH", "TOPICS", "MIN_WORDS", "topic_rows", "topics_csv_text"]

CSV_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "topics.csv")
# Packages with 60 or more documented public names, each about one subject.
TOPICS = (
    "asyncio",
    "distutils",
    "email",
    "http",
    "idlelib",
    "importlib",
    "lib2to3",
    "logging",
    "multiprocessing",
    "tkinter",
    "unittest",
    "urllib",
    "xml",
)
MIN_WORDS = 5
_SKIPPED_FOLDERS = {"test", "tests", "idle_test", "__pycache__"}
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _source_files(package_dir: str) -> list[str]:
    """The package's `.py` files, test folders left out, in sorted path order."""
    found = []
    for folder, subfolders, names in os.walk(package_dir):
        subfolders[:] = sorted(name for name in subfolders if name not in _SKIPPED_FOLDERS)
        found += [os.path.join(folder, name) for name in sorted(names) if name.endswith(".py")]
    return sorted(found, key=lambda path: os.path.relpath(path, package_dir))


def _docstrings(tree: ast.Module):
    """The module's docstring, then those of its public definitions and their public methods, in file order."""
    yield ast.get_docstring(tree)
    for node in tree.body:
        if isinstance(node, _DEFINITIONS) and not node.name.startswith("_"):
            yield ast.get_docstring(node)
            if isinstance(node, ast.ClassDef):
                for member in node.body:
                    if isinstance(member, _DEFINITIONS) and not member.name.startswith("_"):
                        yield ast.get_docstring(member)


def _first_paragraph(docstring: str | None) -> str:
    if not docstring:
        return ""
    return " ".join(docstring.strip().split("\n\n")[0].split())


def topic_rows(stdlib: str | None = None, topics: tuple[str, ...] = TOPICS) -> list[tuple[str, str]]:
    """(text, topic) rows, deduplicated, in package, file and position order.

    Args:
      stdlib: The standard library's folder (default: this Python's).
      topics: Package folder names under `stdlib`.

    Returns:
      The rows.

    Raises:
      FileNotFoundError: a package's folder is missing (some Linux distributions ship tkinter,
        idlelib, distutils and lib2to3 as separate packages).
    """
    stdlib = stdlib or sysconfig.get_paths()["stdlib"]
    by_topic: dict[str, list[str]] = {}
    for topic in topics:
        package_dir = os.path.join(stdlib, topic)
        if not os.path.isdir(package_dir):
            raise FileNotFoundError(
                f"The standard library has no `{topic}` package folder. Expected {package_dir}. "
                f"Use a Python with the whole standard library (python.org or pyenv builds), or pass other topics."
            )
        texts: list[str] = []
        for path in _source_files(package_dir):
            with open(path, encoding="utf-8") as handle:
                tree = ast.parse(handle.read(), filename=path)
            for docstring in _docstrings(tree):
                text = _first_paragraph(docstring)
                if len(text.split()) >= MIN_WORDS and text not in texts:
                    texts.append(text)
        by_topic[topic] = texts
    owners: dict[str, set[str]] = {}
    for topic, texts in by_topic.items():
        for text in texts:
            owners.setdefault(text, set()).add(topic)
    return [(text, topic) for topic, texts in by_topic.items() for text in texts if len(owners[text]) == 1]


def topics_csv_text(stdlib: str | None = None) -> str:
    """The CSV text: a `text,topic` header, then one row per paragraph.

    Args:
      stdlib: The standard library's folder (default: this Python's).

    Returns:
      The whole file's text.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["text", "topic"])
    writer.writerows(topic_rows(stdlib))
    return out.getvalue()


if __name__ == "__main__":
    target = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else CSV_PATH
    text = topics_csv_text()
    with open(target, "w", encoding="utf-8") as handle:
        handle.write(text)
    print(f"wrote {text.count(chr(10)) - 1} rows to {target}")
