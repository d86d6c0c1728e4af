"""TensorSpec.fits: the shape check on every request, and its memory of fitting shapes."""

from __future__ import annotations

import tensorflow as tf

from serving.server.model import servable
from serving.server.model.servable import TensorSpec


def test_a_shape_fits_where_every_known_size_matches():
    spec = TensorSpec("x", tf.float32, (None, 3))
    assert spec.fits((1, 3))
    assert spec.fits((7, 3))
    assert not spec.fits((1, 4))
    assert not spec.fits((3,))
    assert not spec.fits((1, 3, 1))


def test_an_unknown_rank_takes_any_shape_and_a_scalar_spec_only_scalars():
    assert TensorSpec("x", tf.float32, None).fits((2, 5, 9))
    scalar = TensorSpec("s", tf.float32, ())
    assert scalar.fits(())
    assert not scalar.fits((1,))


def test_a_remembered_shape_still_answers_the_same():
    spec = TensorSpec("x", tf.float32, (None, 3))
    assert spec.fits((2, 3)) and spec.fits((2, 3))
    assert not spec.fits((2, 4)) and not spec.fits((2, 4))  # refused shapes are not remembered as fitting


def test_hostile_shapes_cannot_grow_the_memory_past_its_bound():
    spec = TensorSpec("x", tf.float32, (None, 3))
    for rows in range(servable._MAX_FITTING_SHAPES * 4):
        assert spec.fits((rows, 3))
    assert len(spec._fitting) == servable._MAX_FITTING_SHAPES
    assert spec.fits((servable._MAX_FITTING_SHAPES * 10, 3))  # past the bound: still checked, not remembered
    assert not spec.fits((servable._MAX_FITTING_SHAPES * 10, 2))


def test_specs_compare_as_before_whatever_they_have_seen():
    seen, fresh = TensorSpec("x", tf.float32, (None, 3)), TensorSpec("x", tf.float32, (None, 3))
    seen.fits((1, 3))
    assert seen == fresh
    assert "_fitting" not in repr(seen)
