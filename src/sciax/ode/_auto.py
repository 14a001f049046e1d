"""`Auto`: pick a non-stiff or a stiff method from an estimate of the problem's stiffness."""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree
from jaxtyping import Array, PyTree, Real

from .._method import AbstractMethod
from .._model import AbstractModel
from .._solution import Solution
from ._explicit import Tsit5
from ._rosenbrock_methods import Rodas5P

# Beyond this many states the spectral radius comes from power iteration, not eigvals.
_DENSE_EIG_MAX = 64
_POWER_ITERATIONS = 30


class Auto(AbstractMethod):
    """Chooses `nonstiff` (default `Tsit5()`) or `stiff` (default `Rodas5P()`).

    **The rule.** An explicit method is stable only for steps `h ≲ 3.3/ρ(J)`, where
    `ρ(J)` is the spectral radius of the Jacobian `∂f/∂y`; so it needs at least
    `ρ(J)·T/3.3` steps over the time span `T = ts[-1] - ts[0]`, whatever the
    tolerance. The problem counts as stiff when `ρ(J)·T > threshold` (default
    1000, i.e. a few hundred stability-limited steps: from there a Rosenbrock
    step, with its Jacobian and LU, is the cheaper way). `ρ(J)` is taken as the
    largest of its values at `(ts[0], y0)` and at one explicit Euler probe
    `y0 + (T/1000)·f(ts[0], y0)`, because stiffness often appears only once fast
    species build up (Robertson's kinetics is non-stiff at its initial state).
    Eigenvalues are exact for up to 64 states, power iteration beyond.

    The choice is made once, before the solve, and needs concrete `y0`, `ts` and
    `params`. Under `jax.jit`/`jax.vmap`/`jax.grad` (traced inputs) it cannot look
    at the values, and takes the `stiff` method, which is also correct for
    non-stiff problems (only more expensive per step). `Auto.choose(...)` returns
    the method it would take.

    Options are those both candidates accept (`options`; for the defaults those of
    `AbstractDiffraxMethod`: `rtol`, `atol`, `dt0`, `max_steps`, `adaptive`,
    `adjoint`, `event`, `dense`, `progress`, `throw`), passed to the chosen one.
    """

    nonstiff: AbstractMethod = eqx.field(default_factory=Tsit5)
    stiff: AbstractMethod = eqx.field(default_factory=Rodas5P)
    threshold: float = eqx.field(static=True, default=1000.0)

    def __check_init__(self):
        for name in ("nonstiff", "stiff"):
            if not isinstance(getattr(self, name), AbstractMethod):
                raise TypeError(f"Auto: {name} must be a sciax method such as Tsit5() or Rodas5P()")
        if not self.threshold > 0:
            raise ValueError(f"Auto: threshold must be > 0, got {self.threshold}")

    def choose(self, model: AbstractModel, y0: PyTree[Array], ts: Real[Array, " T"], params: PyTree) -> AbstractMethod:
        """The method `solve` will run for this problem (see the class docstring)."""
        leaves = jax.tree_util.tree_leaves((y0, ts, params))
        if getattr(model, "mass", None) is not None:
            return self.stiff  # M y' = f: only the (Rosenbrock) stiff method integrates it
        if any(isinstance(x, jax.core.Tracer) for x in leaves):
            return self.stiff
        return self.stiff if self.stiffness(model, y0, ts, params) > self.threshold else self.nonstiff

    @staticmethod
    def stiffness(model: AbstractModel, y0, ts, params) -> float:
        """`ρ(J)·T`: the stiffness estimate compared against `threshold`."""
        ts = np.asarray(ts)
        t0, span = ts[0], float(ts[-1] - ts[0])
        y_flat, unravel = ravel_pytree(y0)

        def f(y):
            return ravel_pytree(model.rhs(t0, unravel(y), params))[0]

        f0 = f(y_flat)
        probe = y_flat + (span / 1000.0) * f0
        radii = [_spectral_radius(f, y) for y in (y_flat, probe)]
        radii = [r for r in radii if np.isfinite(r)]
        return max(radii, default=0.0) * span

    @property
    def options(self) -> tuple[str, ...]:
        """The options both `nonstiff` and `stiff` accept (either may run)."""
        stiff = set(self.stiff.options)
        return tuple(name for name in self.nonstiff.options if name in stiff)

    def solve(
        self, model: AbstractModel, y0: PyTree[Array], ts: Real[Array, " T"], params: PyTree, **options: Any
    ) -> Solution:
        """Integrate with the chosen method; `options` go to its `solve` unchanged."""
        return self.choose(model, y0, ts, params).solve(model, y0, ts, params, **options)


def _spectral_radius(f, y) -> float:
    if y.size <= _DENSE_EIG_MAX:
        jac = np.asarray(jax.jacfwd(f)(y))
        if not np.all(np.isfinite(jac)):
            return float("nan")
        return float(np.max(np.abs(np.linalg.eigvals(jac)))) if jac.size else 0.0
    # Power iteration on J with Jacobian-vector products: converges to |λ_max|
    # for the dominant (usually real, negative) eigenvalue of stiff problems.
    _, jvp = jax.linearize(f, y)
    v = jax.random.normal(jax.random.key(0), y.shape, y.dtype)
    radius = jnp.zeros(())
    for _ in range(_POWER_ITERATIONS):
        w = jvp(v / jnp.linalg.norm(v))
        radius = jnp.linalg.norm(w)
        v = w
    return float(radius)


__all__ = ["Auto"]
