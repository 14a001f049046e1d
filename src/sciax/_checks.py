"""Trace-time validation shared by every `simulate` call.

Each check raises a `TypeError`/`ValueError` naming the argument, what was
expected and what was given. Checks that need values use them when they are
concrete and fall back to `equinox.error_if` when they are traced.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

_SCALARS = (bool, int, float, complex, np.generic)


def is_concrete(x) -> bool:
    """Not a tracer: the value is known now (outside `jit`/`vmap`/`grad`, or a static constant)."""
    return not isinstance(x, jax.core.Tracer)


def agreed(pred):
    """`pred`, true on every device if it is true on any, inside `jax.shard_map` (`pred` itself outside one).

    A run-time check on one block of a sharded grid (`sciax.parallel.shard`) that failed on that block
    alone stopped its device while the others waited for it in the next halo exchange: XLA:CPU then
    aborted the whole process after a 40 s rendezvous timeout instead of raising the check's error.
    Or-reduced over the mesh axes (one `pmax` of a scalar), every block fails the check together."""
    axes = tuple(getattr(jax.sharding.get_abstract_mesh(), "manual_axes", ()))
    if not axes:
        return pred
    return jax.lax.pmax(jnp.asarray(pred).astype(jnp.int32), axes) > 0


def error_if_tied(x, pred, message: str):
    """`equinox.error_if(x, pred, message)`, with the check made on a scalar that is then added to `x`
    (`pred` made the same on every block of a sharded grid: `agreed`).

    `error_if` passes its operand through a conditional, and XLA's SPMD partitioner cannot keep a
    sharded operand sharded there: it gathers the whole array onto one device ("involuntary full
    rematerialization"), which for a grid sharded because it does not fit on one device is an
    out-of-memory error. Adding the (zero) scalar keeps `x` where it is. Scalars, integer arrays
    (whose `+ 0` XLA may fold away with the check) and weakly typed arrays (which the sum would make
    strongly typed, promoting the state they meet) go through `error_if` as they are."""
    weak = getattr(getattr(x, "aval", None), "weak_type", False)
    pred = agreed(pred)
    if jnp.ndim(x) == 0 or weak or not jnp.issubdtype(jnp.result_type(x), jnp.inexact):
        return eqx.error_if(x, pred, message)
    return x + eqx.error_if(jnp.zeros((), jnp.result_type(x)), pred, message)


def check_y0(y0, *, throw: bool = True):
    """Validate the initial state: a non-empty pytree of real floating-point arrays,
    every entry finite. Complex states are refused: diffrax's complex support is
    experimental, and no sciax model documents one.

    Non-finite entries are named when `y0` is concrete; when it is traced they are
    caught by `equinox.error_if` (with `throw=False` the solve reports
    `success=False` instead, per member under `jax.vmap`)."""
    leaves, _ = jax.tree_util.tree_flatten_with_path(y0)
    if not leaves:
        raise ValueError("simulate: y0 is an empty pytree; expected at least one floating-point array")
    out = []
    for path, leaf in leaves:
        where = "y0" + jax.tree_util.keystr(path)
        if not isinstance(leaf, (jax.Array, np.ndarray, *_SCALARS)):
            raise TypeError(f"simulate: {where} must be an array, got {type(leaf).__name__}")
        dtype = jnp.result_type(leaf)
        if not jnp.issubdtype(dtype, jnp.inexact):
            raise TypeError(
                f"simulate: {where} must be floating point (float32 or float64), got dtype {dtype}; "
                "convert it, e.g. jnp.asarray(y0, dtype=float)"
            )
        if jnp.issubdtype(dtype, jnp.complexfloating):
            raise TypeError(
                f"simulate: {where} has complex dtype {dtype}, but states must be real: write a complex "
                "equation for the real and imaginary parts, e.g. y = jnp.stack([z.real, z.imag]), or pass "
                "jnp.real(y0) if the imaginary part is an accident"
            )
        if isinstance(leaf, (jax.Array, np.ndarray)):
            out.append(jnp.asarray(_check_finite(leaf, where, throw)))
        else:  # a Python or NumPy scalar keeps its (weak) type
            _check_finite(np.asarray(leaf), where, throw)
            out.append(jnp.asarray(leaf))
    return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(y0), out)


def _check_finite(leaf, where: str, throw: bool):
    if isinstance(leaf, np.ndarray):
        finite = np.all(np.isfinite(leaf))
    else:
        # Reduced where the array lives: a large state on an accelerator is not copied to
        # the host. Inside a trace (jit, vmap, grad) the result is abstract.
        finite = jnp.all(jnp.isfinite(leaf))
    if isinstance(finite, jax.core.Tracer):
        if not throw:
            return leaf
        return error_if_tied(leaf, ~finite, f"simulate: {where} contains NaN or inf; the initial state must be finite")
    if bool(finite):
        return leaf
    values = np.asarray(leaf)
    bad = np.argwhere(~np.isfinite(values))[0]
    index = "" if values.ndim == 0 else "[" + ", ".join(str(int(i)) for i in bad) + "]"
    raise ValueError(
        f"simulate: {where}{index} is {values[tuple(bad)]}; the initial state must be finite (NaN or inf in y0 "
        "would make every step fail)"
    )


def check_ts(ts):
    """Validate output times. Concrete input stays a NumPy array, so methods whose step
    counts are fixed at trace time (ETDRK, Leapfrog, ...) can read it even inside
    `jax.jit`, where every `jnp` operation returns a tracer."""
    if not isinstance(ts, (jax.Array, np.ndarray, list, tuple)):
        raise TypeError(f"simulate: ts must be a 1-D array of output times, got {type(ts).__name__}")
    concrete = is_concrete(ts)
    if concrete:
        ts = np.asarray(ts)
        if not np.issubdtype(ts.dtype, np.floating):
            ts = ts.astype(jax.dtypes.canonicalize_dtype(np.float64))
    else:
        ts = ts if jnp.issubdtype(ts.dtype, jnp.floating) else ts.astype(jnp.result_type(float))
    if ts.ndim != 1:
        raise ValueError(f"simulate: ts must be 1-D, got shape {ts.shape}")
    if ts.shape[0] < 2:
        raise ValueError(f"simulate: ts needs at least 2 points (start and end time), got {ts.shape[0]}")
    if not concrete:
        return eqx.error_if(ts, jnp.any(jnp.diff(ts) <= 0), "simulate: ts must be strictly increasing")
    steps = np.diff(ts)
    if not np.all(steps > 0):
        i = int(np.argmax(~(steps > 0)))
        raise ValueError(
            f"simulate: ts must be strictly increasing, but ts[{i}]={float(ts[i])} >= ts[{i + 1}]={float(ts[i + 1])}"
        )
    return ts


def check_params(params):
    """Params: any pytree of arrays/scalars. Callable leaves (e.g. activation
    functions inside an equinox network) are allowed and treated as static."""
    leaves, _ = jax.tree_util.tree_flatten_with_path(params)
    for path, leaf in leaves:
        if isinstance(leaf, (jax.Array, np.ndarray, *_SCALARS)) or callable(leaf):
            continue
        where = "params" + jax.tree_util.keystr(path)
        raise TypeError(
            f"simulate: {where} must be an array or a number (params is a pytree of arrays), "
            f"got {type(leaf).__name__}: {leaf!r:.80}"
        )
    # Python floats become (weakly typed) arrays: inputs of the compiled solve, not constants
    # baked into it, so a sweep over their values in a Python loop compiles once.
    return jax.tree_util.tree_map(lambda x: jnp.asarray(x) if type(x) in (float, complex) else x, params)


def check_positive(name: str, value):
    if value is None:
        return value
    if is_concrete(value):
        if not np.all(np.asarray(value) > 0):
            raise ValueError(f"simulate: {name} must be > 0, got {value}")
        return value
    return eqx.error_if(value, jnp.any(value <= 0), f"simulate: {name} must be > 0")


def check_rhs_structure(rhs: Callable, t0, y0, params, *, what: str = "vector field"):
    """The right-hand side must return the same structure, shapes and dtypes as y0."""
    # Non-array leaves (an equinox MLP's activation function, Python numbers) are
    # closed over rather than passed, since eval_shape only accepts array-likes.
    dynamic, static = eqx.partition(params, eqx.is_array)
    out = jax.eval_shape(lambda t, y, p: rhs(t, y, eqx.combine(p, static)), t0, y0, dynamic)
    y_struct = jax.tree_util.tree_structure(y0)
    out_struct = jax.tree_util.tree_structure(out)
    if y_struct != out_struct:
        raise ValueError(
            f"simulate: the {what} returned a pytree of structure {out_struct}, "
            f"but y0 has structure {y_struct}; they must match"
        )
    y_leaves = jax.tree_util.tree_flatten_with_path(y0)[0]
    for (path, y), o in zip(y_leaves, jax.tree_util.tree_leaves(out)):
        if jnp.shape(y) != o.shape:
            raise ValueError(
                f"simulate: the {what} returned shape {o.shape} for y0{jax.tree_util.keystr(path)}, "
                f"which has shape {jnp.shape(y)}; they must match"
            )


# id(model) -> (weak reference to the model, the signatures of (t0, y0, params) its right-hand side passed for)
_RHS_PASSED: dict[int, tuple[weakref.ref, set]] = {}
_SIGNATURES_PER_MODEL = 64


def check_model_rhs(model, t0, y0, params):
    """`check_rhs_structure(model.rhs, ...)` once per model object and abstract signature of `(t0, y0, params)`.

    The check traces the whole right-hand side (`jax.eval_shape`), again at every `simulate` call outside
    `jit`: 18 ms of the 23 ms that `simulate` took around a 2-step `ElasticWave` run on 300^2 (one core),
    where Devito's `apply` takes 3 ms. Its outcome depends on the model (concrete, closed over: the same
    object has the same fields, equinox modules being immutable) and on the shapes, dtypes and weak types
    of `t0`, `y0` and the arrays in `params` (traced), and on the values of their other leaves (closed over):
    the terms on which `jax.jit` reuses a compiled run."""
    key, slot = _signature((t0, y0, params)), id(model)
    entry = _RHS_PASSED.get(slot)
    if entry is not None and entry[0]() is not model:
        entry = None
    if key is not None and entry is not None and key in entry[1]:
        return
    check_rhs_structure(model.rhs, t0, y0, params)
    if key is None:
        return
    if entry is None:

        def forget(ref):  # the model is gone: its id may be another object's next
            if _RHS_PASSED.get(slot, (None,))[0] is ref:
                del _RHS_PASSED[slot]

        try:
            entry = _RHS_PASSED[slot] = (weakref.ref(model, forget), set())
        except TypeError:  # a model that takes no weak reference: checked at every call
            return
    if len(entry[1]) < _SIGNATURES_PER_MODEL:
        entry[1].add(key)


def _signature(tree):
    """A hashable summary of what `jax.eval_shape` sees of `tree` (arrays by abstract value, other leaves by
    type and value), or `None` where a leaf is not hashable."""
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    parts = [jax.typeof(x) if eqx.is_array(x) or isinstance(x, jax.core.Tracer) else (type(x), x) for x in leaves]
    try:
        key = (treedef, tuple(parts))
        hash(key)
    except TypeError:
        return None
    return key


def check_options(method, options: dict):
    """Every option must be one the method declares (`AbstractMethod.options`)."""
    accepted = tuple(method.options)
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise TypeError(
            f"simulate: unknown option(s) {', '.join(map(repr, unknown))} for method "
            f"{type(method).__name__}; it accepts: {', '.join(accepted) or 'none'}"
        )
