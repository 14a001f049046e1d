"""`StaggeredLeapfrog`'s padded-state step of `ElasticWave` (XLA:CPU, `Dirichlet(0)` edges) against the
step that pads a copy of each field per difference: the same fields and seismograms, the same gradients,
and vmap over shots. Both routes run in the same process, the plain one by switching the route off.
Float64. (Its accuracy against exact solutions is tested by `test_elastic_wave.py`, whose `Dirichlet(0)`
cases take this route on the CPU.)"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax.pde import CPML, Dirichlet, ElasticWave, Grid, StaggeredLeapfrog
from sciax.pde.waves import _staggered

jax.config.update("jax_enable_x64", True)

FIELDS = ("vx", "vz", "sxx", "szz", "sxz")
N = 28


def medium(seed=0):
    rng = np.random.default_rng(seed)
    vp = 2.0 + 0.5 * rng.random((N, N))
    return {"vp": vp, "vs": vp * (0.3 + 0.25 * rng.random((N, N))), "rho": 1.0 + rng.random((N, N))}


def initial_state():
    x = np.arange(N) - N / 2
    bump = np.exp(-(x[:, None] ** 2 + (x[None, :] - 3) ** 2) / 6)
    z = jnp.zeros((N, N))
    return {**{k: z for k in FIELDS}, "vx": jnp.asarray(bump), "sxz": jnp.asarray(np.roll(bump, 4, 1))}


def model(order, source="explosive", bc=None):
    bc = Dirichlet(0) if bc is None else bc
    receivers = [(9, 14), (15, 20), (20, 8)]
    return ElasticWave(Grid((N, N), float(N)), f0=0.25, source=source, receivers=receivers, bc=bc, order=order)


def run(m, params, ts, dt, plain, monkeypatch, save=FIELDS + ("seismogram",), checkpoint=None):
    """`simulate` on the padded-state route (forced: with CPML layers it is the default on jax >= 0.12
    only), or with `plain` on the route that pads per difference. The route is chosen while tracing, so
    the plain runs take another checkpoint block (the same values) and with it a compiled program of
    their own: one traced under the patch."""
    with monkeypatch.context() as patch:
        patch.setattr(_staggered, "_padded", lambda model: not plain)
        if plain:
            checkpoint = 10**6 if checkpoint is None else checkpoint + 1
        method = StaggeredLeapfrog(dt, checkpoint=checkpoint)
        return sciax.simulate(m, initial_state(), ts, params, method=method, save=save).ys


def test_the_route_is_taken_on_the_cpu_with_rigid_edges_or_cpml():
    assert jax.default_backend() == "cpu"
    assert _staggered._padded(model(4))
    newer = tuple(int(x) for x in jax.__version__.split(".")[:2]) >= (0, 12)
    assert _staggered._padded(model(4, bc=CPML(5))) is newer  # see `_elastic._STRIPS_IN_PLACE`
    assert not _staggered._padded(model(4, bc=sciax.pde.Periodic()))


@pytest.mark.parametrize(
    "order, source, bc", [(2, "vz", None), (4, "explosive", None), (8, "vx", None), (4, "explosive", CPML(5))]
)
def test_padded_step_equals_the_plain_step(order, source, bc, monkeypatch):
    m = model(order, source, bc)
    params = {**medium(), "source": jnp.array([[12, 13], [17, 11]])}
    dt = 0.8 * float(m.staggered_stable_dt(params))
    # Unequal intervals (7 and 4 steps: odd step counts, the masked steps of non-uniform intervals).
    ts = dt * np.array([0.0, 7.0, 11.0, 18.0, 25.0 if bc is None else 61.0])
    padded, plain = (run(m, params, ts, dt, flag, monkeypatch) for flag in (False, True))
    for k in FIELDS + ("seismogram",):
        scale = float(jnp.max(jnp.abs(plain[k])))
        assert scale > 1e-3, k  # the waves (and the sources) reached the field
        np.testing.assert_allclose(padded[k], plain[k], rtol=0, atol=1e-13 * scale, err_msg=k)
    if bc is not None:  # the waves reached the layers: rigid edges give other fields
        rigid = run(model(order, source), params, ts, dt, False, monkeypatch)
        assert float(jnp.max(jnp.abs(rigid["vx"] - plain["vx"]))) > 0.1 * float(jnp.max(jnp.abs(plain["vx"])))


def test_gradients_equal_the_plain_step_and_finite_differences(monkeypatch):
    m, base = model(4), medium(1)
    source = jnp.array([12, 13])
    dt = 0.8 * float(m.staggered_stable_dt(base))
    ts = dt * np.arange(0, 41, 5)
    target = run(m, {**medium(2), "source": source}, ts, dt, True, monkeypatch, "seismogram")["seismogram"]

    def misfit(vp, vs, plain):
        params = {"vp": vp, "vs": vs, "rho": base["rho"], "source": source}
        seis = run(m, params, ts, dt, plain, monkeypatch, "seismogram", checkpoint=16)["seismogram"]
        return 0.5 * jnp.sum((seis - target) ** 2)

    vp, vs = jnp.asarray(base["vp"]), jnp.asarray(base["vs"])
    grads = {plain: jax.grad(misfit, argnums=(0, 1))(vp, vs, plain) for plain in (False, True)}
    for a, b in zip(grads[False], grads[True]):
        assert float(jnp.max(jnp.abs(b))) > 0
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * float(jnp.max(jnp.abs(b))))
    direction = np.random.default_rng(3).standard_normal((N, N))
    eps = 1e-5
    fd = (misfit(vp + eps * direction, vs, False) - misfit(vp - eps * direction, vs, False)) / (2 * eps)
    np.testing.assert_allclose(float(jnp.sum(grads[False][0] * direction)), float(fd), rtol=1e-6)


def test_vmap_over_shots(monkeypatch):
    m = model(8)
    params = medium()
    dt = 0.8 * float(m.staggered_stable_dt(params))
    ts = dt * np.arange(0, 31, 10)
    shots = jnp.array([[10, 12], [16, 15]])

    def seismogram(source):
        return run(m, {**params, "source": source}, ts, dt, False, monkeypatch, "seismogram")["seismogram"]

    batched = jax.vmap(seismogram)(shots)
    for k in range(2):
        one = run(m, {**params, "source": shots[k]}, ts, dt, True, monkeypatch, "seismogram")["seismogram"]
        np.testing.assert_allclose(batched[k], one, rtol=0, atol=1e-13 * float(jnp.max(jnp.abs(one))))
    assert float(jnp.max(jnp.abs(batched[0] - batched[1]))) > 1e-3 * float(jnp.max(jnp.abs(batched)))
