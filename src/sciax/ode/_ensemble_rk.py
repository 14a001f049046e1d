"""The adaptive explicit Runge–Kutta step of the ensemble kernels, one trajectory per lane.

Every array here is a lane vector of shape `(B,)` (one entry per member) or an
object array of them (see `_lanes.py`); each member has its own time, step
size, error estimate and accept/reject decision, so nothing runs in lockstep
but the loop itself. The scheme matches `sciax.simulate` with the same method:
diffrax's Butcher tableau and dense-output interpolant, the RMS error norm
scaled by `atol + rtol * max(|y0|, |y1|)`, and diffrax's default step-size
controller (integral control: `h * clip(0.9 * err^(-1/order), 0.2, 10)`, no
growth after a rejection, no shrinking after an acceptance). The first step follows Hairer, Nørsett & Wanner,
*Solving ODEs I*, II.4 (as diffrax does), unless `dt0` is given. Step counts can
differ from the vmapped solve in the last digits of `t`, so values agree to the
tolerance, not bit for bit.
"""

from __future__ import annotations

import diffrax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ._lanes import LaneProgram, is_lane

#: Status codes per member (the `result` of the kernel path).
OK, MAX_STEPS, STEP_COLLAPSED = 0, 1, 2

SAFETY, FACTOR_MIN, FACTOR_MAX = 0.9, 0.2, 10.0


def _axpy(y, terms):
    """`y + sum_j c_j * k_j` over lanes, skipping zero coefficients."""
    out = []
    for i in range(len(y)):
        acc = y[i]
        for c, k in terms:
            if c != 0:
                acc = acc + float(c) * k[i]
        out.append(acc)
    return out


def rms(values):
    """Root mean square over a list of lane vectors."""
    total = values[0] * values[0]
    for v in values[1:]:
        total = total + v * v
    return jnp.sqrt(total / len(values))


def error_norm(err, y0, y1, rtol, atol):
    """diffrax's RMS norm of the error scaled by `atol + rtol * max(|y0|, |y1|)`; `inf` if not finite."""
    en = rms([e / (atol + rtol * jnp.maximum(jnp.abs(a), jnp.abs(b))) for e, a, b in zip(err, y0, y1)])
    return jnp.where(jnp.isfinite(en), en, jnp.inf)


def control(h, en, order):
    """diffrax's default (integral) controller: accept if `en < 1`; next step
    `h * clip(0.9 en^(-1/order), ...)`, never shrinking after an acceptance nor growing after a rejection."""
    accept = en < 1.0
    inv = jnp.where(jnp.isfinite(en), 1.0 / en, 0.0)
    factor = jnp.clip(
        SAFETY * inv ** (1.0 / order),
        jnp.where(accept, 1.0, FACTOR_MIN),
        jnp.where(accept, FACTOR_MAX, SAFETY),
    )
    return accept, h * factor


def initial_step(f, t0, y0, f0, n_err, order, rtol, atol):
    """Hairer, Nørsett & Wanner's first-step choice (Solving ODEs I, II.4), as diffrax's
    `_select_initial_step`, on the first `n_err` components; `f(t, y)` over lanes."""
    y_all, f_all, e = y0, f0, n_err
    y0, f0 = y0[:e], f0[:e]
    scale = [atol + rtol * jnp.abs(v) for v in y0]
    d0 = rms([v / s for v, s in zip(y0, scale)])
    d1 = rms([v / s for v, s in zip(f0, scale)])
    small = (d0 < 1e-5) | (d1 < 1e-5)
    h0 = jnp.where(small, 1e-6, 0.01 * d0 / jnp.where(small, 1.0, d1))
    f1 = f(t0 + h0, [a + h0 * b for a, b in zip(y_all, f_all)])[:e]
    d2 = rms([(b - a) / s for a, b, s in zip(f0, f1, scale)]) / h0
    tiny = jnp.maximum(d1, d2) <= 1e-15
    h1 = jnp.where(
        tiny,
        jnp.maximum(1e-6, h0 * 1e-3),
        (0.01 / jnp.where(tiny, 1.0, jnp.maximum(d1, d2))) ** (1.0 / order),
    )
    return jnp.minimum(100 * h0, h1)


class LaneERK:
    """An FSAL explicit Runge–Kutta pair over lane vectors.

    `rhs` is a `LaneProgram` of `f(t, y, params)`; `tableau`, `interpolation_cls`
    and `order` come from the diffrax solver the sciax method wraps (Tsit5, Dopri5);
    `example` is one member's `(t, y, params)`. `n_err`: error control on the
    first `n_err` components only (default all).
    """

    def __init__(
        self,
        rhs: LaneProgram,
        tableau: diffrax.ButcherTableau,
        interpolation_cls,
        order: int,
        example,
        *,
        n_err: int | None = None,
    ):
        self.rhs, self.tableau, self.order = rhs, tableau, order
        t, y, _ = example
        stages = len(tableau.c) + 1
        k = jnp.zeros((stages,) + jnp.shape(y), jnp.result_type(y))

        def interpolate(t0, t1, y0, y1, k, t):
            return interpolation_cls(t0=t0, t1=t1, y0=y0, y1=y1, k=k).evaluate(t)

        self.interp = LaneProgram(interpolate, t, t, y, y, k, t)
        self.n = int(np.size(y))
        # Error control on the first n_err components only (the state, not its forward sensitivities).
        self.n_err = self.n if n_err is None else n_err

    def f(self, t, y, params, shape):
        out = self.rhs(shape, t, obj(y), params)
        return [lane(e, t) for e in out.reshape(-1)]

    def init(self, t0, y0, params, rtol, atol, dt0):
        """Per-member state at `t0`: time, step size, state, f(t0, y0) and the last step."""
        shape = t0.shape
        f0 = self.f(t0, y0, params, shape)
        h = self.initial_step(t0, y0, f0, params, rtol, atol) if dt0 is None else jnp.full(shape, dt0, t0.dtype)
        zeros = [jnp.zeros_like(v) for v in y0]
        ks = [[jnp.zeros_like(v) for v in y0] for _ in range(len(self.tableau.c) + 1)]
        return dict(t=t0, h=h, y=list(y0), f0=f0, t_prev=t0, y_prev=zeros, ks=ks)

    def initial_step(self, t0, y0, f0, params, rtol, atol):
        return initial_step(lambda t, y: self.f(t, y, params, t0.shape), t0, y0, f0, self.n_err, self.order, rtol, atol)

    def step(self, state, params, t_out, t_end, rtol, atol):
        """One attempted step of every lane; returns the new state (if accepted), acceptance and the
        controller's next step size. Steps run past `t_out` (dense output fills it in) but stop at `t_end`."""
        del t_out
        t, y, shape = state["t"], state["y"], state["t"].shape
        h = jnp.minimum(state["h"], t_end - t)
        ks = [[h * v for v in state["f0"]]]
        f = state["f0"]
        for a_row, c in zip(self.tableau.a_lower, self.tableau.c):
            stage = _axpy(y, list(zip(a_row, ks)))
            f = self.f(t + float(c) * h, stage, params, shape)
            ks.append([h * v for v in f])
        y1 = stage  # FSAL and SSAL: the last stage is (t + h, y1)
        err = _axpy([jnp.zeros_like(v) for v in y], list(zip(self.tableau.b_error, ks)))
        e = self.n_err
        en = error_norm(err[:e], y[:e], y1[:e], rtol, atol)
        accept, h_next = control(h, en, self.order)
        new = dict(t=t + h, h=h_next, y=y1, f0=f, t_prev=t, y_prev=y, ks=ks)
        return new, accept, h_next

    def output(self, state, t_out):
        """The state at `t_out`, which lies in the last accepted step `[t_prev, t]`."""
        k = np.empty((len(state["ks"]), self.n), dtype=object)
        for s, row in enumerate(state["ks"]):
            for i, v in enumerate(row):
                k[s, i] = v
        t0, t1 = state["t_prev"], state["t"]
        y = self.interp(t0.shape, t0, t1, obj(state["y_prev"]), obj(state["y"]), k, t_out)
        at_end = t_out == t1  # exact at the step's end (and at t0, where no step was taken)
        return [jnp.where(at_end, b, lane(a, t0)) for a, b in zip(y.reshape(-1), state["y"])]


def obj(values) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = v
    return out


def lane(x, like):
    """A lane vector shaped and typed like `like` (constants are broadcast)."""
    if is_lane(x):
        return x.astype(like.dtype) if x.dtype != like.dtype else x
    return jnp.full(like.shape, x, like.dtype)


def select(mask, new, old):
    """Per-lane choice between two states with the same structure (lists/dicts of lane vectors)."""
    if isinstance(old, dict):
        return {k: select(mask, new[k], old[k]) for k in old}
    if isinstance(old, (list, tuple)):
        return [select(mask, a, b) for a, b in zip(new, old)]
    return lax.select(mask, new, old)


__all__ = [
    "LaneERK",
    "select",
    "rms",
    "error_norm",
    "control",
    "initial_step",
    "obj",
    "lane",
    "OK",
    "MAX_STEPS",
    "STEP_COLLAPSED",
]
