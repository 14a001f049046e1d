"""Find a Jacobian's sparsity pattern symbolically, by propagating input indices through the jaxpr.

The function is traced once to a jaxpr for the shape and dtype of its input, and
every element of every intermediate array is given the set of input elements it
depends on: input element `i` starts with `{i}`, constants with the empty set.
The sets of an array are held together as one scipy sparse matrix of shape
`(elements, n)`, so an elementwise operation is a sparse OR of its operands'
rows (broadcast), data movement is a row gather and a reduction a sparse
product with a 0/1 matrix: time and memory scale with the pattern's size, not
with `n^2`. This is the index propagation of SparseConnectivityTracer.jl
(Hill & Dalle, 2025), done on the jaxpr instead of with operator overloading.

Only *differentiable* dependence is tracked, so the result is the pattern of the
Jacobian that `jax.jvp` computes: integer and boolean values (comparisons,
`argmax`, indices) carry no set, and `jnp.where` with a constant mask, a
product with a constant zero and a `dot_general` with structural zeros in a
constant operand keep only the entries that can be nonzero. Anything that
depends on the state in a way not resolved element by element is treated
conservatively (a superset, never a missing entry): indices that depend on the
state make every output element depend on the whole operand, `lax.cond` on a
state-dependent predicate takes the union of its branches, and `while` loops
(and scans longer than 64 steps) iterate the carry's sets to a fixed point.
Cancellation (`x - x`) is not detected; the pattern may hold entries that are
zero at every state.

Supported: elementwise arithmetic and comparisons, `select_n`, type conversion;
data movement (slices, `dynamic_slice`/`dynamic_update_slice`, `gather`/
`scatter*` with constant indices, concatenation, padding, reshapes, transposes,
reversal, broadcasts, hence `jnp.roll` and `x[idx]`); reductions and cumulative
reductions; `dot_general`; sort; nested calls (`jit`, `custom_jvp`, `custom_vjp`
(the primal), `checkpoint`); `cond`, `scan`, `while`. A primitive outside this
list that receives a state-dependent value (e.g. `conv_general_dilated`, `fft`,
linear solves) raises `SparsityTracerError` naming it (no silent dense fallback:
a dense pattern would make a sparse solve as slow as a dense one without saying so).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
from jax import lax
from jax.extend import core as jex_core
from jaxtyping import Array, Float

from ._sparsity_pattern import SparsityPattern

_ELEMENTWISE = frozenset(
    """abs acos acosh add add_any asin asinh atan atan2 atanh cbrt clamp conj convert_element_type copy copy_p
    cos cosh digamma div erf erf_inv erfc exp exp2 expm1 igamma igammac imag integer_pow lgamma log log1p logistic
    max min mul neg nextafter one_minus_square polygamma pow real reduce_precision rem rsqrt sin sinh sqrt square
    stop_gradient sub tan tanh bessel_i0e bessel_i1e complex""".split()
)
_MOVES = frozenset(
    """broadcast_in_dim reshape squeeze expand_dims transpose slice dynamic_slice dynamic_update_slice
    concatenate pad rev gather split stack unstack""".split()
)
_REDUCERS = frozenset("reduce_sum reduce_max reduce_min reduce_prod argmax argmin".split())
_CUMULATIVE = frozenset("cumsum cumprod cummax cummin cumlogsumexp".split())
_CALL_PARAMS = ("jaxpr", "call_jaxpr", "fun_jaxpr")
_UNROLL = 64  # scans up to this length run step by step (exact); longer ones iterate to a fixed point


class SparsityTracerError(NotImplementedError):
    """The function uses an operation whose dependence structure the tracer does not know."""


class _Dep:
    """One array's dependence: `rows` (a CSR of shape (size, n), or None: no dependence) and, for
    values that do not depend on the state, the concrete `value` when it is known (else None)."""

    __slots__ = ("shape", "rows", "value")

    def __init__(self, shape, rows=None, value=None):
        self.shape, self.rows, self.value = tuple(shape), rows, value

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


def _structure(m: sp.spmatrix) -> sp.csr_matrix:
    out = sp.csr_matrix(m, dtype=np.float32)
    out.sum_duplicates()
    out.eliminate_zeros()  # a masked row's entries, before every stored entry becomes 1
    out.data[:] = 1.0
    return out


def _select(rows_out: int, rows_in: int, out_idx, in_idx) -> sp.csr_matrix:
    """The 0/1 matrix that sends input element `in_idx[k]` to output element `out_idx[k]`."""
    out_idx, in_idx = np.asarray(out_idx, np.int64).ravel(), np.asarray(in_idx, np.int64).ravel()
    ok = (in_idx >= 0) & (in_idx < rows_in)
    data = np.ones(int(ok.sum()), np.float32)
    return sp.csr_matrix((data, (out_idx[ok], in_idx[ok])), shape=(rows_out, rows_in))


def _apply(select: sp.csr_matrix, rows):
    return None if rows is None else _structure(select @ rows)


def _union(parts):
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    return _structure(sum(parts[1:], parts[0])) if len(parts) > 1 else parts[0]


def _broadcast(dep: _Dep, shape):
    if dep.rows is None or dep.shape == tuple(shape):
        return dep.rows
    idx = np.broadcast_to(np.arange(dep.size).reshape(dep.shape), shape).ravel()
    return _apply(_select(idx.size, dep.size, np.arange(idx.size), idx), dep.rows)


def _mask(rows, keep):
    """Rows of `rows` where `keep` (flat, bool) is false become empty."""
    if rows is None:
        return None
    return _structure(sp.diags(np.asarray(keep, np.float32).ravel()) @ rows)


def _nonzero_possible(dep: _Dep, shape):
    return None if dep.value is None else np.broadcast_to(dep.value != 0, shape).ravel()


class _Tracer:
    def __init__(self, n: int):
        self.n = n

    def run(self, jaxpr, consts, args):
        env = {}

        def read(v):
            if isinstance(v, jex_core.Literal):
                return _Dep(np.shape(v.val), None, np.asarray(v.val))
            return env[v]

        for v, c in zip(jaxpr.constvars, consts):
            env[v] = _Dep(np.shape(c), None, np.asarray(c))
        for v, a in zip(jaxpr.invars, args):
            env[v] = a
        for eqn in jaxpr.eqns:
            outs = self.equation(eqn, [read(v) for v in eqn.invars])
            for v, o in zip(eqn.outvars, outs):
                env[v] = o
        return [read(v) for v in jaxpr.outvars]

    def call(self, inner, ins):
        if hasattr(inner, "jaxpr") and hasattr(inner, "consts"):
            return self.run(inner.jaxpr, inner.consts, ins)
        return self.run(inner, (), ins)

    def equation(self, eqn, ins):
        avals = [v.aval for v in eqn.outvars]
        if all(d.rows is None for d in ins):
            if all(d.value is not None for d in ins):
                return self.constant(eqn, ins)
            return [_Dep(a.shape) for a in avals]
        if not any(jnp.issubdtype(a.dtype, jnp.inexact) for a in avals):
            return [_Dep(a.shape) for a in avals]  # comparisons, argmax, ...: no rule needed
        outs = self.dispatch(eqn, ins)
        # an integer or boolean result has no derivative, whatever it depends on
        return [o if jnp.issubdtype(a.dtype, jnp.inexact) else _Dep(a.shape) for o, a in zip(outs, avals)]

    def constant(self, eqn, ins):
        try:
            with jax.ensure_compile_time_eval():
                outs = eqn.primitive.bind(*[d.value for d in ins], **eqn.params)
            outs = outs if eqn.primitive.multiple_results else [outs]
            return [_Dep(np.shape(o), None, np.asarray(o)) for o in outs]
        except Exception:  # a constant that cannot be evaluated here is merely unknown
            return [_Dep(v.aval.shape) for v in eqn.outvars]

    def dispatch(self, eqn, ins):
        name = eqn.primitive.name
        shape = eqn.outvars[0].aval.shape
        if name in _ELEMENTWISE:
            return [_Dep(shape, self.elementwise(name, ins, shape))]
        if name == "select_n":
            return [_Dep(shape, self.select_n(ins, shape))]
        if name in _MOVES:
            return self.move(eqn, ins)
        if name.startswith("scatter"):
            return [self.scatter(eqn, ins)]
        if name in _REDUCERS:
            return [self.reduce(ins[0], eqn.params["axes"])]
        if name in _CUMULATIVE:
            return [self.cumulative(ins[0], eqn.params["axis"], eqn.params["reverse"])]
        if name == "dot_general":
            return [self.dot_general(eqn, ins)]
        if name == "sort":
            return self.sort(eqn, ins)
        if name == "cond":
            return self.cond(eqn, ins)
        if name == "scan":
            return self.scan(eqn, ins)
        if name == "while":
            return self.while_loop(eqn, ins)
        inner = next((eqn.params[p] for p in _CALL_PARAMS if p in eqn.params), None)
        if inner is not None:
            return self.call(inner, ins)
        raise SparsityTracerError(
            f"jacobian_sparsity: no dependence rule for the primitive {name!r}, which receives a value "
            "that depends on the state; give the sparsity pattern explicitly, or use the numerical "
            "sciax.linalg.detect_sparsity"
        )

    def elementwise(self, name, ins, shape):
        if name == "mul":  # a product with a constant zero is structurally zero
            a, b = ins
            return _union(
                [_mask(_broadcast(a, shape), _nonzero_possible(b, shape)) if b.value is not None else
                 _broadcast(a, shape),
                 _mask(_broadcast(b, shape), _nonzero_possible(a, shape)) if a.value is not None else
                 _broadcast(b, shape)]
            )  # fmt: skip
        if name == "div" and ins[0].value is not None:  # d(a/b)/db = -a/b^2 vanishes where a = 0
            a, b = ins
            return _mask(_broadcast(b, shape), _nonzero_possible(a, shape))
        return _union([_broadcast(d, shape) for d in ins])

    def select_n(self, ins, shape):
        which, *cases = ins
        if which.value is None:
            return _union([_broadcast(c, shape) for c in cases])
        which = np.broadcast_to(np.asarray(which.value).astype(np.int64), shape).ravel()
        return _union([_mask(_broadcast(c, shape), which == k) for k, c in enumerate(cases)])

    def move(self, eqn, ins):
        """Data movement: run the primitive on element positions, then gather the rows."""
        from ..ode._lanes import _is_data  # the same split of operands as the ensemble lane programs

        data = [i for i in range(len(ins)) if _is_data(eqn, i)]
        if any(ins[i].value is None for i in range(len(ins)) if i not in data):
            return self.dense(eqn, [ins[i] for i in data])
        proxies, offset, stacked = [d.value for d in ins], 0, []
        for i in data:
            proxies[i] = (np.arange(ins[i].size, dtype=np.int64) + offset).reshape(ins[i].shape)
            offset += ins[i].size
            stacked.append(ins[i].rows if ins[i].rows is not None else sp.csr_matrix((ins[i].size, self.n)))
        if offset >= 2**31 - 1:
            raise SparsityTracerError(f"jacobian_sparsity: {eqn.primitive.name!r} moves {offset} elements (> 2^31)")
        proxies = [p.astype(np.int32) if i in data else p for i, p in enumerate(proxies)]
        params = dict(eqn.params)
        if eqn.primitive.name == "gather" and "fill_value" in params:
            params["fill_value"] = -1  # positions filled in out of bounds depend on nothing
        with jax.ensure_compile_time_eval():
            outs = eqn.primitive.bind(*proxies, **params)
        outs = outs if eqn.primitive.multiple_results else [outs]
        rows = sp.vstack(stacked, format="csr")
        results = []
        for pos in map(np.asarray, outs):
            flat = pos.ravel()
            results.append(_Dep(pos.shape, _apply(_select(flat.size, offset, np.arange(flat.size), flat), rows)))
        return results

    def dense(self, eqn, ins):
        """Every output element depends on every input element (state-dependent indices)."""
        total = _union([_structure(sp.csr_matrix(d.rows.sum(axis=0))) for d in ins if d.rows is not None])
        outs = []
        for v in eqn.outvars:
            size = int(np.prod(v.aval.shape, dtype=np.int64))
            rows = None if total is None else _apply(_select(size, 1, np.arange(size), np.zeros(size)), total)
            outs.append(_Dep(v.aval.shape, rows))
        return outs

    def scatter(self, eqn, ins):
        operand, indices, updates = ins[:3]
        if indices.value is None:
            out = self.dense(eqn, [operand, updates])[0]
            out.rows = _union([out.rows, operand.rows])
            return out
        dest = self.scatter_destinations(eqn, operand.shape, indices.value, updates.shape)
        written = _select(operand.size, updates.size, dest, np.arange(updates.size))
        base = operand.rows
        if eqn.primitive.name == "scatter":  # replaced elements no longer depend on the operand
            hit = np.zeros(operand.size, bool)
            hit[dest[dest >= 0]] = True
            base = _mask(base, ~hit)
        return _Dep(operand.shape, _union([base, _apply(written, updates.rows)]))

    @staticmethod
    def scatter_destinations(eqn, operand_shape, indices, updates_shape):
        """Which operand element each update element lands in (-1: dropped), from the transpose
        of the additive scatter with the same dimension numbers (a gather of positions)."""
        p = eqn.params
        dtype = jnp.float64 if jax.config.jax_enable_x64 else jnp.float32
        size = int(np.prod(operand_shape, dtype=np.int64))
        if size >= 2 ** (52 if dtype == jnp.float64 else 23):
            raise SparsityTracerError(f"jacobian_sparsity: a scatter into {size} elements is too large to resolve")

        def add(u):
            return lax.scatter_add(
                jnp.zeros(operand_shape, dtype), jnp.asarray(indices), u, p["dimension_numbers"],
                indices_are_sorted=p["indices_are_sorted"], unique_indices=p["unique_indices"], mode=p["mode"],
            )  # fmt: skip

        with jax.ensure_compile_time_eval():
            _, pullback = jax.vjp(add, jnp.zeros(updates_shape, dtype))
            (where,) = pullback(jnp.arange(1, size + 1, dtype=dtype).reshape(operand_shape))
        return np.rint(np.asarray(where)).astype(np.int64).ravel() - 1

    def reduce(self, x: _Dep, axes):
        keep = [a for a in range(len(x.shape)) if a not in axes]
        coords = np.unravel_index(np.arange(x.size), x.shape)
        kept_shape = tuple(x.shape[a] for a in keep)
        out = np.ravel_multi_index([coords[a] for a in keep], kept_shape) if keep else np.zeros(x.size, np.int64)
        size = int(np.prod(kept_shape, dtype=np.int64))
        return _Dep(kept_shape, _apply(_select(size, x.size, out, np.arange(x.size)), x.rows))

    def cumulative(self, x: _Dep, axis: int, reverse: bool):
        pos = np.moveaxis(np.arange(x.size).reshape(x.shape), axis, -1).reshape(-1, x.shape[axis])
        later, earlier = np.tril_indices(x.shape[axis])  # output `later` reads input `earlier`
        if reverse:
            later, earlier = earlier, later
        select = _select(x.size, x.size, pos[:, later], pos[:, earlier])
        return _Dep(x.shape, _apply(select, x.rows))

    def dot_general(self, eqn, ins):
        (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
        lhs, rhs = ins
        lf = [a for a in range(len(lhs.shape)) if a not in lc and a not in lb]
        rf = [a for a in range(len(rhs.shape)) if a not in rc and a not in rb]

        def arrange(x, batch, free, contract):
            sizes = [int(np.prod([x.shape[a] for a in axes], dtype=np.int64)) for axes in (batch, free, contract)]
            order = list(batch) + free + list(contract)
            positions = np.arange(x.size).reshape(x.shape).transpose(order).reshape(sizes)
            nonzero = np.ones(sizes, bool) if x.value is None else (x.value != 0).transpose(order).reshape(sizes)
            return positions, nonzero

        lpos, lnz = arrange(lhs, lb, lf, lc)
        rpos, rnz = arrange(rhs, rb, rf, rc)
        n_i, n_j = lpos.shape[1], rpos.shape[1]
        size = lpos.shape[0] * n_i * n_j
        parts = []
        if lhs.rows is not None:  # out[b, i, j] reads lhs[b, i, k] wherever rhs[b, j, k] may be nonzero
            b, j, k = np.nonzero(rnz)
            i = np.arange(n_i)[None, :]
            out = (b[:, None] * n_i + i) * n_j + j[:, None]
            parts.append(_apply(_select(size, lhs.size, out, lpos[b[:, None], i, k[:, None]]), lhs.rows))
        if rhs.rows is not None:
            b, i, k = np.nonzero(lnz)
            j = np.arange(n_j)[None, :]
            out = (b[:, None] * n_i + i[:, None]) * n_j + j
            parts.append(_apply(_select(size, rhs.size, out, rpos[b[:, None], j, k[:, None]]), rhs.rows))
        return _Dep(eqn.outvars[0].aval.shape, _union(parts))

    def sort(self, eqn, ins):
        """Sorting permutes along its axis by the keys: every output depends on the whole line."""
        axis = eqn.params["dimension"]
        x = ins[0]
        line = _union([self.reduce(d, (axis,)).rows for d in ins if d.rows is not None])
        pos = np.moveaxis(np.arange(x.size).reshape(x.shape), axis, -1)
        lines = np.arange(pos[..., 0].size).reshape(pos.shape[:-1])
        select = _select(x.size, lines.size, pos.ravel(), np.broadcast_to(lines[..., None], pos.shape).ravel())
        rows = _apply(select, line)
        return [_Dep(v.aval.shape, rows) for v in eqn.outvars]

    def cond(self, eqn, ins):
        index, *operands = ins
        branches = eqn.params["branches"]
        if index.value is not None:
            return self.call(branches[int(np.clip(index.value, 0, len(branches) - 1))], operands)
        results = [self.call(br, operands) for br in branches]
        return [_Dep(r[0].shape, _union([x.rows for x in r])) for r in zip(*results)]

    def scan(self, eqn, ins):
        from ..ode._lanes import _scan_counts

        p = eqn.params
        n_consts, n_carry = _scan_counts(eqn)
        consts, carry, xs = ins[:n_consts], ins[n_consts : n_consts + n_carry], ins[n_consts + n_carry :]
        length = p["length"]
        if length > _UNROLL:
            slices = [self.reduce(x, (0,)) if x.rows is not None else _Dep(x.shape[1:]) for x in xs]
            carry = self.fixed_point(lambda c: self.call(p["jaxpr"], consts + c + slices)[:n_carry], carry)
            ys = self.call(p["jaxpr"], consts + carry + slices)[n_carry:]
            return carry + [_Dep((length,) + y.shape, _apply(self.repeat(length, y.size), y.rows)) for y in ys]
        steps = range(length - 1, -1, -1) if p["reverse"] else range(length)
        ys = [[None] * length for _ in eqn.outvars[n_carry:]]
        for step in steps:
            out = self.call(p["jaxpr"], consts + carry + [self.index(x, step) for x in xs])
            carry = out[:n_carry]
            for buffer, y in zip(ys, out[n_carry:]):
                buffer[step] = y
        stacked = []
        for buffer, v in zip(ys, eqn.outvars[n_carry:]):
            size = int(np.prod(v.aval.shape[1:], dtype=np.int64))
            rows = [b.rows if b.rows is not None else sp.csr_matrix((size, self.n)) for b in buffer]
            stacked.append(_Dep(v.aval.shape, _structure(sp.vstack(rows)) if rows else None))
        return carry + stacked

    @staticmethod
    def repeat(length: int, size: int) -> sp.csr_matrix:
        out = np.arange(length * size)
        return _select(length * size, size, out, out % size)

    @staticmethod
    def index(x: _Dep, step: int) -> _Dep:
        size = int(np.prod(x.shape[1:], dtype=np.int64))
        rows = None if x.rows is None else x.rows[step * size : (step + 1) * size]
        value = None if x.value is None else np.asarray(x.value)[step]
        return _Dep(x.shape[1:], rows, value)

    def while_loop(self, eqn, ins):
        p = eqn.params
        nc, nb = p["cond_nconsts"], p["body_nconsts"]
        body_consts, carry = ins[nc : nc + nb], ins[nc + nb :]
        return self.fixed_point(lambda c: self.call(p["body_jaxpr"], body_consts + c), carry)

    @staticmethod
    def fixed_point(body, carry):
        """The carry's sets after any number of steps: the union of all iterates (values unknown)."""
        carry = [_Dep(c.shape, c.rows) for c in carry]
        while True:
            new = body(carry)
            merged = [_Dep(c.shape, _union([c.rows, d.rows])) for c, d in zip(carry, new)]
            if all(_nnz(m.rows) == _nnz(c.rows) for m, c in zip(merged, carry)):
                return merged
            carry = merged


def _nnz(rows) -> int:
    return 0 if rows is None else int(rows.nnz)


def jacobian_sparsity(fn: Callable[..., Float[Array, "..."]], x: Float[Array, " n"], *args) -> SparsityPattern:
    """The structural nonzeros of `∂fn(x, *args)/∂x`, found from `fn`'s jaxpr (no evaluation at a state).

    **Arguments:**

    - `fn`: a JAX-traceable function of a 1-D array of `n` states (and `args`)
      returning an array or a pytree of arrays; outputs are flattened in
      `jax.flatten_util.ravel_pytree` order to `m` entries.
    - `x`: the state, an array or a `jax.ShapeDtypeStruct` of shape `(n,)` and
      floating dtype; only its shape and dtype are used.
    - `args`: further arguments, not differentiated: concrete arrays are used as
      constants (their zeros can make entries structural zeros), tracers and
      `ShapeDtypeStruct`s as unknown values (the pattern then holds for all of them).

    **Returns:** a `SparsityPattern` of shape `(m, n)` containing every entry that
    can be nonzero at any state (a superset of the true pattern where the structure
    depends on the state or on cancellation; see the module docstring).

    Raises `SparsityTracerError` for a primitive without a dependence rule. Host
    work at trace time, not differentiable; usable inside `jit` (only shapes are read).
    """
    if not callable(fn):
        raise TypeError(f"jacobian_sparsity: fn must be callable, got {type(fn).__name__}")
    shape, dtype = np.shape(x), getattr(x, "dtype", None)
    if len(shape) != 1 or dtype is None or not jnp.issubdtype(dtype, jnp.floating):
        raise ValueError(
            f"jacobian_sparsity: x must be a 1-D floating array of states, got shape {shape} and dtype {dtype}"
        )
    n = shape[0]
    leaves, tree = jax.tree_util.tree_flatten(args)
    known = [not isinstance(leaf, (jax.core.Tracer, jax.ShapeDtypeStruct)) for leaf in leaves]
    abstract = [jax.ShapeDtypeStruct(np.shape(leaf), jnp.result_type(leaf)) for leaf in leaves]

    def flat_fn(x, *leaves):
        out = fn(x, *jax.tree_util.tree_unflatten(tree, leaves))
        return jax.tree_util.tree_leaves(out)

    closed = jax.make_jaxpr(flat_fn)(jax.ShapeDtypeStruct(shape, dtype), *abstract)
    for v in closed.jaxpr.outvars:
        if not jnp.issubdtype(v.aval.dtype, jnp.inexact):
            raise ValueError(f"jacobian_sparsity: fn must return floating arrays, got one of dtype {v.aval.dtype}")
    identity = sp.identity(n, dtype=np.float32, format="csr")
    inputs = [_Dep(shape, identity)] + [
        _Dep(np.shape(leaf), None, np.asarray(leaf) if k else None) for leaf, k in zip(leaves, known)
    ]
    outs = _Tracer(n).run(closed.jaxpr, closed.consts, inputs)
    rows = [o.rows if o.rows is not None else sp.csr_matrix((o.size, n), dtype=np.float32) for o in outs]
    total = sp.vstack(rows, format="csr") if rows else sp.csr_matrix((0, n), dtype=np.float32)
    return SparsityPattern(total)


__all__ = ["jacobian_sparsity", "SparsityTracerError"]
