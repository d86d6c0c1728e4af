"""Components the step tests use by `package.module:Name`: one of each kind the framework accepts."""

from typing import TypedDict

from tfx import types
from tfx.dsl.component.experimental.annotations import InputArtifact, Parameter
from tfx.dsl.component.experimental.decorators import component
from tfx.dsl.components.base import base_component, base_executor, executor_spec
from tfx.types import standard_artifacts
from tfx.types.component_spec import ChannelParameter, ExecutionParameter


class CountOutputs(TypedDict):
    rows: int


@component
def CountSplits(examples: InputArtifact[standard_artifacts.Examples], scale: Parameter[float] = 1.0) -> CountOutputs:
    """Counts the splits (a function component with a primitive output)."""
    return {"rows": int(len(examples.split_names) * scale)}


class CopySpec(types.ComponentSpec):
    INPUTS = {"examples": ChannelParameter(type=standard_artifacts.Examples)}
    OUTPUTS = {"copied": ChannelParameter(type=standard_artifacts.Examples)}
    PARAMETERS = {"suffix": ExecutionParameter(type=str, optional=True), "times": ExecutionParameter(type=int)}


class CopyExecutor(base_executor.BaseExecutor):
    def Do(self, input_dict, output_dict, exec_properties):  # noqa: N802 - TFX's name
        output_dict["copied"][0].split_names = input_dict["examples"][0].split_names


class CopyExamples(base_component.BaseComponent):
    """A full ComponentSpec + Executor component that keeps `BaseComponent.__init__(spec)`."""

    SPEC_CLASS = CopySpec
    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(CopyExecutor)


class CopyExamplesWithInit(base_component.BaseComponent):
    """The same, with the usual TFX constructor taking inputs and parameters by name."""

    SPEC_CLASS = CopySpec
    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(CopyExecutor)

    def __init__(self, examples, times: int, suffix: str = ""):
        copied = types.Channel(type=standard_artifacts.Examples)
        super().__init__(spec=CopySpec(examples=examples, times=times, suffix=suffix, copied=copied))


def not_a_component(examples):
    return examples
