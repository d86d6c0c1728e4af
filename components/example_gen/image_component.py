"""ImageFolderExampleGen: TFX's FileBasedExampleGen over a folder of class sub-folders of JPEG/PNG images."""

from __future__ import annotations

from tfx.components.example_gen.component import FileBasedExampleGen
from tfx.dsl.components.base import executor_spec
from tfx.proto import example_gen_pb2

from components.example_gen import image_files, image_folder

__all__ = ["ImageFolderExampleGen"]


class ImageFolderExampleGen(FileBasedExampleGen):
    """ExampleGen writing one tf.Example (`image`, `label`, `height`, `width`) per readable image.

    Args:
        input_base: the folder holding one sub-folder per class.
        output_config: the output splits (default: TFX's train 2 : eval 1); split by a hash of the
            image's bytes unless it names its own `partition_feature_name`.
        input_config: which entries under `input_base` to read (default `*/*`: every class folder's
            entries, folders walked recursively).

    Example:
        >>> gen = ImageFolderExampleGen(input_base="data/flowers")
    """

    EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(image_folder.Executor)

    def __init__(
        self,
        input_base: str,
        output_config: example_gen_pb2.Output | None = None,
        input_config: example_gen_pb2.Input | None = None,
    ):
        input_config = input_config or example_gen_pb2.Input(
            splits=[example_gen_pb2.Input.Split(name="single_split", pattern=image_files.DEFAULT_PATTERN)]
        )
        super().__init__(input_base=input_base, input_config=input_config, output_config=output_config)
