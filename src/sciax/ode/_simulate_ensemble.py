"""`simulate_ensemble`: many members of one small ODE, each integrated on its own in one kernel."""

from __future__ import annotations

from typing import Any

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, PyTree

from .. import _checks
from .._checks import error_if_tied
from .._simulate import simulate
from .._solution import Solution
from ._ensemble_bdf import solve_shared_step
from ._ensemble_kernel import integrate_pallas, integrate_xla
from ._ensemble_rk import LaneERK
from ._ensemble_rosenbrock import LaneRosenbrock
from ._ensemble_sde import sde_stepper_factory
from ._explicit import Dopri5, Tsit5
from ._lanes import LaneError, LaneProgram
from ._ode import ODE
from ._rosenbrock_methods import AbstractRosenbrock
from ._sde import SDE
from ._sde_methods import EulerMaruyama, StratonovichHeun

#: The kernel path keeps every state component of a member in registers: at most this many.
MAX_KERNEL_STATE = 64
_PATHS = ("auto", "kernel", "vmap", "shared_step")
_EXPLICIT = {Tsit5: diffrax.Tsit5, Dopri5: diffrax.Dopri5}
_KERNEL_METHODS = "Tsit5, Dopri5 (explicit) and Rodas5P, Rodas4, Ros3P, Ros34PW2 (stiff, dense Jacobian)"
_SDE_METHODS = (EulerMaruyama, StratonovichHeun)


def _make_stepper(method, rhs, example, n_err: int):
    """The lane stepper of `method` for the right-hand side `rhs` (one member's `example` arguments)."""
    if isinstance(method, AbstractRosenbrock):
        return LaneRosenbrock(rhs, method.tableau, example, n_err=n_err)
    solver = _EXPLICIT[type(method)]
    return LaneERK(LaneProgram(rhs, *example), solver.tableau, solver.interpolation_cls, 5, example, n_err=n_err)


def simulate_ensemble(
    model: ODE | SDE,
    y0: ArrayLike,
    ts: ArrayLike,
    params: PyTree = None,
    *,
    in_axes: tuple[int | None, int | None] = (0, 0),
    method=None,
    path: str = "auto",
    rtol: float = 1e-6,
    atol: float = 1e-6,
    dt0: float | None = None,
    max_steps: int = 4096,
    adjoint: diffrax.AbstractAdjoint | None = None,
    throw: bool = True,
    key: Array | None = None,
    block_size: int = 32,
    **vmap_options: Any,
) -> Solution:
    """Simulate an ensemble of a small ODE: `jax.vmap(sciax.simulate)`, one trajectory per GPU thread.

    Equal (to the tolerance) to `jax.vmap(lambda y, p: sciax.simulate(model, y, ts,
    p, method=method, rtol=rtol, atol=atol, ...), in_axes=in_axes)(y0, params)`,
    but on the kernel path every member integrates in its own loop, with its own
    step size, inside one kernel: a vmapped adaptive solve runs all members in
    lockstep for as many steps as the slowest needs, one chain of kernels per
    step. The design follows DiffEqGPU.jl's `EnsembleGPUKernel` (Utkarsh et al.,
    CMAME 2024); see `benchmarks/gpu_ensemble.py` for the measured speed-ups.

    **Arguments:**

    - `model`: a `sciax.ode.ODE` or `sciax.ode.SDE` whose state is a 1-D array of at
      most 64 entries (for the kernel path; any such model on the vmap path).
    - `y0`: initial states, `(M, n)` if `in_axes[0] == 0`, else one `(n,)` state for all.
    - `ts`: `(T,)` output times shared by all members; `ts[0]` is the start.
    - `params`: pytree whose leaves have a leading member axis `M` if
      `in_axes[1] == 0`, or are shared if `None`.
    - `method`: on the kernel path `Tsit5()` (default), `Dopri5()`, or for stiff
      ensembles `Rodas5P()`, `Rodas4()`, `Ros3P()`, `Ros34PW2()` (each member's
      dense Jacobian by forward mode, LU with partial pivoting); any ODE method on
      the vmap path.
    - `path`: `"kernel"` (per-member kernel: Pallas/Triton on a GPU, the same lane
      program compiled by XLA on a CPU), `"vmap"` (`jax.vmap(sciax.simulate)`),
      `"shared_step"` (`sciax.ode.BDF` only: the members integrated as one
      block-diagonal system with one step size and order, each member's error test
      passed at every step; one Newton iteration, one Jacobian and one block SuperLU
      factorisation or one block GMRES for all; the way for large stiff members such
      as method-of-lines PDEs, `benchmarks/stiff_pde.py`; only when asked for: its forward mode is tested, reverse
      mode is not, and a loop of single Newton-Krylov solves was faster per member in
      the one measurement) or `"auto"`: the kernel when the method, state and right-hand side allow it
      (measured faster than vmap on both backends, `benchmarks/gpu_ensemble.py`),
      else vmap.
    - `rtol`, `atol`, `dt0`, `max_steps`, `throw`: as for `sciax.simulate`
      (`max_steps` counts each member's own steps, rejected ones included).
    - `key`: SDEs only, one PRNG key per member (`jax.random.split(k, M)`). The
      kernel path draws each member's Brownian increments from Threefry-2x32 keyed
      by its key and counted by its steps (`_ensemble_sde.py`): the same key gives
      the same path, but not the path of the vmapped solve (a Brownian tree), so
      the two agree in distribution, not sample by sample. SDE kernels take fixed
      steps (`dt0=`, `EulerMaruyama` or `StratonovichHeun`), shortened to land on
      every output time, and are not differentiable (use `path="vmap"`).
    - `adjoint`: `None` (reverse mode, `jax.grad`: the backward pass runs the vmapped
      path's checkpointed adjoint, re-solving the ensemble with diffrax; the forward
      pass stays the kernel) or `sciax.ode.ForwardMode()` (forward mode, `jax.jvp` /
      `jax.jacfwd`: the kernel integrates the forward sensitivity equations
      `d(dy)/dt = J dy + f_p dp` alongside each member, with error control on the
      state only, so the state is the one of the plain run).
    - `block_size`: members per GPU program (a power of two; one thread each; 32
      measured fastest on an H200).
    - `**vmap_options`: any other option of `sciax.simulate` (`event`, `dense`,
      `progress`, `adaptive`, ...). The kernel path has none of them: with one,
      `path="auto"` runs the vmapped solve and `path="kernel"` raises.

    **Returns:** a `sciax.Solution` batched over members like a vmapped one: `ys`
    `(M, T, n)`, `ts` `(M, T)`, `success` `(M,)`, `stats` per member (`num_steps`,
    `num_accepted_steps`, `num_rejected_steps`, `max_steps`, `t_reached`) and
    `result` an int code per member (0 success, 1 `max_steps` used up, 2 step
    size collapsed) on the kernel path, diffrax's codes on the vmap path. A member
    that fails stops alone: its rows past the time it reached are `inf` and its
    `success` is `False` (with `throw=False`; `throw=True` raises if any fails).
    On the shared-step path the stats are the shared run's counts (the same for
    every member: `BDF`'s, `num_jacobian_evals` and `num_factorisations` included)
    and a failure stops all members.

    **Raises** `ValueError` for inconsistent member counts, a state too large for
    the forced kernel path, or a backend without a kernel path (TPU) when forced;
    `TypeError` for a model or method the kernel path cannot run when forced.
    """
    if path not in _PATHS:
        raise ValueError(f"simulate_ensemble: path must be one of {_PATHS}, got {path!r}")
    if not isinstance(model, (ODE, SDE)):
        raise TypeError(f"simulate_ensemble: model must be a sciax.ode.ODE or SDE, got {type(model).__name__}")
    method = model.default_method() if method is None else method
    in_axes = _check_in_axes(in_axes)
    members = _members(y0, params, in_axes)
    sde = isinstance(model, SDE)
    keys = _check_keys(key, members) if sde else _no_key(key)
    options = dict(rtol=rtol, atol=atol, dt0=dt0, max_steps=max_steps, adjoint=adjoint, throw=throw)
    if sde:
        if dt0 is None:
            raise ValueError("simulate_ensemble: an SDE ensemble takes fixed steps; pass dt0=")
        options = dict(dt0=dt0, max_steps=max_steps, throw=throw)
    options.update(vmap_options)
    if path == "shared_step":
        if sde or vmap_options:
            raise ValueError(
                "simulate_ensemble: path='shared_step' integrates an ODE with BDF and takes no "
                f"{'SDE' if sde else ', '.join(map(repr, vmap_options))}; use path='vmap'"
            )
        y0b, pb = _broadcast_members(y0, params, in_axes, members)
        return solve_shared_step(model, method, y0b, _checks.check_ts(ts), pb, **options)
    reason = _kernel_refusal(model, method, y0, params, in_axes, members, block_size)
    if reason is None and vmap_options:
        reason = f"the kernel path has no option {', '.join(map(repr, vmap_options))} (events, dense output, ...)"
    use_kernel = path == "kernel" or (path == "auto" and reason is None)
    if path == "kernel" and reason is not None:
        raise ValueError(f"simulate_ensemble: path='kernel' is not possible here: {reason}; use path='auto' or 'vmap'")
    if not use_kernel:
        return _vmapped(model, y0, ts, params, in_axes, method, options, keys)
    _checks.check_positive("rtol", rtol)
    _checks.check_positive("atol", atol)
    if dt0 is not None:
        _checks.check_positive("dt0", dt0)
    if not isinstance(max_steps, (int, np.integer)) or max_steps < 1:
        raise ValueError(f"simulate_ensemble: max_steps must be a positive int, got {max_steps!r}")
    ts = _checks.check_ts(ts)
    y0b, pb = _broadcast_members(y0, params, in_axes, members)
    cfg = dict(rtol=float(rtol), atol=float(atol), dt0=dt0, max_steps=int(max_steps))
    spec = _KernelSpec(model, method, cfg, _backend(), int(block_size))
    return _kernel_solve(spec, method, options, in_axes, y0b, pb, keys if sde else None, ts)


@eqx.filter_jit
def _kernel_solve(spec: _KernelSpec, method, options, in_axes, y0, params, keys, ts) -> Solution:
    # One compiled program per model, method and options: outside jit the member loop
    # would be traced and compiled again on every call.
    if keys is not None:
        ys, counts, t_reached = _sde_run(spec)(y0, (params, jax.random.key_data(keys)), ts)
    elif isinstance(options.get("adjoint"), diffrax.ForwardMode):
        ys, counts, t_reached = _forward_mode_run(spec)(y0, params, ts)
    else:
        ys, counts, t_reached = _reverse_mode_run(spec, method, options, in_axes)(y0, params, ts)
    return _solution(spec.model, ys, counts, t_reached, ts, options["max_steps"], options["throw"])


class _KernelSpec(eqx.Module):
    model: ODE
    method: Any
    cfg: dict = eqx.field(static=True)
    backend: str = eqx.field(static=True)
    block: int = eqx.field(static=True)

    def integrate(self, rhs, y0, params, ts, n_err: int):
        """`y0` `(M, n)`, params leaves `(M, ...)` → `ys` `(M, T, n)`, counts `(3, M)`, `t_reached` `(M,)`."""
        y0t = jnp.moveaxis(y0, 0, -1)
        pt = jax.tree_util.tree_map(lambda x: jnp.moveaxis(jnp.asarray(x), 0, -1), params)
        example = (ts[0], y0[0], jax.tree_util.tree_map(lambda x: x[0], params))
        if isinstance(self.model, SDE):
            make_stepper = sde_stepper_factory(self.model, self.method, (example[0], example[1], example[2][0]), None)
        else:

            def make_stepper():
                return _make_stepper(self.method, rhs, example, n_err)

        if self.backend == "xla":
            ys, counts, t_end = integrate_xla(make_stepper, y0t, pt, ts, self.cfg)
        else:
            ys, counts, t_end = _padded_pallas(make_stepper, y0t, pt, ts, self.cfg, self.block, self.backend)
        return jnp.moveaxis(ys, -1, 0), counts, t_end


def _padded_pallas(make_stepper, y0t, pt, ts, cfg, block, backend):
    members = y0t.shape[-1]
    padded = -(-members // block) * block

    def pad(x):
        return jnp.concatenate([x, jnp.repeat(x[..., :1], padded - members, axis=-1)], axis=-1)

    if padded != members:
        y0t, pt = pad(y0t), jax.tree_util.tree_map(pad, pt)
    ys, counts, t_end = integrate_pallas(
        make_stepper, y0t, pt, ts, cfg, block=block, interpret=backend == "interpret", num_warps=max(block // 32, 1)
    )
    return ys[..., :members], counts[:, :members], t_end[:members]


def _sde_run(spec: _KernelSpec):
    """The SDE kernel; not differentiable (its Brownian paths are not the vmapped path's)."""

    @jax.custom_jvp
    def run(y0, params, ts):
        return spec.integrate(None, y0, params, ts, n_err=y0.shape[-1])

    @run.defjvp
    def run_jvp(primals, tangents):
        raise TypeError(
            "simulate_ensemble: the SDE kernel path is not differentiable (its Brownian paths come from a "
            "counter-based generator, not the vmapped path's Brownian tree); differentiate with path='vmap'"
        )

    return run


def _forward_mode_run(spec: _KernelSpec):
    """Forward sensitivities in the kernel: the tangent system rides along, error-controlled on `y` only."""

    @jax.custom_jvp
    def run(y0, params, ts):
        return spec.integrate(spec.model.rhs, y0, params, ts, n_err=y0.shape[-1])

    def run_jvp(primals, tangents):
        y0, params, ts = primals
        dy0, dparams, dts = tangents
        dy0, dparams = _instantiate(dy0, y0), _instantiate(dparams, params)
        if not _is_zero(dts):
            raise ValueError("simulate_ensemble: the kernel path does not differentiate with respect to ts")
        n = y0.shape[-1]

        def augmented(t, z, pq):
            p, dp = pq
            f, df = jax.jvp(lambda y, q: spec.model.rhs(t, y, q), (z[:n], p), (z[n:], dp))
            return jnp.concatenate([f, df])

        z0 = jnp.concatenate([y0, dy0], axis=-1)
        zs, counts, t_end = spec.integrate(augmented, z0, (params, dparams), ts, n_err=n)
        ys, dys = zs[..., :n], zs[..., n:]
        return (ys, counts, t_end), (dys, _float0(counts), jnp.zeros_like(t_end))

    run.defjvp(run_jvp, symbolic_zeros=True)
    return run


def _reverse_mode_run(spec: _KernelSpec, method, options, in_axes):
    """Reverse mode: the kernel forward, the vmapped path's adjoint backward."""

    @jax.custom_vjp
    def run(y0, params, ts):
        return spec.integrate(spec.model.rhs, y0, params, ts, n_err=y0.shape[-1])

    def fwd(y0, params, ts):
        return run(y0, params, ts), (y0, params, ts)

    def bwd(res, cotangents):
        y0, params, ts = res
        g_ys = cotangents[0]

        def ys_of(y0, params, ts):
            sol = _vmapped(spec.model, y0, ts, params, (0, 0), method, {**options, "throw": False})
            return jnp.where(jnp.isfinite(sol.ys), sol.ys, 0.0)

        _, vjp = jax.vjp(ys_of, y0, params, ts)
        return vjp(jnp.where(jnp.isfinite(g_ys), g_ys, 0.0))

    run.defvjp(fwd, bwd)
    return run


def _solution(model, ys, counts, t_reached, ts, max_steps, throw) -> Solution:
    steps, rejected, status = counts[0], counts[1], counts[2]
    success = status == 0
    if throw:
        ys = error_if_tied(  # ys may be sharded over members: error_if alone would gather it
            ys,
            ~jnp.all(success),
            "simulate_ensemble: a member failed (max_steps used up or the step size collapsed); "
            "pass throw=False to keep the others and inspect sol.success",
        )
    members = ys.shape[0]
    stats = dict(
        num_steps=steps,
        num_accepted_steps=steps - rejected,
        num_rejected_steps=rejected,
        max_steps=jnp.full((members,), max_steps, jnp.int32),
        t_reached=t_reached,
    )
    return Solution(
        ts=jnp.broadcast_to(ts, (members,) + ts.shape),
        ys=ys,
        stats=stats,
        success=success,
        result=status,
        labels=model.labels(),
    )


def _vmapped(model, y0, ts, params, in_axes, method, options, keys=None) -> Solution:
    options = {k: v for k, v in options.items() if v is not None}
    if keys is None:
        return jax.vmap(lambda y, p: simulate(model, y, ts, p, method=method, **options), in_axes=in_axes)(y0, params)

    def one(y, p, k):
        return simulate(model, y, ts, p, method=method, key=k, **options)

    return jax.vmap(one, in_axes=in_axes + (0,))(y0, params, keys)


def _check_keys(key, members: int):
    """One PRNG key per member: a typed key array `(M,)` or raw `uint32` keys `(M, 2)`."""
    if key is None:
        raise ValueError("simulate_ensemble: an SDE ensemble needs key=, one PRNG key per member")
    key = jnp.asarray(key) if not isinstance(key, jax.Array) else key
    if not jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        if key.dtype != jnp.uint32 or key.ndim != 2 or key.shape[1] != 2:
            raise ValueError(
                "simulate_ensemble: key must be jax.random.split(k, M) (typed keys (M,) or raw uint32 (M, 2)), "
                f"got dtype {key.dtype} and shape {key.shape}"
            )
        key = jax.random.wrap_key_data(key)
    if key.shape != (members,):
        raise ValueError(f"simulate_ensemble: key must hold one key per member ({members}), got shape {key.shape}")
    if str(jax.random.key_impl(key)) != "threefry2x32":
        raise ValueError("simulate_ensemble: the SDE kernel draws from threefry2x32 keys (jax's default)")
    return key


def _no_key(key):
    if key is not None:
        raise ValueError("simulate_ensemble: key= is for SDE ensembles; an ODE has no noise")
    return None


def _check_in_axes(in_axes) -> tuple:
    if not isinstance(in_axes, tuple) or len(in_axes) != 2 or any(a not in (0, None) for a in in_axes):
        raise ValueError(f"simulate_ensemble: in_axes must be a pair of 0 or None for (y0, params), got {in_axes!r}")
    if in_axes == (None, None):
        raise ValueError("simulate_ensemble: in_axes=(None, None) gives no member axis; batch y0 or params")
    return in_axes


def _members(y0, params, in_axes) -> int:
    sizes = {}
    for name, tree, axis in (("y0", y0, in_axes[0]), ("params", params, in_axes[1])):
        if axis is None:
            continue
        for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
            shape = jnp.shape(leaf)
            label = name + jax.tree_util.keystr(path)
            if not shape:
                raise ValueError(f"simulate_ensemble: {label} is batched (in_axes 0) but is a scalar")
            sizes[label] = shape[0]
    if len(set(sizes.values())) != 1:
        raise ValueError(f"simulate_ensemble: every batched leaf needs the same leading member size, got {sizes}")
    return next(iter(sizes.values()))


def _kernel_refusal(model, method, y0, params, in_axes, members, block) -> str | None:
    """Why the kernel path cannot run this ensemble, or `None`."""
    if isinstance(model, SDE):
        return _sde_refusal(model, method, y0, params, in_axes)
    rosenbrock = isinstance(method, AbstractRosenbrock)
    if type(method) not in _EXPLICIT and not rosenbrock:
        return f"the kernel path runs {_KERNEL_METHODS}, not {type(method).__name__}"
    if rosenbrock and (method.jacobian != "auto" or method.linear_solver is not None):
        return "the kernel path forms each member's dense Jacobian itself: leave jacobian and linear_solver unset"
    if rosenbrock and method.reuse_jacobian is not None:
        return "the kernel path evaluates a fresh Jacobian every step: the vmapped solve keeps one (reuse_jacobian)"
    if model.imex_split() is not None:
        return "the kernel path runs a plain right-hand side, not an IMEX split"
    if model.mass_matrix is not None:
        return "the kernel path has no mass matrix (M dy/dt = f): the vmapped Rosenbrock solve takes it"
    shape = jnp.shape(y0)[1:] if in_axes[0] == 0 else jnp.shape(y0)
    if len(shape) != 1:
        return f"the kernel path needs each member's state to be a 1-D array, got shape {shape}"
    if shape[0] > MAX_KERNEL_STATE:
        return f"the state has {shape[0]} entries; the kernel path holds at most {MAX_KERNEL_STATE} per member"
    if not jnp.issubdtype(jnp.result_type(y0), jnp.floating):
        return f"y0 must be floating point, got {jnp.result_type(y0)}"
    if block < 1 or block & (block - 1):
        return f"block_size must be a power of two, got {block}"
    backend = jax.default_backend()
    if backend not in ("cpu", "gpu"):
        return f"no kernel path on the {backend!r} backend (GPU: Pallas/Triton; CPU: XLA)"
    one_p = params if in_axes[1] is None else jax.tree_util.tree_map(lambda x: x[0], params)
    one_y = y0[0] if in_axes[0] == 0 else y0
    example = (jnp.zeros((), jnp.result_type(y0)), jnp.asarray(one_y), one_p)
    try:
        LaneProgram(model.rhs, *example).check()
        if rosenbrock:
            LaneProgram(jax.jacfwd(model.rhs, argnums=1), *example).check()
    except LaneError as err:
        return str(err)
    del members
    return None


def _sde_refusal(model, method, y0, params, in_axes) -> str | None:
    if not isinstance(method, _SDE_METHODS):
        return f"the SDE kernel path runs EulerMaruyama and StratonovichHeun, not {type(method).__name__}"
    one_p = params if in_axes[1] is None else jax.tree_util.tree_map(lambda x: x[0], params)
    one_y = jnp.asarray(y0[0] if in_axes[0] == 0 else y0)
    if one_y.ndim != 1 or one_y.shape[0] > MAX_KERNEL_STATE:
        return f"the kernel path needs a 1-D state of at most {MAX_KERNEL_STATE} entries, got shape {one_y.shape}"
    try:
        sde_stepper_factory(model, method, (jnp.zeros((), one_y.dtype), one_y, one_p), None)().program.check()
    except LaneError as err:
        return str(err)
    return None


def _backend() -> str:
    return "pallas" if jax.default_backend() == "gpu" else "xla"


def _broadcast_members(y0, params, in_axes, members):
    y0 = jnp.asarray(y0)
    if in_axes[0] is None:
        y0 = jnp.broadcast_to(y0, (members,) + y0.shape)
    if in_axes[1] is None:
        params = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (members,) + jnp.shape(x)), params)
    params = jax.tree_util.tree_map(lambda x: jnp.asarray(x, jnp.result_type(x, y0)), params)
    return y0, params


def _is_zero(t) -> bool:
    leaves = jax.tree_util.tree_leaves(t, is_leaf=lambda x: isinstance(x, jax.custom_derivatives.SymbolicZero))
    return all(isinstance(x, jax.custom_derivatives.SymbolicZero) for x in leaves)


def _instantiate(tangent, primal):
    """Zeros for symbolic-zero tangents (`symbolic_zeros=True` passes them unmaterialised)."""
    return jax.tree_util.tree_map(
        lambda t, p: jnp.zeros_like(p) if isinstance(t, jax.custom_derivatives.SymbolicZero) else t,
        tangent,
        primal,
        is_leaf=lambda x: isinstance(x, jax.custom_derivatives.SymbolicZero),
    )


def _float0(x: Array):
    return np.zeros(x.shape, dtype=jax.dtypes.float0)


__all__ = ["simulate_ensemble", "MAX_KERNEL_STATE"]
