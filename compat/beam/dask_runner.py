"""Beam 2.74's DaskRunner, with the translation fixes TFX's Beam pipelines need (see `AllSinksDaskRunner`).

What: a fork of Beam's Dask translation (`apache_beam/runners/dask/`): its own
visitor and ParDo translation, built on Beam's private `common._OutputHandler`,
`dask.overrides._Read`, `DaskOptions._extract_bag_kwargs` and a side input's
`_view_options()` / `_window_mapping_fn`, as Beam's own translation uses them.

Why: Beam 2.74's DaskRunner computes only the last sink, translates no
`Read`, drops `finish_bundle`'s outputs and the output tags, recomputes side
inputs inside every task and leaves its client open; TFX's pipelines hit all
five. Beam has no hook to replace a translation, hence the fork. The fixes,
as a patch to send upstream: `compat/beam_dask.patch`.

Pinned: apache-beam `compat.beam.PINNED`. Shape check (`ENTRY`, made when a pipeline
runs): the private names above exist, `_OutputHandler` takes the keyword
arguments used here, and the translation table and helpers of
`transform_evaluator` are there; otherwise `AllSinksDaskRunner` runs the
pipeline as Beam's own DaskRunner does (one log line).

Selected by `orchestrator.beam: {runner: dask}` through `pipelines.beam.dask`,
which names this module only then: it needs `dask` and `distributed`.
"""

from __future__ import annotations

import dataclasses

import apache_beam
import dask.bag as db
from apache_beam import DoFn, TaggedOutput, pvalue
from apache_beam.pipeline import PipelineVisitor
from apache_beam.runners.common import DoFnContext, DoFnInvoker, DoFnSignature, _OutputHandler
from apache_beam.runners.dask import transform_evaluator
from apache_beam.runners.dask.dask_runner import DaskOptions, DaskRunner, DaskRunnerResult
from apache_beam.runners.dask.overrides import _Read
from apache_beam.transforms.sideinputs import SideInputMap
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

import compat

# A bounded source is read in bundles of about this many bytes, one Dask partition each.
_BUNDLE_BYTES = 64 * 2**20

__all__ = ["ENTRY", "AllSinksDaskRunner", "shape_problem"]

ENTRY = "compat.beam.dask_runner"
_HANDLER_ARGUMENTS = (
    "window_fn",
    "main_receivers",
    "tagged_receivers",
    "per_element_output_counter",
    "output_batch_converter",
    "process_yields_batches",
    "process_batch_yields_elements",
)
_EVALUATOR_NAMES = ("DaskBagOp", "ParDo", "Flatten", "NoOp", "OneReceiver", "TRANSLATIONS", "get_windowed_value")


def shape_problem() -> str | None:
    """None when Beam's Dask translation has the pieces this fork builds on, else what differs."""
    from apache_beam.pvalue import AsSideInput

    missing = [name for name in _EVALUATOR_NAMES if not hasattr(transform_evaluator, name)]
    if missing:
        return f"apache_beam.runners.dask.transform_evaluator has no {', '.join(missing)}"
    receivers = transform_evaluator.OneReceiver()
    try:  # a Cython class: its signature cannot be read, so one is built as `_run_bundle` builds it
        arguments = {**dict.fromkeys(_HANDLER_ARGUMENTS), "main_receivers": receivers[None]}
        _OutputHandler(**{**arguments, "tagged_receivers": receivers, "process_yields_batches": False})
    except TypeError as error:
        return f"apache_beam.runners.common._OutputHandler differs: {error}"
    if not callable(getattr(DaskOptions, "_extract_bag_kwargs", None)):
        return "DaskOptions has no `_extract_bag_kwargs`"
    if not callable(getattr(AsSideInput, "_view_options", None)):
        return "AsSideInput has no `_view_options`"
    if "client" not in {field.name for field in dataclasses.fields(DaskRunnerResult)}:
        return "DaskRunnerResult has no `client`"
    return None


@dataclasses.dataclass
class _ClosingResult(DaskRunnerResult):
    """Beam's result, closing the client it opened once the pipeline is done."""

    def wait_until_finish(self, duration=None) -> str:
        try:
            return super().wait_until_finish(duration)
        finally:
            self.client.close()


def _read_bundles(bundles) -> list:
    """The records of a partition of `SourceBundle`s."""
    return [
        record
        for bundle in bundles
        for record in bundle.source.read(bundle.source.get_range_tracker(bundle.start_position, bundle.stop_position))
    ]


class _ReadBoundedSource(transform_evaluator.DaskBagOp):
    """`beam.io.Read(source)`: the source's bundles as partitions of a Dask bag.

    Beam 2.74 replaces `Read` by its `_Read` but has no translation for it, so the
    read becomes an empty input (`None`) and the next step fails. Every TFXIO read
    (`ReadFromTFRecord`, what StatisticsGen, Transform and the Evaluator read
    examples with) is such a `Read`.
    """

    def apply(self, input_bag, side_inputs=None):
        bundles = list(self.transform.source.split(desired_bundle_size=_BUNDLE_BYTES))
        return db.from_sequence(bundles, npartitions=max(1, len(bundles))).map_partitions(_read_bundles)


def _concat(parts) -> list:
    return [item for part in parts for item in part]


def _broadcast(bag, npartitions: int):
    """A bag of `npartitions` partitions, each holding all of `bag`: a side input for every bundle of a ParDo.

    Passing the side input as a Dask `Item` or `Delayed` instead makes Dask optimise its
    graph apart from the rest; the fused copies of shared steps then run twice (a file
    sink's initialisation, which makes a temporary folder, included).
    """
    name = f"beam-side-input-{tokenize(bag.name, npartitions)}"
    parts = [(bag.name, i) for i in range(bag.npartitions)]
    layer = {(name, i): (_concat, parts) for i in range(npartitions)}
    return db.Bag(HighLevelGraph.from_collections(name, layer, dependencies=[bag]), name, npartitions)


def _run_bundle(items, do_fn, window_fn, invoker_kwargs, side_views, *side_values) -> list:
    """One Dask partition through a DoFn: `(tag, element)` pairs, `finish_bundle`'s outputs included."""
    receivers = transform_evaluator.OneReceiver()  # a new one per bundle: nothing carries over between partitions
    handler = _OutputHandler(
        window_fn=window_fn,
        main_receivers=receivers[None],
        tagged_receivers=receivers,
        per_element_output_counter=None,
        output_batch_converter=None,
        process_yields_batches=False,
        process_batch_yields_elements=False,
    )
    side_inputs = [
        SideInputMap(view, options, [transform_evaluator.get_windowed_value(item, window_fn) for item in items])
        for (view, options, window_fn), items in zip(side_views, side_values)
    ]
    invoker = DoFnInvoker.create_invoker(
        DoFnSignature(do_fn), handler, side_inputs=side_inputs or None, **invoker_kwargs
    )
    invoker.invoke_setup()
    invoker.invoke_start_bundle()
    for item in items:
        invoker.invoke_process(item)
    invoker.invoke_finish_bundle()
    invoker.invoke_teardown()
    return [
        (output.tag, output.value.value) if isinstance(output, TaggedOutput) else (None, output.value)
        for output in receivers.values
    ]


class _TaggedParDo(transform_evaluator.ParDo):
    """Beam's ParDo translation, keeping what it drops: the output tags and `finish_bundle`'s outputs.

    Beam 2.74's collects a bundle's outputs before `finish_bundle` (a file sink's
    `_WriteBundleDoFn` reports its written file there: ExampleGen's splits come out
    empty) and untags them, so every output of a multi-output ParDo (`Partition`,
    `with_outputs`) receives all elements. Here each element keeps its tag and
    consumers select theirs (`_DaskVisitor`).
    """

    def apply(self, input_bag, side_inputs=None):
        transform = self.transform
        args, kwargs = transform.raw_side_inputs
        main_input = next(iter(self.applied.main_inputs.values()))
        window_fn = main_input.windowing.windowfn if hasattr(main_input, "windowing") else None
        invoker_kwargs = dict(
            context=DoFnContext(transform.label, state=None),
            input_args=list(args),
            input_kwargs=kwargs,
            user_state_context=None,
            bundle_finalizer_param=DoFn.BundleFinalizerParam(),
        )
        return input_bag.map(transform_evaluator.get_windowed_value, window_fn).map_partitions(
            _run_bundle,
            transform.fn,
            window_fn,
            invoker_kwargs,
            [view for view, _ in side_inputs or ()],
            *[_broadcast(bag, input_bag.npartitions) for _, bag in side_inputs or ()],
        )


def _select(bag, tag):
    """The elements of a tagged ParDo bag that carry `tag` (None: the main output)."""
    return bag.filter(lambda pair: pair[0] == tag).map(lambda pair: pair[1])


class _DaskVisitor(PipelineVisitor):
    """Beam's `DaskRunner.to_dask_bag_visitor`, with the translations above and tag selection on every input."""

    def __init__(self, bag_kwargs: dict):
        self.bags: dict = {}
        self._bag_kwargs = bag_kwargs
        self._tagged: set = set()
        self._translations = {
            **transform_evaluator.TRANSLATIONS,
            apache_beam.ParDo: _TaggedParDo,
            _Read: _ReadBoundedSource,
        }

    def _bag_of(self, value):
        bag = self.bags.get(value.producer)
        return _select(bag, value.tag) if value.producer in self._tagged else bag

    def visit_transform(self, node) -> None:
        op = self._translations.get(node.transform.__class__, transform_evaluator.NoOp)(
            node, bag_kwargs=self._bag_kwargs
        )
        inputs = [None if isinstance(value, pvalue.PBegin) else self._bag_of(value) for value in node.inputs]
        if isinstance(op, transform_evaluator.Flatten):
            input_bag = inputs
        else:
            input_bag = inputs[0] if inputs else None
        # Side inputs are part of the graph, computed once; Beam's visitor gives every DoFn an iterator
        # that recomputes the side input's whole upstream graph inside the task (a file sink's
        # initialisation ran again for each, leaving `beam-temp-*` folders in the artifacts).
        side_inputs = [
            (
                (type(side), side._view_options(), side._window_mapping_fn),  # as Beam's visitor does
                self._bag_of(side.pvalue),
            )
            for side in node.side_inputs
        ]
        self.bags[node] = op.apply(input_bag=input_bag, side_inputs=side_inputs or None)
        if isinstance(op, _TaggedParDo):
            self._tagged.add(node)

    def sinks(self) -> list:
        """The bags nothing else reads: computing them all runs the whole pipeline."""
        consumed = set()
        for node in self.bags:
            consumed.update(value.producer for value in node.inputs)
            consumed.update(side.pvalue.producer for side in node.side_inputs)
        return [bag for node, bag in self.bags.items() if node not in consumed and bag is not None]


class AllSinksDaskRunner(DaskRunner):
    """Beam 2.74's DaskRunner with its translation fixed for TFX's pipelines.

    Beam's `DaskRunner.run_pipeline` computes only the Dask bag of the last transform it
    visited, assuming it depends on all others; a pipeline with several sinks (ExampleGen
    writes one TFRecord set per split) then runs its last branch only and still reports
    success. This runner computes every sink, as one graph (Dask optimises separate
    collections apart, and shared steps then run once per collection), and translates
    with `_DaskVisitor`: reads (`_ReadBoundedSource`), tagged outputs and `finish_bundle`
    (`_TaggedParDo`), side inputs computed once (`_broadcast`).
    """

    def run_pipeline(self, pipeline, options):
        if not compat.check_shape(ENTRY, shape_problem):
            return super().run_pipeline(pipeline, options)
        import dask.distributed as ddist
        from apache_beam.runners.dask.overrides import dask_overrides

        dask_options = options.view_as(DaskOptions).get_all_options(drop_default=True, current_only=True)
        bag_kwargs = DaskOptions._extract_bag_kwargs(dask_options)  # Beam's own parser
        client = ddist.Client(**dask_options)
        pipeline.replace_all(dask_overrides())
        visitor = _DaskVisitor(bag_kwargs)
        pipeline.visit(visitor)
        # One collection, not optimised: Dask optimises separate collections apart, and a step they share then
        # ran once for each (a sink's initialisation, which makes a temporary folder, included). Unfused, each
        # Beam transform is its own task and runs once; fusing made the taxi run at x10 rows no faster.
        futures = [client.compute(db.concat(visitor.sinks()), optimize_graph=False)]
        return _ClosingResult(client, futures)
