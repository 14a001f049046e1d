"""Training a discretisation through the solver: an unrolled loss over windows of fixed steps,
an optax loop with a progress bar and checkpoints, and the evaluation measures of Bar-Sinai et
al. (PNAS 2019): mean absolute error against a coarse-grained reference over time, and the time
an error stays below a threshold."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jaxtyping import Array, Float, PyTree
from tqdm.auto import tqdm

from ..._method import AbstractMethod
from ..._simulate import simulate
from ..fd._rk4 import RK4
from ._stencil import trainable


def _windows(name: str, ts, window: int | None) -> list[np.ndarray]:
    ts = np.asarray(ts, dtype=np.float64)
    if ts.ndim != 1 or len(ts) < 2:
        raise ValueError(f"{name}: ts must be a 1-D array of at least two output times, got shape {ts.shape}")
    window = len(ts) - 1 if window is None else window
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or not 1 <= window <= len(ts) - 1:
        raise ValueError(
            f"{name}: window must be an integer in [1, {len(ts) - 1}] (output intervals per window), got {window!r}"
        )
    return [ts[i : i + window + 1] for i in range(0, len(ts) - 1, window)]


def unrolled_loss(
    model,
    references: Float[Array, "batch T n"],
    ts: Float[Array, " T"],
    params: PyTree,
    *,
    dt: float | None = None,
    window: int | None = None,
    stop_gradient: bool = False,
    checkpoint: int | None = 16,
    absolute: bool = False,
    lags: Float[Array, "batch k n"] | None = None,
    method: AbstractMethod | None = None,
) -> Float[Array, ""]:
    """The mean squared error of `model` run from `references[:, 0]` against `references` at
    the output times `ts`, batched over trajectories with `jax.vmap` (`absolute=True`: the mean
    absolute error, the evaluation measure of Bar-Sinai et al., less dominated by shocks).

    The run steps `sciax.pde.RK4(dt, checkpoint=checkpoint)` (reverse mode stores one state per
    `checkpoint` steps and recomputes the rest), or `method` given instead of `dt` (e.g.
    `sciax.pde.ETDRK4(dt)` for a `SpectralCorrected`; `checkpoint` is then the method's own), through
    `sciax.simulate`, in windows of `window`
    output intervals, each window starting from the end of the last; `stop_gradient=True` cuts
    the gradient between windows (truncated backpropagation: the loss of a window then only
    trains the steps inside it). `ts`: concrete, uniform multiples of `dt` from `ts[0]`
    (`ValueError` otherwise, or if `references` is not `(batch, len(ts), n)`); `params`: the
    model's params with a leading batch axis on every leaf (e.g. one forcing per trajectory), or
    `None`. Differentiable in `model` (use `equinox.filter_grad`) and `params`. A model with
    memory (`ForcedBurgers(memory=...)`) starts from `initial_state(references[:, 0], lags)`: `lags`
    the lagged fields at the start (`lagged` of the reference; default none, no history), and its
    observed field `u` is compared.
    """
    name = "unrolled_loss"
    pieces = _windows(name, ts, window)
    shape = jnp.shape(references)
    if len(shape) != 3 or shape[1] != len(np.asarray(ts)):
        raise ValueError(
            f"{name}: references must have shape (batch, len(ts), cells) = (batch, {len(np.asarray(ts))}, cells), "
            f"the trajectories sampled at ts; got shape {shape}"
        )
    method = _unrolled_method(name, dt, checkpoint, method)

    def one(reference, p, lag):
        y, total, start = model.initial_state(reference[0], **({} if lag is None else {"lag": lag})), 0.0, 0
        for piece in pieces:
            ys = simulate(model, y, piece, p, method=method).ys
            stop = start + len(piece) - 1
            total = total + jnp.sum(_error(model.observed(ys)[1:] - reference[start + 1 : stop + 1], absolute))
            y = jax.tree_util.tree_map(lambda a: a[-1], ys)
            y, start = (jax.lax.stop_gradient(y) if stop_gradient else y), stop
        return total

    in_axes = (0, None if params is None else 0, None if lags is None else 0)
    totals = jax.vmap(one, in_axes=in_axes)(references, params, lags)
    return jnp.sum(totals) / (shape[0] * (shape[1] - 1) * shape[2])


def _unrolled_method(name: str, dt, checkpoint, method) -> AbstractMethod:
    if method is None:
        if dt is None:
            raise ValueError(f"{name}: give dt (the step of sciax.pde.RK4) or method (e.g. sciax.pde.ETDRK4(dt))")
        return RK4(dt, checkpoint=checkpoint)
    if dt is not None:
        raise ValueError(f"{name}: give dt or method, not both (got dt={dt!r} and {type(method).__name__})")
    if not isinstance(method, AbstractMethod):
        raise TypeError(f"{name}: method must be a sciax method such as sciax.pde.ETDRK4(dt), got {method!r}")
    return method


def derivative_loss(
    model,
    states: Float[Array, "batch n"] | dict,
    times: Float[Array, " batch"],
    params: PyTree,
    targets: Float[Array, "batch n"],
    *,
    absolute: bool = False,
) -> Float[Array, ""]:
    """The mean squared error of `model.rhs(t, u, p)` against `targets`, batched with `jax.vmap`
    (`absolute=True`: the mean absolute error): the time-derivative loss of Bar-Sinai et al.
    (PNAS 2019). With `states` the coarse-grained
    snapshots of a fine solution and `targets = coarse_grain(fine.rhs(t, u_fine, p), factor)`
    (the exact time derivative of those cell averages, since coarse graining is linear), one
    right-hand side per sample instead of a run: thousands of cheap steps, a good start for
    `unrolled_loss`. `times`: `(batch,)`; `params`: a leading batch axis on every leaf, or
    `None`. Differentiable in `model`. `ValueError` if the shapes do not match. A model with
    memory takes states `{"u": (batch, n), "lag": (batch, k, n)}` (`lagged` of the reference) and
    its observed rate (of `u`) is compared.
    """
    shape, t_shape = jnp.shape(model.observed(states)), jnp.shape(times)
    if len(shape) < 2 or jnp.shape(targets) != shape or t_shape != shape[:1]:
        raise ValueError(
            f"derivative_loss: states and targets must share one shape (batch, cells...) and times be (batch,); "
            f"got states {shape}, targets {jnp.shape(targets)}, times {t_shape}"
        )
    in_axes = (0, 0, None if params is None else 0)
    rates = model.observed(jax.vmap(model.rhs, in_axes=in_axes)(times, states, params))
    return jnp.mean(_error(rates - targets, absolute))


def random_batches(arrays: PyTree, size: int, *, seed: int = 0) -> Callable[[int], tuple]:
    """`data(step)` for `train`: `size` rows drawn without replacement from the leading axis that
    every leaf of `arrays` shares (e.g. `(states, times, forcings, targets)`), the same rows from
    each leaf, returned as a tuple of device arrays (a non-tuple `arrays` is one element).

    The arrays stay on the host (as numpy) and each batch is gathered there: indexing a device
    array costs about 1 ms of dispatch per leaf on CPU, as long as a small network's whole
    training step. The draw depends only on `(seed, step)`, so a run resumed from a `train`
    checkpoint sees the batches it would have seen. `ValueError` if the leaves do not share a
    leading axis or `size` is not in `[1, rows]`.
    """
    host = jax.tree_util.tree_map(np.asarray, arrays if isinstance(arrays, tuple) else (arrays,))
    rows = {np.shape(a)[0] if np.ndim(a) else None for a in jax.tree_util.tree_leaves(host)}
    if len(rows) != 1 or None in rows:
        raise ValueError(f"random_batches: every leaf of arrays must share its leading axis, got lengths {rows}")
    (n,) = rows
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or not 1 <= size <= n:
        raise ValueError(f"random_batches: size must be an integer in [1, {n}] (the rows of arrays), got {size!r}")

    def data(step: int) -> tuple:
        pick = np.random.default_rng((seed, step)).choice(n, size, replace=False)
        return jax.tree_util.tree_map(lambda a: jnp.asarray(a[pick]), host)

    return data


def _error(difference, absolute: bool):
    return jnp.abs(difference) if absolute else difference**2


def train(
    model,
    loss: Callable[..., Float[Array, ""]],
    optimizer: optax.GradientTransformation,
    steps: int,
    *,
    data: Callable[[int], tuple] | None = None,
    filter_spec: PyTree | None = None,
    progress: bool = True,
    checkpoint: str | os.PathLike | None = None,
    checkpoint_every: int = 100,
) -> tuple[PyTree, np.ndarray]:
    """Minimise `loss(model, *data(step))` (`loss(model)` without `data`) over `model`'s
    trainable leaves (`filter_spec`, default `trainable(model)`: the weights of its
    `LearnedReconstruction`s) with `optimizer` for `steps` steps, one jitted `value_and_grad`
    and optax update per step. `data(step)` returns the step's batch, a tuple of arrays of
    fixed shapes (e.g. a random draw of trajectory segments, seeded by `step`).

    A tqdm bar shows the loss (`progress`). With `checkpoint` a path, the trainable leaves, the
    optimizer state and the step count are written there (`equinox.tree_serialise_leaves`,
    atomically) every `checkpoint_every` steps and at the end, and a run finding the file
    resumes from it. Returns the trained model and the loss before each step run here.
    """
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise ValueError(f"train: steps must be an integer >= 0, got {steps!r}")
    spec = trainable(model) if filter_spec is None else filter_spec
    weights, frozen = eqx.partition(model, spec)
    if not jax.tree_util.tree_leaves(weights):
        raise ValueError("train: the model has no trainable arrays under filter_spec (no LearnedReconstruction?)")
    state = (weights, optimizer.init(weights), np.zeros((), np.int64))
    path = None if checkpoint is None else Path(checkpoint)
    if path is not None and path.exists():
        state = eqx.tree_deserialise_leaves(path, state)
    weights, opt_state, done = state[0], state[1], int(state[2])

    def save(count):
        tmp = path.with_name(path.name + ".tmp")
        eqx.tree_serialise_leaves(tmp, (weights, opt_state, np.asarray(count, np.int64)))
        os.replace(tmp, path)

    losses = []
    bar = tqdm(range(done, steps), desc="train", disable=not progress, initial=done, total=steps)
    for i in bar:
        batch = () if data is None else tuple(data(i))
        weights, opt_state, value = _step(weights, opt_state, batch, frozen, loss, optimizer)
        losses.append(float(value))
        bar.set_postfix(loss=f"{losses[-1]:.3e}")
        if path is not None and (i + 1) % checkpoint_every == 0:
            save(i + 1)
    if path is not None:
        save(max(steps, done))
    return eqx.combine(weights, frozen), np.asarray(losses)


@eqx.filter_jit
def _step(weights, opt_state, batch, frozen, loss, optimizer):
    # Module level, `loss` and `optimizer` static: a second `train` with the same ones reuses the compiled step.
    value, grads = eqx.filter_value_and_grad(lambda w: loss(eqx.combine(w, frozen), *batch))(weights)
    updates, opt_state = optimizer.update(grads, opt_state, weights)
    return eqx.apply_updates(weights, updates), opt_state, value


def error_vs_time(prediction: Float[Array, "... T n"], reference: Float[Array, "... T n"]) -> Float[Array, "... T"]:
    """The mean absolute error over cells at each time (the measure of Bar-Sinai et al.)."""
    if jnp.shape(prediction) != jnp.shape(reference):
        raise ValueError(
            f"error_vs_time: prediction and reference must have one shape, got {jnp.shape(prediction)} "
            f"and {jnp.shape(reference)}"
        )
    return jnp.mean(jnp.abs(prediction - reference), axis=-1)


def survival_time(ts: Float[Array, " T"], errors: Float[Array, "... T"], threshold: float) -> Float[Array, "..."]:
    """The first output time at which `errors` (e.g. `error_vs_time`) exceeds `threshold`
    (or is NaN), or `ts[-1]` if it never does."""
    ts = jnp.asarray(ts)
    bad = ~(jnp.asarray(errors) <= threshold)
    first = jnp.argmax(bad, axis=-1)
    return jnp.where(jnp.any(bad, axis=-1), ts[first], ts[-1])
