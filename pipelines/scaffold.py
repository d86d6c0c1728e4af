"""`python -m pipelines new-component NAME`: a component package, installable, with its test.

The package registers its component under the `yaml_tfx.components`
entry-point group, so after `pip install -e NAME` a spec uses it as
`uses: NAME`. The component copies each split's examples (at most
`max_rows_per_split`); `executor.process_split` is where the real work goes.
"""

from __future__ import annotations

import os
import re

from pipelines.steps.registry import COMPONENT_GROUP

__all__ = ["new_component", "ScaffoldError", "class_name_for"]

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


class ScaffoldError(ValueError):
    """The name is unusable or the folder exists."""


def class_name_for(name: str) -> str:
    """`drop_outliers` -> `DropOutliers`."""
    return "".join(part.capitalize() for part in name.split("_") if part)


_PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "{dist}"
version = "0.1.0"
description = "{cls}: a TFX component for yaml-tfx pipelines."
requires-python = ">=3.10"
# tfx comes with yaml-tfx, the framework that runs this component.
dependencies = []

[project.entry-points."{group}"]
{name} = "{name}.component:{cls}"

[tool.setuptools]
packages = ["{name}"]
"""

_README = """# {name}

A TFX component for yaml-tfx pipelines, registered as `{name}`.

    pip install -e .                      # registers `{name}` (entry point `{group}`)
    python -m pipelines components        # lists it with its inputs, outputs, parameters
    python -m pytest tests                # its test

Use it in a spec, between ExampleGen and the built-in steps:

```yaml
steps:
  - name: {cls}
    uses: {name}
    inputs: {{examples: ExampleGen.examples}}
    parameters: {{max_rows_per_split: 0}}
    replaces: ExampleGen.examples
```

Edit `{name}/executor.py` (`process_split`) to do the real work, and
`{name}/component.py` to change inputs, outputs or parameters.
"""

_COMPONENT = '''"""{cls}: copies each split's examples; edit `executor.process_split` to change that.

Use it in a spec (see README.md):

    steps:
      - name: {cls}
        uses: {name}
        inputs: {{examples: ExampleGen.examples}}
        replaces: ExampleGen.examples
"""

import os

from tfx.dsl.component.experimental.annotations import InputArtifact, OutputArtifact, Parameter
from tfx.dsl.component.experimental.decorators import component
from tfx.types import standard_artifacts

from {name}.executor import process_split

__all__ = ["{cls}"]


@component
def {cls}(
    examples: InputArtifact[standard_artifacts.Examples],
    output_examples: OutputArtifact[standard_artifacts.Examples],
    max_rows_per_split: Parameter[int] = 0,
) -> None:
    """Copies every split, at most `max_rows_per_split` rows each (0: all); counts go to `rows_<split>`."""
    from tfx.components.util import examples_utils
    from tfx.types import artifact_utils

    output_examples.split_names = examples.split_names
    output_examples.span = examples.span
    output_examples.version = examples.version
    examples_utils.set_payload_format(output_examples, examples_utils.get_payload_format(examples))
    for split in artifact_utils.decode_split_names(examples.split_names):
        rows = process_split(
            os.path.join(examples.uri, f"Split-{{split}}"),
            os.path.join(output_examples.uri, f"Split-{{split}}"),
            max_rows_per_split,
        )
        output_examples.set_int_custom_property(f"rows_{{split}}", rows)
'''

_EXECUTOR = '''"""The work of {cls}, one split at a time, testable without TFX."""

import glob
import os

__all__ = ["process_split"]


def process_split(input_dir: str, output_dir: str, max_rows: int = 0) -> int:
    """Writes the split's serialized tf.Examples to keep; returns how many were written."""
    import tensorflow as tf

    files = sorted(glob.glob(os.path.join(input_dir, "*")))
    os.makedirs(output_dir, exist_ok=True)
    written = 0
    output = os.path.join(output_dir, "data_tfrecord-00000-of-00001.gz")
    with tf.io.TFRecordWriter(output, options="GZIP") as writer:
        for record in tf.data.TFRecordDataset(files, compression_type="GZIP"):
            if max_rows and written >= max_rows:
                break
            writer.write(record.numpy())
            written += 1
    return written
'''

_CONFTEST = '''"""Lets the tests import `{name}` without installing it first."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
'''

_TEST = '''"""{cls} runs on a tiny Examples artifact: real files, no pipeline."""

import glob
import os

import tensorflow as tf
from tfx.types import artifact_utils, standard_artifacts

from {name}.component import {cls}

SPLITS = ["train", "eval"]


def _example(i: int) -> bytes:
    feature = {{"x": tf.train.Feature(float_list=tf.train.FloatList(value=[float(i)]))}}
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def _examples(folder, rows: int):
    artifact = standard_artifacts.Examples()
    artifact.uri = str(folder)
    artifact.split_names = artifact_utils.encode_split_names(SPLITS)
    for split in SPLITS:
        os.makedirs(os.path.join(artifact.uri, f"Split-{{split}}"))
        path = os.path.join(artifact.uri, f"Split-{{split}}", "data_tfrecord-00000-of-00001.gz")
        with tf.io.TFRecordWriter(path, options="GZIP") as writer:
            for i in range(rows):
                writer.write(_example(i))
    return artifact


def _count(folder: str) -> int:
    files = glob.glob(os.path.join(folder, "*"))
    return sum(1 for _ in tf.data.TFRecordDataset(files, compression_type="GZIP"))


def test_copies_at_most_max_rows_per_split(tmp_path):
    source = _examples(tmp_path / "in", rows=3)
    output = standard_artifacts.Examples()
    output.uri = str(tmp_path / "out")

    {cls}.test_call(examples=source, output_examples=output, max_rows_per_split=2)

    assert output.split_names == source.split_names
    for split in SPLITS:
        assert _count(os.path.join(output.uri, f"Split-{{split}}")) == 2
        assert output.get_int_custom_property(f"rows_{{split}}") == 2


def test_declares_its_ports_and_parameters():
    spec = {cls}.SPEC_CLASS
    assert spec.INPUTS["examples"].type is standard_artifacts.Examples
    assert spec.OUTPUTS["output_examples"].type is standard_artifacts.Examples
    assert spec.PARAMETERS["max_rows_per_split"].optional
'''


def new_component(name: str, parent_dir: str = ".") -> list[str]:
    """Writes the package `parent_dir/name/`; returns the files written.

    Raises:
        ScaffoldError: `name` is not a lowercase Python name, or the folder exists.
    """
    if not _NAME.match(name):
        raise ScaffoldError(
            f"`{name}` cannot name a component package. Expected a lowercase Python name (letters, digits, `_`, "
            f"starting with a letter). Received: `{name}`. Example: `drop_outliers`."
        )
    root = os.path.join(parent_dir, name)
    if os.path.exists(root):
        raise ScaffoldError(f"{root} already exists. Expected a new folder. Choose another name or --dir.")
    values = {"name": name, "cls": class_name_for(name), "dist": name.replace("_", "-"), "group": COMPONENT_GROUP}
    files = {
        "pyproject.toml": _PYPROJECT,
        "README.md": _README,
        f"{name}/__init__.py": '"""{cls}: a TFX component for yaml-tfx pipelines."""\n',
        f"{name}/component.py": _COMPONENT,
        f"{name}/executor.py": _EXECUTOR,
        "tests/conftest.py": _CONFTEST,
        f"tests/test_{name}.py": _TEST,
    }
    written = []
    for relative, template in files.items():
        path = os.path.join(root, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(template.format(**values))
        written.append(path)
    return written
