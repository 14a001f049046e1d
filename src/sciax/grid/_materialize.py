"""`materialize`: an intermediate field written once to memory, not recomputed inside each consumer.

XLA fuses cheap elementwise producers into their consumers, duplicating them where a
consumer reads the producer at several offsets. For a second derivative taken as two
first derivatives (`D- (b D+ p)`, the staggered wave operator) this recomputes the
`order`-point face field at each of the `order` offsets of the outer stencil: `order^2`
multiply-adds per point and axis instead of `2 order`, and at order 8 the fused kernel
measured 10-20x slower on XLA:CPU than with the face field stored. `lax.optimization_barrier`
does not help: XLA:CPU removes it before fusion. A conditional is a fusion boundary it keeps,
so the field goes through one whose predicate is always true but opaque to the compiler.
XLA:GPU removes that conditional too (seen on an H100, jax 0.11.2: the fused kernel was the same
with and without it), so on a GPU the field is fused and recomputed: `Leapfrog` takes its split
step there from order 6 instead (`sciax.pde.waves._leapfrog._split_pays`).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax import lax
from jaxtyping import Array, PyTree

_BITS = {4: jnp.int32, 8: jnp.int64}


def materialize(fn: Callable[..., PyTree[Array]], *operands: PyTree[Array]) -> PyTree[Array]:
    """`fn(*operands)`, computed into buffers of its own (a pytree of arrays, any shapes).

    Give `fn` whole arrays (not slices of them) and do the slicing inside: XLA would copy a
    sliced operand into a buffer first. Under `vmap` with the first operand batched the
    conditional becomes a select: the same values, possibly fused again. Differentiable
    (derivatives of `fn`); `jit`/`vmap` safe. If the first leaf of `operands` is not a non-empty
    float32/float64 array, `fn(*operands)` as is.
    """
    first = jnp.asarray(jax.tree_util.tree_leaves(operands)[0])
    bits = _BITS.get(first.dtype.itemsize)
    if first.size == 0 or not jnp.issubdtype(first.dtype, jnp.floating) or bits is None:
        return fn(*operands)
    word = lax.bitcast_convert_type(first.reshape(-1)[0], bits)
    # `word | 1` is never 0, whatever the bits (NaN included): the first branch is always taken.
    keep = (word | 1) != 0
    zeros = lambda *args: jax.tree_util.tree_map(jnp.zeros_like, jax.eval_shape(fn, *args))  # noqa: E731
    return lax.cond(keep, fn, zeros, *operands)
