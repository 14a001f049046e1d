"""Lane programs: a one-member JAX function rewritten to act on a block of members at once.

The ensemble kernels integrate one trajectory per GPU thread. Inside a kernel
every value must be a flat vector over the block's members ("lanes"), since a
Triton program cannot slice or reshape small per-member arrays held in
registers. A lane program takes a function written for one member (the user's
right-hand side `f(t, y, p)` with `y` of shape `(n,)`), traces it once to a
jaxpr, and evaluates that jaxpr with every *element* of every array replaced by
a lane vector of shape `(B,)`: an array of shape `S` becomes a NumPy object
array of shape `S` whose entries are lane vectors or, where they do not depend
on the members, plain constants. Elementwise primitives apply lane by lane;
data movement (slices, reshapes, gathers with constant indices, concatenation)
is resolved at trace time by moving the elements themselves; sums and
products over small axes unroll. This is the code generation DiffEqGPU does
through ModelingToolkit and static arrays, done on the jaxpr.

Only what a small right-hand side needs is supported: elementwise arithmetic
and comparisons, `jnp.where`, reductions, `dot_general`, indexing with constant
indices, nested calls (`jit`, `custom_jvp`, `checkpoint`), `lax.scan` of static
length (unrolled) and `lax.cond` (both branches run, per-lane select). A
`while` loop raises `LaneError` naming the primitive, and the ensemble falls back to
`jax.vmap` (or refuses, when the kernel path is forced).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend import core as jex_core

_ELEMENTWISE = frozenset(
    """abs acos acosh add add_any and asin asinh atan atan2 atanh cbrt ceil clamp convert_element_type
    copy cos cosh div eq erf erf_inv erfc exp exp2 expm1 floor ge gt integer_pow is_finite
    le lgamma digamma log log1p logistic lt max min mul ne neg nextafter not one_minus_square or pow reduce_precision
    rem round rsqrt select_n sign sin sinh sqrt square stop_gradient sub tan tanh xor""".split()
)
_MOVES = frozenset(
    """broadcast_in_dim reshape squeeze expand_dims transpose slice dynamic_slice dynamic_update_slice
    concatenate pad rev gather scatter stack unstack split""".split()
)
_REDUCERS = {
    "reduce_sum": lax.add,
    "reduce_max": lax.max,
    "reduce_min": lax.min,
    "reduce_prod": lax.mul,
    "reduce_and": lax.bitwise_and,
    "reduce_or": lax.bitwise_or,
}
_CALL_PARAMS = ("jaxpr", "call_jaxpr", "fun_jaxpr")


class LaneError(NotImplementedError):
    """The function uses an operation that a lane program cannot run per member."""


def is_lane(x) -> bool:
    """Whether `x` is a lane vector (depends on the members) rather than a constant."""
    return not isinstance(x, (np.generic, np.ndarray, int, float, bool, complex))


def _constant_array(value) -> np.ndarray:
    arr = np.asarray(value)
    out = np.empty(arr.shape, dtype=object)
    for idx in np.ndindex(arr.shape):
        out[idx] = arr[idx]
    return out


def _all_constant(values) -> bool:
    return all(not is_lane(e) for v in values for e in v.flat)


def _stack_constant(values: np.ndarray, dtype) -> np.ndarray:
    return np.asarray([e for e in values.flat], dtype=dtype).reshape(values.shape)


class _Evaluator:
    """Evaluates one jaxpr on object arrays of lane vectors of shape `lane_shape`."""

    def __init__(self, lane_shape: tuple[int, ...]):
        self.lane_shape = lane_shape

    def lane(self, x, dtype):
        if is_lane(x):
            return x if x.dtype == dtype else lax.convert_element_type(x, dtype)
        return jnp.full(self.lane_shape, x, dtype=dtype)

    def run(self, jaxpr, consts, args):
        env = {}

        def read(v):
            if isinstance(v, jex_core.Literal):
                return _constant_array(v.val)
            return env[v]

        for v, c in zip(jaxpr.constvars, consts):
            env[v] = _constant_array(c)
        for v, a in zip(jaxpr.invars, args):
            env[v] = a
        for eqn in jaxpr.eqns:
            ins = [read(v) for v in eqn.invars]
            outs = self.equation(eqn, ins)
            for v, o in zip(eqn.outvars, outs):
                env[v] = o
        return [read(v) for v in jaxpr.outvars]

    def equation(self, eqn, ins):
        name = eqn.primitive.name
        if _all_constant(ins) and name not in ("while", "scan"):
            return self.constant(eqn, ins)
        if name == "scan":
            return self.scan(eqn, ins)
        if name == "polynomial":
            return [self.polynomial(eqn, ins)]
        inner = next((eqn.params[p] for p in _CALL_PARAMS if p in eqn.params), None)
        if inner is not None and name not in ("while", "cond"):
            return self.call(inner, ins)
        if name in _ELEMENTWISE:
            return [self.elementwise(eqn, ins)]
        if name in _MOVES:
            return self.move(eqn, ins)
        if name in _REDUCERS:
            return [self.reduce(_REDUCERS[name], ins[0], eqn.params["axes"])]
        if name == "dot_general":
            return [self.dot_general(eqn, ins)]
        if name == "cond":
            return self.cond(eqn, ins)
        raise LaneError(
            f"the ensemble kernel cannot run the primitive {name!r} per member; "
            "write the right-hand side with elementwise operations, or use path='vmap'"
        )

    def constant(self, eqn, ins):
        args = [_stack_constant(x, v.aval.dtype) for x, v in zip(ins, eqn.invars)]
        with jax.ensure_compile_time_eval():
            outs = eqn.primitive.bind(*args, **eqn.params)
        outs = outs if eqn.primitive.multiple_results else [outs]
        return [_constant_array(np.asarray(o)) for o in outs]

    def call(self, inner, ins):
        if hasattr(inner, "jaxpr") and hasattr(inner, "consts"):
            return self.run(inner.jaxpr, inner.consts, ins)
        return self.run(inner, (), ins)

    def elementwise(self, eqn, ins):
        shape = eqn.outvars[0].aval.shape
        dtypes = [v.aval.dtype for v in eqn.invars]
        out = np.empty(shape, dtype=object)
        ins = [np.broadcast_to(x, shape) for x in ins]
        for idx in np.ndindex(shape):
            elems = [x[idx] for x in ins]
            if not any(is_lane(e) for e in elems):
                out[idx] = self.constant(eqn, [_constant_array(e) for e in elems])[0][()]
                continue
            out[idx] = eqn.primitive.bind(*[self.lane(e, d) for e, d in zip(elems, dtypes)], **eqn.params)
        return out

    def move(self, eqn, ins):
        """Data movement: run the primitive on element positions, then move the elements."""
        data = [i for i, v in enumerate(eqn.invars) if _is_data(eqn, i)]
        flat, offset, proxies = [], 0, list(ins)
        for i in data:
            flat.extend(ins[i].flat)
            proxies[i] = (np.arange(ins[i].size) + offset).reshape(ins[i].shape).astype(np.int32)
            offset += ins[i].size
        for i, x in enumerate(proxies):
            if i not in data:
                if not _all_constant([x]):
                    raise LaneError(
                        f"the ensemble kernel needs constant indices for {eqn.primitive.name!r}; "
                        "an index that depends on the state cannot be resolved per member (use path='vmap')"
                    )
                proxies[i] = _stack_constant(x, eqn.invars[i].aval.dtype)
        with jax.ensure_compile_time_eval():
            outs = eqn.primitive.bind(*proxies, **eqn.params)
        outs = outs if eqn.primitive.multiple_results else [outs]
        results = []
        for pos in map(np.asarray, outs):
            out = np.empty(pos.shape, dtype=object)
            for idx in np.ndindex(pos.shape):
                out[idx] = flat[int(pos[idx])]
            results.append(out)
        return results

    def reduce(self, op, x, axes):
        keep = [a for a in range(x.ndim) if a not in axes]
        moved = np.transpose(x, keep + list(axes))
        groups = moved.reshape(moved.shape[: len(keep)] + (-1,))
        out = np.empty(groups.shape[:-1], dtype=object)
        for idx in np.ndindex(out.shape):
            out[idx] = self.fold(op, list(groups[idx]))
        return out

    def fold(self, op, elems):
        acc = elems[0]
        for e in elems[1:]:
            if is_lane(acc) or is_lane(e):
                dtype = (acc if is_lane(acc) else e).dtype
                acc = op(self.lane(acc, dtype), self.lane(e, dtype))
            else:
                acc = _fold_constant(op, acc, e)
        return acc

    def dot_general(self, eqn, ins):
        (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
        lhs, rhs = ins
        dtype = eqn.outvars[0].aval.dtype
        lf = [a for a in range(lhs.ndim) if a not in lc and a not in lb]
        rf = [a for a in range(rhs.ndim) if a not in rc and a not in rb]
        lhs = np.transpose(lhs, list(lb) + lf + list(lc))
        rhs = np.transpose(rhs, list(rb) + rf + list(rc))
        nb, ncon = len(lb), len(lc)
        bshape, lfs, rfs = lhs.shape[:nb], lhs.shape[nb : lhs.ndim - ncon], rhs.shape[nb : rhs.ndim - ncon]
        out = np.empty(bshape + lfs + rfs, dtype=object)
        csize = int(np.prod(lhs.shape[lhs.ndim - ncon :], dtype=int))
        for b in np.ndindex(bshape):
            for i in np.ndindex(lfs):
                for j in np.ndindex(rfs):
                    lrow = lhs[b + i].reshape(csize)
                    rrow = rhs[b + j].reshape(csize)
                    out[b + i + j] = self.sum_of_products(lrow, rrow, dtype)
        return out

    def sum_of_products(self, a, b, dtype):
        terms = []
        for x, y in zip(a, b):
            if (not is_lane(x) and x == 0) or (not is_lane(y) and y == 0):
                continue
            if not is_lane(x) and not is_lane(y):
                terms.append(np.asarray(x * y, dtype=dtype)[()])
            else:
                terms.append(lax.mul(self.lane(x, dtype), self.lane(y, dtype)))
        if not terms:
            return np.zeros((), dtype=dtype)[()]
        return self.fold(lax.add, terms)

    def scan(self, eqn, ins):
        """A scan of static length (e.g. `jnp.polyval`), unrolled."""
        p = eqn.params
        n_consts, n_carry = _scan_counts(eqn)
        length = p["length"]
        consts, carry, xs = ins[:n_consts], ins[n_consts : n_consts + n_carry], ins[n_consts + n_carry :]
        steps = range(length - 1, -1, -1) if p["reverse"] else range(length)
        ys = [np.empty((length,) + v.aval.shape[1:], dtype=object) for v in eqn.outvars[n_carry:]]
        for i in steps:
            out = self.call(p["jaxpr"], consts + carry + [x[i] for x in xs])
            carry = out[:n_carry]
            for buffer, y in zip(ys, out[n_carry:]):
                buffer[i] = y
        return carry + ys

    def polynomial(self, eqn, ins):
        """`polynomial(x, c0, c1, ...) = sum_k c_k x^k` (jax >= 0.12's `jnp.polyval`), by Horner's rule."""
        shape, dtype = eqn.outvars[0].aval.shape, eqn.outvars[0].aval.dtype
        x, *coefficients = (np.broadcast_to(v, shape) for v in ins)
        out = np.empty(shape, dtype=object)
        for idx in np.ndindex(shape):
            acc = coefficients[-1][idx]
            for c in reversed(coefficients[:-1]):
                acc = self.fold(lax.add, [self.fold(lax.mul, [acc, x[idx]]), c[idx]])
            out[idx] = self.lane(acc, dtype) if is_lane(acc) else acc
        return out

    def cond(self, eqn, ins):
        index, *operands = ins
        branches = eqn.params["branches"]
        if not is_lane(index[()]):
            return self.call(branches[int(index[()])], operands)
        results = [self.call(br, operands) for br in branches]
        idx = self.lane(index[()], jnp.int32)
        outs = []
        for k, v in enumerate(eqn.outvars):
            shape, dtype = v.aval.shape, v.aval.dtype
            out = np.empty(shape, dtype=object)
            for pos in np.ndindex(shape):
                cases = [self.lane(r[k][pos], dtype) for r in results]
                out[pos] = lax.select_n(idx, *cases) if len(cases) > 2 else lax.select_n(idx != 0, *cases)
            outs.append(out)
        return outs


def _fold_constant(op, a, b):
    with jax.ensure_compile_time_eval():
        return np.asarray(op(np.asarray(a), np.asarray(b)))[()]


def _scan_counts(eqn) -> tuple[int, int]:
    """Numbers of constants and carries of a scan (its parameters changed across jax releases)."""
    p = eqn.params
    if "num_consts" in p:
        return p["num_consts"], p["num_carry"]
    try:
        consts, carry, _ = p["ft_in"].unpack()
        return len(consts), len(carry)
    except (KeyError, AttributeError, TypeError, ValueError) as err:
        raise LaneError(f"the ensemble kernel cannot read this jax release's scan ({sorted(p)})") from err


def _is_data(eqn, i: int) -> bool:
    """Which operands of a data-movement primitive carry elements (the rest are indices)."""
    name = eqn.primitive.name
    if name in ("dynamic_slice", "gather"):
        return i == 0
    if name == "dynamic_update_slice":
        return i in (0, 1)
    if name == "scatter":
        return i in (0, 2)
    return True


class LaneProgram:
    """A one-member function compiled to act on lane vectors.

    `LaneProgram(fn, *example_args)` traces `fn(*example_args)` (one member's
    arguments, any pytrees of arrays). Calling it with the same pytrees whose
    leaves are object arrays of lane vectors (see `split`) returns the outputs in
    the same form. `lane_shape` is the shape of every lane vector, e.g. `(B,)`.
    """

    def __init__(self, fn: Callable, *example_args):
        closed, out_shape = jax.make_jaxpr(fn, return_shape=True)(*example_args)
        self.closed = closed
        self.in_tree = jax.tree_util.tree_structure(example_args)
        self.out_tree = jax.tree_util.tree_structure(out_shape)
        self.out_shapes = out_shape
        self.in_avals = jax.tree_util.tree_map(
            lambda x: jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x)), example_args
        )

    def check(self) -> None:
        """Raise `LaneError` now if the function cannot run as a lane program (traced, not run)."""

        def run():
            args = jax.tree_util.tree_map(lambda s: split(jnp.zeros(s.shape + (1,), s.dtype)), self.in_avals)
            self((1,), *args)

        jax.make_jaxpr(run)()

    def __call__(self, lane_shape: tuple[int, ...], *args):
        leaves = self.in_tree.flatten_up_to(args)
        leaves = [_as_elements(x) for x in leaves]
        outs = _Evaluator(tuple(lane_shape)).run(self.closed.jaxpr, self.closed.consts, leaves)
        return jax.tree_util.tree_unflatten(self.out_tree, outs)


def _as_elements(x) -> np.ndarray:
    """An object array of elements: kept if it is one, a lane vector as a 0-d array, constants split."""
    if isinstance(x, np.ndarray) and x.dtype == object:
        return x
    if is_lane(x):
        out = np.empty((), dtype=object)
        out[()] = x
        return out
    return _constant_array(x)


def split(x) -> np.ndarray:
    """A batched array of shape `(*S, B)` (members last) as an object array of shape `S` of lane vectors."""
    shape = x.shape[:-1]
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(shape):
        out[idx] = x[idx]
    return out


def join(elements: np.ndarray, lane_shape, dtype) -> jax.Array:
    """The inverse of `split`: an object array of lanes (or constants) as one array of shape `(*S, B)`."""
    ev = _Evaluator(tuple(lane_shape))
    flat = [ev.lane(e, dtype) for e in elements.flat]
    if not flat:
        return jnp.zeros(elements.shape + tuple(lane_shape), dtype)
    return jnp.stack(flat).reshape(elements.shape + tuple(lane_shape))


def lanewise(op, *xs: np.ndarray) -> np.ndarray:
    """Apply `op` to matching elements of object arrays (NumPy broadcasting)."""
    xs = np.broadcast_arrays(*xs)
    out = np.empty(xs[0].shape, dtype=object)
    for idx in itertools.product(*map(range, xs[0].shape)):
        out[idx] = op(*[x[idx] for x in xs])
    return out
