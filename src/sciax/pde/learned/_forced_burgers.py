"""`ForcedBurgers`: the forced viscous Burgers equation of Bar-Sinai et al. in finite-volume form,
`random_forcing` (their forcing recipe).

Reference: Y. Bar-Sinai, S. Hoyer, J. Hickey and M. P. Brenner, "Learning data-driven
discretizations for partial differential equations", PNAS 116 (2019) 15344-15349, Methods and SI
(the forcing follows their `RandomForcing`: 20 travelling waves, amplitudes uniform in
[-0.5, 0.5], frequencies uniform in [-0.4, 0.4], phases uniform in [0, 2 pi), wavenumbers drawn
from {3, 4, 5, 6} on the period 2 pi; eta = 0.01).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, PRNGKeyArray

from ..._model import AbstractModel
from ...grid import Grid, Periodic
from ..fd._rk4 import RK4
from ..fv import AbstractNumericalFlux, AbstractReconstruction, Burgers
from ._face import LearnedFaceValues
from ._memory import check_memory

FORCING_KEYS = ("amplitude", "omega", "wavenumber", "phase")
# What of the forcing the learned reconstruction may read, per cell (see `ForcedBurgers.forcing_fields`).
FORCING_FIELDS = ("average", "rate", "face")


class ForcedBurgers(AbstractModel):
    """`u_t + (u^2 / 2)_x = eta u_xx + f(x, t)` on a periodic 1-D grid of cell averages, with
    `f(x, t) = sum_j A_j sin(omega_j t + k_j x + phi_j)`.

    The advective flux is `sciax.pde.fv.Burgers`'s (its `reconstruction` and `numerical_flux`:
    a `LearnedReconstruction` plugs in here); the viscous flux at a face is
    `-eta (ubar_{i+1} - ubar_i) / dx` (second order) or, with `viscous` a `LearnedFaceValues`
    with `derivative=1`, `-eta D_{i+1/2} / dx` from its learned face derivative `D` (the paper
    learns this derivative too), so the update is conservative up to the forcing. The forcing
    enters as its exact cell average,
    `A_j sin(omega_j t + k_j x_i + phi_j) sin(k_j dx / 2) / (k_j dx / 2)`.

    **Arguments:** `grid`: a 1-D `sciax.pde.Grid` (use `points="centre"` so that coarse cells are
    unions of fine ones, see `coarse_grain`); `eta >= 0` (length^2/time, static);
    `reconstruction` (default `WENO5Z()`), `numerical_flux` (default `Rusanov()`), `viscous`
    (default `None`: the second-order face derivative). `ValueError` for a `viscous` that is not
    a `LearnedFaceValues` with `derivative=1`.

    **Memory** (`memory = (tau_1, .., tau_k)`, time units): the coarse state does not fix the
    fine one (where in its cell a shock sits, say), and the exact coarse-grained dynamics carry a
    memory of the past for it (Mori-Zwanzig); here a Markovian embedding of exponential memory
    kernels: lagged fields `dlag_j/dt = (u - lag_j) / tau_j`, whose differences `u - lag_j` the
    learned reconstruction reads as extra fields (a `LearnedFaceValues` with `features=k`, e.g.
    `face_net(..., features=k)`). The state is then `{"u": (n,), "lag": (k, n)}`: `initial_state`
    starts without history (`lag = u`), `lagged` computes the lags along a reference trajectory
    (for training). Measured on the benchmark of Bar-Sinai et al. with one lag of 0.2, trained on
    unrolled losses: the held-out error fell by 16% on 32 cells (the time-derivative loss by a
    third) and by 15% on 16 cells (`benchmarks/learned_discretization.py`, its default there).

    **Forcing as input** (`read_forcing`: names from `FORCING_FIELDS`, or `True` for
    `("average",)`): the learned face values also read those fields of the forcing at the stage
    time (`forcing_fields`; after the lags'), which tell the network where the flow is being
    pushed. With memory, in the same benchmark: the cell averages lowered the held-out error by 15%
    again on 32 cells and 35% on 16 cells; the face values with them by 3-4% more on 32 cells.

    **params:** the forcing, a dict of arrays `amplitude`, `omega` (1/time), `wavenumber`
    (1/length), `phase`, each of shape `(modes,)` (see `random_forcing`), or `None` (unforced).
    Differentiable in `y0`, the forcing and the reconstruction's (and `viscous`'s) weights. State:
    `grid.shape`, or with `memory` the dict above. `ValueError` for a time constant that is not a
    number > 0, or a reconstruction whose `features` is not the number of time constants (plus
    one with `read_forcing`).
    """

    inviscid: Burgers
    eta: float = eqx.field(static=True)
    viscous: LearnedFaceValues | None
    memory: tuple[float, ...] = eqx.field(static=True)
    read_forcing: tuple[str, ...] = eqx.field(static=True)

    def __init__(
        self,
        grid: Grid,
        *,
        eta: float = 0.01,
        reconstruction: AbstractReconstruction | None = None,
        numerical_flux: AbstractNumericalFlux | None = None,
        viscous: LearnedFaceValues | None = None,
        memory: float | tuple[float, ...] = (),
        read_forcing: bool | tuple[str, ...] = False,
    ):
        if isinstance(eta, bool) or not isinstance(eta, (int, float, np.integer, np.floating)) or not eta >= 0:
            raise ValueError(f"ForcedBurgers: eta must be a number >= 0, got eta={eta!r}")
        self.inviscid = Burgers(grid, Periodic(), reconstruction=reconstruction, numerical_flux=numerical_flux)
        if viscous is not None and not (isinstance(viscous, LearnedFaceValues) and viscous.derivative == 1):
            learned = isinstance(viscous, LearnedFaceValues)
            got = f"derivative={viscous.derivative}" if learned else type(viscous).__name__
            raise ValueError(f"ForcedBurgers: viscous must be None or a LearnedFaceValues with derivative=1, got {got}")
        if viscous is not None and viscous.features:
            raise ValueError(f"ForcedBurgers: viscous must read the state alone (features=0), got {viscous.features}")
        self.eta, self.viscous, self.memory = float(eta), viscous, check_memory(memory)
        self.read_forcing = _check_read_forcing(read_forcing)
        features = getattr(self.inviscid.reconstruction, "features", 0)
        want = len(self.memory) + len(self.read_forcing)
        if features != want:
            raise ValueError(
                f"ForcedBurgers: with memory={self.memory!r} ({len(self.memory)} lagged fields) and "
                f"read_forcing={read_forcing!r} the reconstruction must be a LearnedFaceValues reading {want} extra "
                f"fields (features={want}), got {type(self.inviscid.reconstruction).__name__} with features={features}"
            )

    @property
    def grid(self) -> Grid:
        return self.inviscid.grid

    def forcing(self, t, params) -> Float[Array, " n"]:
        """The cell averages of `f(., t)`."""
        if params is None:
            return jnp.zeros(self.grid.shape)
        return self.forcing_fields(t, params, ("average",))[0]

    def forcing_fields(self, t, params, fields: tuple[str, ...]) -> Float[Array, "m n"]:
        """Per cell, for each of `fields`: `"average"` the cell average of `f(., t)`, `"rate"` that of
        `df/dt`, `"face"` the point value of `f` at the cell's left face (with the average, the
        forcing's structure inside the cell, which a coarse grid cannot resolve)."""
        if params is None:
            return jnp.zeros((len(fields), *self.grid.shape))
        x, dx = self.grid.coords()[0], self.grid.spacing[0]
        a, w, k, phi = (jnp.asarray(params[key])[:, None] for key in FORCING_KEYS)
        half = k * dx / 2
        phase, sinc = w * t + k * x + phi, jnp.sin(half) / half
        rows = {
            "average": lambda: a * jnp.sin(phase) * sinc,
            "rate": lambda: a * w * jnp.cos(phase) * sinc,
            "face": lambda: a * jnp.sin(phase - half),
        }
        return jnp.stack([jnp.sum(rows[name](), axis=0) for name in fields])

    def rhs(self, t, y, params):
        if self.memory:  # `simulate` traces `rhs` before the method checks `y0`
            self.check_state(y)
        u = y["u"] if self.memory else y
        dx = self.grid.spacing[0]
        if self.viscous is None:
            viscous = self.eta * (jnp.roll(u, -1) - 2 * u + jnp.roll(u, 1)) / dx**2
        else:
            gradient = self.viscous.faces(_wrap(u, self.viscous.radius))[..., 0]
            viscous = self.eta * (gradient[1:] - gradient[:-1]) / dx**2
        # The average first (it forces the cells), then the other fields the network reads.
        names = ("average",) + tuple(name for name in self.read_forcing if name != "average")
        fields = self.forcing_fields(t, params, names).astype(u.dtype)
        force = fields[0]
        extra = [u - y["lag"]] if self.memory else []
        if self.read_forcing:
            extra.append(fields[np.asarray([names.index(name) for name in self.read_forcing])])
        advective = self._advection(u, jnp.concatenate(extra)) if extra else self.inviscid.rhs(t, u, None)
        rate = advective + viscous + force
        if not self.memory:
            return rate
        return {"u": rate, "lag": (u - y["lag"]) / jnp.asarray(self.memory, u.dtype)[:, None]}

    def _advection(self, u, extra):
        """`-(F_{i+1/2} - F_{i-1/2}) / dx` from the learned face values, which read `extra` too."""
        recon, model = self.inviscid.reconstruction, self.inviscid
        r = recon.radius
        # Periodic ghost cells; the n + 1 faces from the left face of cell 0 to the right face of cell n - 1.
        faces = recon.faces(_wrap(u, r), _wrap(extra, r))
        flux = model.numerical_flux(model, faces[None, :, 0], faces[None, :, -1], None)[0]
        return -(flux[1:] - flux[:-1]) / self.grid.spacing[0]

    def initial_state(self, u0: Float[Array, " n"], lag: Float[Array, "k n"] | None = None):
        """The state to start from: `u0` itself without memory; with it `{"u": u0, "lag": lag}`,
        by default `lag = u0` for every time constant (no history)."""
        if not self.memory:
            if lag is not None:
                raise ValueError("ForcedBurgers.initial_state: lag was given but the model has no memory")
            return u0
        lag = jnp.broadcast_to(u0, (len(self.memory), *jnp.shape(u0))) if lag is None else lag
        return {"u": u0, "lag": lag}

    def observed(self, y):
        """The cell averages `u` of a state (or of a batch or trajectory of states)."""
        return y["u"] if self.memory else y

    def check_state(self, y, what: str = "the state") -> None:
        if not self.memory:
            return self.inviscid.check_state(y, what)
        if not isinstance(y, dict) or set(y) != {"u", "lag"}:
            got = sorted(y) if isinstance(y, dict) else type(y).__name__
            raise ValueError(
                f"ForcedBurgers(memory=...): {what} must be a dict with keys 'u' and 'lag' (see initial_state), "
                f"got {got}"
            )
        self.inviscid.check_state(y["u"], f"{what}['u']")
        want = (len(self.memory), *self.grid.shape)
        if jnp.shape(y["lag"]) != want:
            raise ValueError(f"ForcedBurgers: {what}['lag'] must have shape {want}, got {jnp.shape(y['lag'])}")

    def check_params(self, params) -> None:
        if params is None:
            return
        if not isinstance(params, dict) or set(params) != set(FORCING_KEYS):
            got = sorted(params) if isinstance(params, dict) else type(params).__name__
            raise ValueError(f"ForcedBurgers: params must be None or a dict with keys {FORCING_KEYS}, got {got}")
        shapes = {key: jnp.shape(params[key]) for key in FORCING_KEYS}
        if len(set(shapes.values())) != 1 or len(shapes["amplitude"]) != 1:
            raise ValueError(f"ForcedBurgers: the forcing arrays must share one shape (modes,), got {shapes}")

    def stable_dt(self, u_max: float) -> float:
        """A step for `RK4` that is stable with WENO5 up to speeds `|u| <= u_max`: the advective
        bound `dx / u_max` (CFL 1; RK4 reaches 2.83 along the imaginary axis, WENO5's
        eigenvalues about 1.6-2 dx), the diffusive bound `2.78 dx^2 / (4 eta)` and, with memory,
        `2.78 tau` for the lags' relaxation, times 0.8."""
        dx = self.grid.spacing[0]
        diffusive = 2.78 * dx**2 / (4 * self.eta) if self.eta > 0 else np.inf
        return 0.8 * min(dx / u_max, diffusive, 2.78 * min(self.memory, default=np.inf))

    def default_method(self):
        # |u| stays below about 2 under the default forcing (measured on 512 cells).
        return RK4(self.stable_dt(2.0))


def random_forcing(
    key: PRNGKeyArray, batch: tuple[int, ...] = (), *, modes: int = 20, wavenumbers=(3, 4, 5, 6)
) -> dict[str, Float[Array, "*batch modes"]]:
    """Random forcings by the recipe of Bar-Sinai et al. (see the module): a dict of arrays of
    shape `(*batch, modes)` for `ForcedBurgers`'s `params`. Deterministic in `key`."""
    ka, kw, kk, kp = jax.random.split(key, 4)
    shape = (*batch, modes)
    dtype = jnp.result_type(float)
    return {
        "amplitude": jax.random.uniform(ka, shape, dtype, -0.5, 0.5),
        "omega": jax.random.uniform(kw, shape, dtype, -0.4, 0.4),
        "wavenumber": jax.random.choice(kk, jnp.asarray(wavenumbers, dtype), shape),
        "phase": jax.random.uniform(kp, shape, dtype, 0.0, 2 * np.pi),
    }


def _check_read_forcing(read_forcing) -> tuple[str, ...]:
    """`read_forcing` as a tuple of `FORCING_FIELDS` names: `True` is `("average",)`, `False` none."""
    if isinstance(read_forcing, bool):
        return ("average",) if read_forcing else ()
    ok = isinstance(read_forcing, (tuple, list)) and all(name in FORCING_FIELDS for name in read_forcing)
    if not ok or len(set(read_forcing)) != len(read_forcing):
        raise ValueError(
            f"ForcedBurgers: read_forcing must be True, False or a tuple of distinct names from {FORCING_FIELDS}, "
            f"got {read_forcing!r}"
        )
    return tuple(read_forcing)


def _wrap(a, width: int):
    """`a` with `width` periodic ghost cells at each end of its last axis."""
    return jnp.pad(a, [(0, 0)] * (a.ndim - 1) + [(width, width)], mode="wrap")
