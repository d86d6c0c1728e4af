"""Steps, their typed ports, and what each input reads.

A `Node` is one step: its inputs (artifact type, required or not), its
outputs (artifact type), and `wiring`, which output each input reads. A
custom node may `replace` an output: built-in nodes that read it read the
custom node's output of the same type instead. `Graph.effective_wiring`
applies those replacements; rules look at the result.
"""

from __future__ import annotations

import dataclasses
import graphlib
import heapq
import re
from typing import Optional

__all__ = ["Port", "Ref", "Node", "Graph", "parse_ref"]

_REF = re.compile(r"^([A-Za-z_][\w-]*)\.([A-Za-z_]\w*)$")


@dataclasses.dataclass(frozen=True)
class Port:
    """An input: the artifact type it takes (TFX `TYPE_NAME`) and whether it may stay unwired."""

    type_name: str
    optional: bool = False


@dataclasses.dataclass(frozen=True)
class Ref:
    """`step.output`: one output of one step."""

    step: str
    output: str

    def __str__(self) -> str:
        return f"{self.step}.{self.output}"


def parse_ref(text: str) -> Optional[Ref]:
    """`"ExampleGen.examples"` -> Ref; None when the text is not `Step.output`."""
    match = _REF.match(text.strip()) if isinstance(text, str) else None
    return Ref(match.group(1), match.group(2)) if match else None


@dataclasses.dataclass
class Node:
    """One step. `yaml_path` (custom steps only) is where the spec declares it, e.g. `steps[0]`."""

    id: str
    inputs: dict[str, Port]
    outputs: dict[str, str]
    wiring: dict[str, Ref] = dataclasses.field(default_factory=dict)
    custom: bool = False
    replaces: Optional[Ref] = None
    yaml_path: Optional[str] = None
    # Input names the spec gave that the component does not have (kept for the rules to report).
    unknown_inputs: tuple[str, ...] = ()

    def output_of_type(self, type_name: str) -> list[str]:
        return [name for name, output_type in self.outputs.items() if output_type == type_name]


@dataclasses.dataclass
class Graph:
    nodes: dict[str, Node]

    def replacement_for(self, ref: Ref) -> Optional[Ref]:
        """The custom output that takes the place of `ref`, or None."""
        source = self.nodes.get(ref.step)
        if source is None or ref.output not in source.outputs:
            return None
        for node in self.nodes.values():
            if node.custom and node.replaces == ref:
                names = node.output_of_type(source.outputs[ref.output])
                if len(names) == 1:
                    return Ref(node.id, names[0])
        return None

    def effective_wiring(self, node: Node) -> dict[str, Ref]:
        """What `node` really reads: replacements applied, in chains, to built-in nodes only."""
        if node.custom:
            return dict(node.wiring)
        result = {}
        for name, ref in node.wiring.items():
            seen = {ref}
            while (replacement := self.replacement_for(ref)) is not None and replacement not in seen:
                seen.add(replacement)
                ref = replacement
            result[name] = ref
        return result

    def upstream(self, node: Node) -> set[str]:
        return {ref.step for ref in self.effective_wiring(node).values() if ref.step in self.nodes}

    def _sorter(self, *, readers_first: bool = False) -> graphlib.TopologicalSorter:
        """The step graph for graphlib, nodes in declaration order.

        By default a node comes after the steps it reads. With `readers_first` the edges are
        reversed, so that graphlib's cycle search walks from each step to the steps it reads,
        in sorted order: the walk (and so the cycle it names) the spec's authors see.
        """
        sorter: graphlib.TopologicalSorter = graphlib.TopologicalSorter()
        for node_id in self.nodes:
            sorter.add(node_id)
        for node_id, node in self.nodes.items():
            for producer in sorted(self.upstream(node)):
                if readers_first:
                    sorter.add(producer, node_id)
                else:
                    sorter.add(node_id, producer)
        return sorter

    def find_cycle(self) -> Optional[list[str]]:
        """One cycle as a list of node ids, producers first (first repeated at the end), or None.

        Which cycle, when there are several: the first that a walk from each node in
        declaration order, through the steps it reads in sorted order, comes upon.
        """
        try:
            self._sorter(readers_first=True).prepare()
        except graphlib.CycleError as error:
            return list(reversed(error.args[1]))
        return None

    def topological_order(self) -> list[str]:
        """Node ids, producers first; among steps that are ready, the one declared first.

        Raises:
            graphlib.CycleError: the steps form a cycle (`check_graph` reports it first).
        """
        sorter = self._sorter()
        sorter.prepare()
        position = {node_id: index for index, node_id in enumerate(self.nodes)}
        ready: list[tuple[int, str]] = []
        order: list[str] = []
        while sorter.is_active():
            for node_id in sorter.get_ready():
                heapq.heappush(ready, (position[node_id], node_id))
            _, node_id = heapq.heappop(ready)
            order.append(node_id)
            sorter.done(node_id)
        return order
