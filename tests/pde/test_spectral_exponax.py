"""The catalogue against exponax (an independent JAX library) on the same problems, same
scheme (ETDRK4, 16 contour points), same dealiasing: agreement to round-off.

Convention mapping (exponax 0.2.0): its dealiasing keeps `|m| <= f (n // 2) - 1`, so `f` is
chosen to keep exactly our modes; its 2-D vorticity is `-omega` in our convention (its
velocity is `(d/dy, -d/dx) laplacian^-1 omega`), with drag `-mu` and injection scale `A`;
Swift–Hohenberg's `critical_number` is `kc^2`.
"""

import exponax as ex  # noqa: E402  (test extra: the independent reference)
import jax.numpy as jnp
import numpy as np

import sciax
from sciax import pde
from sciax.pde import spectral


def _exponax_fraction(n: int, fraction: float = 2 / 3) -> float:
    kept = int(np.max(np.nonzero(spectral.dealias_mask(pde.Grid(n, 1.0), fraction))[0]))
    return (kept + 1) / (n // 2)


def _ours(model, u0, steps, dt, p):
    sol = sciax.simulate(
        model, jnp.asarray(u0), jnp.array([0.0, steps * dt]), p, method=pde.ETDRK4(dt=dt, contour_points=16)
    )
    return np.asarray(sol.ys[-1])


def test_kuramoto_sivashinsky_kassam_trefethen_setup_to_t20():
    n, length, dt = 128, 32 * np.pi, 0.25
    g = pde.Grid(n, length)
    (x,) = g.coords()
    u0 = np.cos(x / 16) * (1 + np.sin(x / 16))
    stepper = ex.stepper.KuramotoSivashinskyConservative(
        1, length, n, dt, order=4, dealiasing_fraction=_exponax_fraction(n)
    )
    theirs = np.asarray(ex.repeat(stepper, 80)(jnp.asarray(u0)[None])[0])
    ours = _ours(spectral.kuramoto_sivashinsky(g), u0, 80, dt, None)
    assert np.abs(ours - u0).max() > 0.5
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-10)


def test_navier_stokes_2d_kolmogorov_with_drag():
    n, dt = 32, 0.01
    g = pde.Grid((n, n), 2 * np.pi)
    x, y = g.meshgrid()
    w0 = np.sin(x + 0.3) * np.cos(2 * y) + 0.5 * np.cos(3 * x - y + 1.0) + 0.3 * np.sin(2 * x + 2 * y)
    nu, mu, amp = 0.01, 0.1, 1.0
    stepper = ex.stepper.KolmogorovFlowVorticity(
        2,
        2 * np.pi,
        n,
        dt,
        diffusivity=nu,
        drag=-mu,
        injection_mode=4,
        injection_scale=amp,
        order=4,
        dealiasing_fraction=_exponax_fraction(n),
    )
    theirs = -np.asarray(ex.repeat(stepper, 100)(-jnp.asarray(w0)[None])[0])
    ours = _ours(spectral.navier_stokes_2d(g, forcing_mode=4), w0, 100, dt, {"nu": nu, "drag": mu, "forcing": amp})
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-10)


def test_reaction_diffusion_1d():
    n = 32
    g = pde.Grid(n, 2 * np.pi)
    (x,) = g.coords()
    u0 = 0.5 * np.sin(x) + 0.3 * np.cos(3 * x + 0.2)
    cases = [
        (
            ex.stepper.reaction.AllenCahn(1, 2 * np.pi, n, 0.05, diffusivity=0.1, order=4, dealiasing_fraction=0.5),
            spectral.allen_cahn(g),
            {"epsilon": 0.1},
        ),
        (
            ex.stepper.reaction.CahnHilliard(
                1, 2 * np.pi, n, 0.01, diffusivity=0.5, gamma=0.1, order=4, dealiasing_fraction=0.5
            ),
            spectral.cahn_hilliard(g),
            {"mobility": 0.5, "gamma": 0.1},
        ),
        (
            ex.stepper.reaction.SwiftHohenberg(
                1,
                2 * np.pi,
                n,
                0.05,
                reactivity=0.3,
                critical_number=4.0,
                polynomial_coefficients=(0.0, 0.0, 0.5, -1.0),
                order=4,
                dealiasing_fraction=0.5,
            ),
            spectral.swift_hohenberg(g),
            {"r": 0.3, "kc": 2.0, "g": 0.5},
        ),
    ]
    for stepper, model, p in cases:
        theirs = np.asarray(ex.repeat(stepper, 50)(jnp.asarray(u0)[None])[0])
        np.testing.assert_allclose(_ours(model, u0, 50, stepper.dt, p), theirs, rtol=0, atol=1e-10)


def test_gray_scott_2d_two_fields():
    n = 16
    g = pde.Grid((n, n), 2 * np.pi)
    x, y = g.meshgrid()
    bump = np.exp(-((x - 3) ** 2 + (y - 3) ** 2))
    y0 = np.stack([1 - 0.5 * bump, 0.25 * bump])
    stepper = ex.stepper.reaction.GrayScott(
        2,
        2 * np.pi,
        n,
        0.5,
        diffusivity_1=0.02,
        diffusivity_2=0.01,
        feed_rate=0.04,
        kill_rate=0.06,
        order=4,
        dealiasing_fraction=0.5,
    )
    theirs = np.asarray(ex.repeat(stepper, 50)(jnp.asarray(y0)))
    ours = _ours(spectral.gray_scott(g), y0, 50, 0.5, {"Du": 0.02, "Dv": 0.01, "F": 0.04, "kappa": 0.06})
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-10)
