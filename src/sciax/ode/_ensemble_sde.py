"""Fixed-step SDE steppers of the ensemble kernels, with a counter-based normal generator per lane.

A kernel thread cannot call `jax.random` (a Triton program has no PRNG state
and no key splitting), so each member draws its Brownian increments from a
*counter-based* generator: Threefry-2x32 with 20 rounds (Salmon, Moraes, Dror &
Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC'11), the block cipher
behind `jax.random`'s default PRNG. It is a pure function of a key and a
counter built from uint32 additions, xors, shifts and ors, which Triton
compiles lane by lane. The key is the member's `jax.random.key_data(key)` (two
uint32 words), the counter is (step index, component pair): every step of
every member gets fresh, independent numbers with no state beyond a step
count, and the numbers of one member do not depend on the others in its block.
Uniforms become standard normals by the Box–Muller transform (Box & Muller,
Ann. Math. Statist. 29 (1958) 610), which needs only `log`, `sqrt`, `cos` and
`sin`, all available in Triton (no inverse-CDF tables).

The Brownian path therefore depends on the key *and* on the step sequence
(`dt0` and the output times, where steps are clipped): unlike `sciax.simulate`'s
virtual Brownian tree, the same key with a different `dt0` is another sample
path. Statistics are unaffected: each clipped step draws `sqrt(h) * N(0, 1)`.

Steppers follow the interface of `LaneERK` (`_ensemble_rk.py`): `init`, `step`,
`output` on lane vectors. Steps are fixed (`dt0`), shortened to land exactly on
the next output time; every step is accepted.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from ._ensemble_rk import lane, obj
from ._lanes import LaneProgram, is_lane
from ._sde import SDE
from ._sde_methods import EulerMaruyama, StratonovichHeun

#: Threefry-2x32 rotation constants and key-schedule parity (Salmon et al. 2011, Table 4 / Random123).
ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
PARITY = 0x1BD11BDA
ROUNDS = 20


def _u32(x):
    return x if is_lane(x) else np.uint32(x)


def _rotl(x, r: int):
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def threefry2x32(key0, key1, ctr0, ctr1):
    """Threefry-2x32-20 of the counter `(ctr0, ctr1)` under the key `(key0, key1)`: two uint32 words.

    Arguments are uint32 lane vectors or Python/NumPy integers (broadcast). Only uint32
    add/xor/shift/or, so the same code runs in XLA and in a Triton kernel; wrap-around
    addition is the cipher's arithmetic mod 2**32.
    """
    k0, k1, x0, x1 = (_u32(v) for v in (key0, key1, ctr0, ctr1))
    ks = (k0, k1, k0 ^ k1 ^ np.uint32(PARITY))
    x0, x1 = x0 + ks[0], x1 + ks[1]
    for r in range(ROUNDS):
        x0 = x0 + x1
        x1 = _rotl(x1, ROTATIONS[r % 8]) ^ x0
        if r % 4 == 3:  # key injection every four rounds
            s = r // 4 + 1
            x0 = x0 + ks[s % 3]
            x1 = x1 + ks[(s + 1) % 3] + np.uint32(s)
    return x0, x1


def uniform_open(bits, dtype):
    """Uniforms in the open interval (0, 1) from uint32 words: cell mid-points of a 2**-k grid.

    `k` = 32 bits for float64 and the mantissa width (23) for float32, so `bits + 0.5`
    is exact and no value rounds to 0 or 1 (Box–Muller takes `log(u)`).
    """
    k = min(32, jnp.finfo(dtype).nmant)
    top = bits >> np.uint32(32 - k) if k < 32 else bits
    return (top.astype(dtype) + 0.5) * (2.0**-k)


def normal_pair(key0, key1, step, pair: int, dtype):
    """Two independent standard normals per lane for counter `(step, pair)` (Box–Muller).

    Tails stop at `sqrt(-2 log(2**-33)) ≈ 6.8` (float64) or ≈ 5.8 (float32) standard deviations.
    """
    b0, b1 = threefry2x32(key0, key1, step, pair)
    u0, u1 = uniform_open(b0, dtype), uniform_open(b1, dtype)
    r = jnp.sqrt(-2.0 * jnp.log(u0))
    theta = (2.0 * math.pi) * u1
    return r * jnp.cos(theta), r * jnp.sin(theta)


def lane_normals(key0, key1, step, count: int, dtype) -> list:
    """`count` standard normals per lane for one step: components `2j, 2j + 1` come from counter `(step, j)`."""
    out = []
    for j in range((count + 1) // 2):
        out.extend(normal_pair(key0, key1, step, j, dtype))
    return out[:count]


class LaneEulerMaruyama:
    """Euler–Maruyama (Itô) over lane vectors: `y1 = y + f h + g dW`, `dW = sqrt(h) z`.

    Strong order 0.5 (1 for additive noise), weak order 1 (Kloeden & Platen, *Numerical
    Solution of SDEs*, 1992, §10.2, §14.1), as `sciax.ode.EulerMaruyama`. `program` is a
    `LaneProgram` of `(t, y, p) -> (drift, diffusion)`; `noise` is the SDE's noise type and
    `m` the number of Brownian components (`n` diagonal, 1 scalar, `prod(noise_shape)` general).
    Params arrive as `(user_params, key)`, `key` an object array `(2,)` of uint32 lanes.
    """

    def __init__(self, program: LaneProgram, noise: str, n: int, m: int, dt0: float | None):
        self.program, self.noise, self.n, self.m, self.dt0 = program, noise, n, m, dt0

    def init(self, t0, y0, params, rtol, atol, dt0):
        """Time, nominal step `h`, state and the step counter (uint32, the generator's first word)."""
        del params, rtol, atol
        dt = self.dt0 if self.dt0 is not None else dt0
        if dt is None:
            raise ValueError("the SDE ensemble kernel takes fixed steps: pass dt0=")
        h = jnp.full(t0.shape, dt, t0.dtype)
        return dict(t=t0, h=h, y=list(y0), step=jnp.zeros(t0.shape, jnp.uint32))

    def coefficients(self, t, y, user):
        """Drift `[n]` and diffusion `[n][m]` (diagonal and scalar: `[n][1]`) as lanes or constants."""
        f, g = self.program(t.shape, t, obj(y), user)
        f = [lane(e, t) for e in f.reshape(-1)]
        g = g.reshape(self.n, -1)
        return f, [[e for e in row] for row in g]

    def noise_term(self, g, dw):
        """`g dW` per component: `g_i dW_i` (diagonal), `g_i dW` (scalar), `Σ_j g_ij dW_j` (general)."""
        out = []
        for i, row in enumerate(g):
            if self.noise == "diagonal":
                pairs = [(row[0], dw[i])]
            elif self.noise == "scalar":
                pairs = [(row[0], dw[0])]
            else:
                pairs = list(zip(row, dw))
            acc = None
            for gij, dwj in pairs:
                if not is_lane(gij) and gij == 0:
                    continue
                term = (gij if is_lane(gij) else float(gij)) * dwj
                acc = term if acc is None else acc + term
            out.append(jnp.zeros_like(dw[0]) if acc is None else acc)
        return out

    def step(self, state, params, t_out, t_end, rtol, atol):
        """One step of every lane, clipped to land exactly on `min(t_out, t_end)`; always accepted."""
        del rtol, atol
        user, key = params
        t, y, h_nom, k = state["t"], state["y"], state["h"], state["step"]
        target = jnp.minimum(t_out, t_end)
        remaining = target - t
        # Land on the output time (no sliver step left by round-off), like diffrax's clip to t1.
        slack = 100 * jnp.finfo(t.dtype).eps * jnp.maximum(jnp.abs(target), 1.0)
        land = remaining <= h_nom + slack
        h = jnp.where(land, remaining, h_nom)
        z = lane_normals(key[0], key[1], k, self.m, t.dtype)
        dw = [jnp.sqrt(h) * v for v in z]
        y1 = self.update(t, y, h, dw, user)
        new = dict(t=jnp.where(land, target, t + h), h=h_nom, y=y1, step=k + np.uint32(1))
        return new, jnp.ones(t.shape, jnp.bool_), h_nom

    def update(self, t, y, h, dw, user):
        f, g = self.coefficients(t, y, user)
        return [a + h * b + c for a, b, c in zip(y, f, self.noise_term(g, dw))]

    def output(self, state, t_out):
        """The state: steps land on the output times, so `t == t_out` whenever the driver asks."""
        del t_out
        return list(state["y"])


class LaneStratonovichHeun(LaneEulerMaruyama):
    """Stochastic Heun (Stratonovich): an Euler predictor, then the trapezoidal average of `f` and `g`.

    `ỹ = y + f h + g dW`, `y1 = y + (f + f̃) h / 2 + (g + g̃) dW / 2` with `f̃, g̃` at `(t + h, ỹ)`:
    strong order 1 for commutative noise (Rümelin, SIAM J. Numer. Anal. 19 (1982) 604), as
    `sciax.ode.StratonovichHeun` (diffrax's `Heun`).
    """

    def update(self, t, y, h, dw, user):
        f, g = self.coefficients(t, y, user)
        pred = [a + h * b + c for a, b, c in zip(y, f, self.noise_term(g, dw))]
        f2, g2 = self.coefficients(t + h, pred, user)
        g_avg = [[_half_sum(a, b) for a, b in zip(r1, r2)] for r1, r2 in zip(g, g2)]
        noise = self.noise_term(g_avg, dw)
        return [a + (0.5 * h) * (b + b2) + c for a, b, b2, c in zip(y, f, f2, noise)]


def _half_sum(a, b):
    """`(a + b) / 2` of lanes or constants (constants stay constants, so zeros are still skipped)."""
    a, b = (v if is_lane(v) else float(v) for v in (a, b))
    return 0.5 * (a + b)


_STEPPERS = {EulerMaruyama: LaneEulerMaruyama, StratonovichHeun: LaneStratonovichHeun}


def sde_stepper_factory(model: SDE, method, example, dt0: float | None):
    """A zero-argument callable returning the kernel stepper of `method` for `model`.

    `example` is one member's `(t, y, params)` (user params, without the key): `y` a 1-D
    state, from which the lane program of `(drift, diffusion)` is traced. `dt0` is the fixed
    step (or `None`: the driver's `cfg["dt0"]` then applies). Raises `TypeError` for a model
    that is not an `SDE` or a method without a kernel stepper, `ValueError` for a calculus
    the method does not converge to, a non-1-D state or a non-positive `dt0`, and
    `LaneError` for drift/diffusion the lane program cannot run.
    """
    if not isinstance(model, SDE):
        raise TypeError(f"the SDE ensemble kernel needs a sciax.ode.SDE, got {type(model).__name__}")
    cls = _STEPPERS.get(type(method))
    if cls is None:
        names = " and ".join(f"{m.__name__}()" for m in _STEPPERS)
        raise TypeError(f"the SDE ensemble kernel runs {names}, not {type(method).__name__}")
    method._check_model(model)
    t, y, p = example
    y = jnp.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"the SDE ensemble kernel needs a 1-D state per member, got shape {y.shape}")
    if dt0 is not None and not dt0 > 0:
        raise ValueError(f"the SDE ensemble kernel needs dt0 > 0, got {dt0!r}")
    model.check(t, y, p)
    n = y.shape[0]
    m = {"diagonal": n, "scalar": 1, "general": math.prod(model.noise_shape or ())}[model.noise]
    program = LaneProgram(lambda t, y, p: (model.drift(t, y, p), model.diffusion(t, y, p)), t, y, p)
    return lambda: cls(program, model.noise, n, m, dt0)


__all__ = [
    "threefry2x32",
    "uniform_open",
    "normal_pair",
    "lane_normals",
    "LaneEulerMaruyama",
    "LaneStratonovichHeun",
    "sde_stepper_factory",
]
