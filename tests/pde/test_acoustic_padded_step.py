"""`Leapfrog`'s padded-state step of `AcousticWave` (XLA:CPU, orders 4 to 8, a whole grid) against the
one-pass step (`split_evaluate`, the halo-padded operator at the edges) or, for time-dependent boundary values,
the halo-padded step: the same fields and seismograms with sources, receivers and initial fields next to the
edges, mixed, periodic and time-dependent boundary conditions, uneven save intervals; the same gradients,
finite differences, and vmap. Both routes run in the same process, the other one by switching the route off.
Float64. (Its accuracy against exact solutions is tested by `test_fd_wave.py`, whose order-4/6/8 cases take
this route on the CPU.)"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax.pde import CPML, AcousticWave, Dirichlet, Grid, Leapfrog, Neumann, Periodic, ZeroPadding
from sciax.pde.waves import _acoustic, _leapfrog

from ._fd_reference import shifted_sum

jax.config.update("jax_enable_x64", True)

OUTPUTS = ("p", "v", "seismogram")


def medium(shape, seed=0):
    rng = np.random.default_rng(seed)
    return {"c": 1500 + 500 * rng.random(shape), "rho": 1000 + 800 * rng.random(shape)}


def wavy(t):
    """A time-dependent boundary value (pressure, on a Dirichlet side)."""
    return 1e-4 * jnp.sin(2 * jnp.pi * 40.0 * t)


def model(shape, order, bc, average="arithmetic"):
    # Receivers on and next to the edges, where the ghosts act.
    receivers = [(0,) * len(shape), (1,) + (2,) * (len(shape) - 1), tuple(n - 1 for n in shape)]
    grid = Grid(shape, tuple(5.0 * n for n in shape))
    return AcousticWave(grid, f0=25.0, bc=bc, order=order, receivers=receivers, density_average=average)


def initial_state(shape):
    # A bump next to the low edge of the first axis: the start (`to_padded`) fills ghosts from it.
    x = [np.arange(n, dtype=float) for n in shape]
    r2 = sum(
        (xi.reshape([-1 if a == b else 1 for b in range(len(shape))]) - c) ** 2
        for a, (xi, c) in enumerate(zip(x, [2.0] + [n / 2 for n in shape[1:]]))
    )
    bump = 1e-3 * np.exp(-r2 / 4)
    return {"p": jnp.asarray(bump), "v": jnp.asarray(np.roll(bump, 3, -1) * 50)}


def run(m, params, ts, dt, plain, monkeypatch, save=OUTPUTS, checkpoint=None, y0=None):
    """`simulate` on the padded-state route, or with `plain` on the one-pass route. The route is chosen
    while tracing, so the plain runs take another checkpoint block (the same values) and with it a compiled
    program of their own: one traced under the patch."""
    with monkeypatch.context() as patch:
        if plain:
            patch.setattr(_leapfrog, "_padded", lambda model, memory: False)
            checkpoint = 10**6 if checkpoint is None else checkpoint + 1
        y0 = initial_state(m.grid.shape) if y0 is None else y0
        return sciax.simulate(m, y0, ts, params, method=Leapfrog(dt, checkpoint=checkpoint), save=save).ys


def test_the_route_is_taken_from_order_4():
    assert jax.default_backend() == "cpu"
    for order, bc, taken in [
        (6, Neumann(), True),
        (8, Dirichlet(0.0), True),
        (4, Neumann(), True),
        (2, Neumann(), False),  # at order 2 the face flux is not stored: the one-pass step
        (8, Periodic(), True),
        (6, Dirichlet(wavy), True),
        (8, ZeroPadding(), True),
    ]:
        m = model((32, 32), order, bc)
        assert _leapfrog._padded(m, None) is taken, (order, bc)
    m = model((48, 48), 8, CPML(6))
    memory = m.initial_memory(jnp.zeros((48, 48)), m.wave_coefficients(medium((48, 48)), 1e-4).operator)
    assert not _leapfrog._padded(m, memory)  # CPML memory variables: the halo-padded step
    # Large 2-D grids, where the one-pass step's edge slabs are few of the points, keep that step.
    assert not _leapfrog._padded(model((1000, 1000), 8, Neumann()), None)
    assert not _leapfrog._padded(model((500, 500), 4, Neumann()), None)  # order 4: flux stored in cache only
    assert _leapfrog._padded(model((300, 300), 4, Neumann()), None)
    # On a block of a sharded grid too: its halo brings the neighbours' edge points (tests/parallel: equal runs).
    mesh = sciax.parallel.make_mesh("slab")
    assert _leapfrog._padded(sciax.parallel.shard(model((32, 32), 8, Neumann()), mesh).local, None)


@pytest.mark.parametrize(
    "shape, order, bc, average",
    [
        ((40, 36), 8, Neumann(), "arithmetic"),
        ((36, 34), 6, ((Dirichlet(wavy), Neumann(0.5)), (Neumann(), Dirichlet(0.0))), "arithmetic"),
        ((32, 30), 8, (Periodic(), Neumann()), "arithmetic"),
        ((24, 26, 28), 8, ((Neumann(), Dirichlet(0.0)), Dirichlet(wavy), Neumann()), "arithmetic"),
        # The one-pass interior reads the buoyancy at the points, the padded step the face arrays.
        ((34, 32), 6, (Neumann(), Periodic()), "harmonic"),
        # Zero ghosts, never written by the padded step; with one mirrored side, that axis's ghosts are.
        ((36, 30), 8, ZeroPadding(), "harmonic"),
        ((22, 24, 26), 4, (ZeroPadding(), (Neumann(), ZeroPadding()), ZeroPadding()), "arithmetic"),
        ((30, 28), 4, ((Dirichlet(wavy), Neumann()), Periodic()), "harmonic"),
    ],
)
def test_padded_step_equals_the_one_pass_step(shape, order, bc, average, monkeypatch):
    m = model(shape, order, bc, average)
    # Two sources, one within the ghosts' reach of an edge.
    params = {
        **medium(shape),
        "source": jnp.array([(1,) + tuple(n // 2 for n in shape[1:]), tuple(n - 3 for n in shape)]),
    }
    dt = 0.8 * float(m.leapfrog_stable_dt(params))
    # Unequal intervals (7 and 4 steps: odd step counts, the masked steps of non-uniform intervals).
    ts = dt * np.array([0.0, 7.0, 11.0, 18.0, 40.0])
    padded, plain = (run(m, params, ts, dt, flag, monkeypatch) for flag in (False, True))
    for k in OUTPUTS:
        scale = float(jnp.max(jnp.abs(plain[k][1:])))
        assert scale > 0, k
        np.testing.assert_allclose(padded[k], plain[k], rtol=0, atol=1e-12 * scale, err_msg=k)
    # The edges matter: mirrored (Neumann) edges everywhere give other fields.
    other = run(
        model(shape, order, Neumann() if bc != Neumann() else Dirichlet(0.0), average),
        params,
        ts,
        dt,
        False,
        monkeypatch,
    )
    assert float(jnp.max(jnp.abs(other["p"] - plain["p"]))) > 1e-3 * float(jnp.max(jnp.abs(plain["p"])))


@pytest.mark.skipif(not _leapfrog._BARRIERS_HOLD, reason="jax 0.10.2's XLA:CPU copies the fields it writes in place")
def test_padded_time_loop_copies_no_field():
    # Each step writes the new field over the one two steps back (two buffers, two steps per loop iteration):
    # no whole-field copy, in a step or around a time loop. With a third buffer XLA:CPU copied both carried
    # fields into and out of each loop (jax 0.12).
    shape = (32, 32, 32)  # whole fields saved, written in place (`_run`): 4 n^3 >= 2 (n + 8)^3
    m = model(shape, 8, Neumann())
    params = {**medium(shape), "source": jnp.array([16, 16, 16])}
    assert _leapfrog._padded(m, None) and _leapfrog._in_place(m)
    dt = 0.8 * float(m.leapfrog_stable_dt(params))
    ts, y0 = dt * np.array([0.0, 10.0, 20.0]), initial_state(shape)
    method = Leapfrog(dt, checkpoint=None)
    text = jax.jit(lambda p: sciax.simulate(m, y0, ts, p, method=method, save="p").ys["p"]).lower(params).compile()
    lines = text.as_text().splitlines()
    assert [line for line in lines if "known_trip_count" in line and '"n":"5"' in line], "10 steps as 5 iterations"
    assert not [line for line in lines if "f64[40,40,40]{2,1,0} copy(" in line]


def test_padded_step_out_of_place_equals_in_place(monkeypatch):
    # In place: two buffers, each step writing over the field two steps back. Out of place (several cores, large
    # grids): a new buffer per step, in the place of a spare third buffer. The same fields.
    shape = (40, 36)
    m = model(shape, 8, Neumann())
    params = {**medium(shape), "source": jnp.array([3, 18])}
    dt = 0.8 * float(m.leapfrog_stable_dt(params))
    ts, fields = dt * np.array([0.0, 7.0, 11.0, 18.0]), []
    # In place also with the new interior computed apart and then copied into place (`_apart_interior`). A
    # checkpoint each keeps simulate's programs apart.
    for in_place, checkpoint, apart in ((True, None, False), (False, 10**6, False), (True, 10**5, True)):
        monkeypatch.setattr(_leapfrog, "_in_place_pays", lambda *a, v=in_place: v)
        monkeypatch.setattr(_acoustic, "_apart_interior", lambda m, v=apart: v)
        method = Leapfrog(dt, checkpoint=checkpoint)
        start = method.start(m, initial_state(shape), 0.0, method.setup(m, initial_state(shape), params))
        # (jax 0.10.2, whose XLA:CPU copies the padded field per step regardless, keeps two buffers out of place.)
        assert (method.loop_state(m, start)[0].spare is None) is (in_place or not _leapfrog._BARRIERS_HOLD)
        fields.append(sciax.simulate(m, initial_state(shape), ts, params, method=method, save=("p", "v")).ys)
    for k in ("p", "v"):
        scale = float(jnp.max(jnp.abs(fields[0][k][1:])))
        assert scale > 0, k
        for other in fields[1:]:
            np.testing.assert_allclose(other[k], fields[0][k], rtol=0, atol=1e-13 * scale, err_msg=k)


def test_gradients_equal_the_one_pass_step_and_finite_differences(monkeypatch):
    shape = (32, 30)
    m, base = model(shape, 8, ((Neumann(), Dirichlet(0.0)), Neumann())), medium(shape, 1)
    source = jnp.array([2, 15])
    dt = 0.8 * float(m.leapfrog_stable_dt(base))
    ts = dt * np.arange(0, 41, 5)
    zero = {"p": jnp.zeros(shape), "v": jnp.zeros(shape)}
    target = run(m, {**medium(shape, 2), "source": source}, ts, dt, True, monkeypatch, "seismogram", y0=zero)

    def misfit(c, rho, plain):
        params = {"c": c, "rho": rho, "source": source}
        seis = run(m, params, ts, dt, plain, monkeypatch, "seismogram", checkpoint=16, y0=zero)["seismogram"]
        return 0.5 * jnp.sum((seis - target["seismogram"]) ** 2)

    c, rho = jnp.asarray(base["c"]), jnp.asarray(base["rho"])
    grads = {plain: jax.grad(misfit, argnums=(0, 1))(c, rho, plain) for plain in (False, True)}
    for a, b in zip(grads[False], grads[True]):
        assert float(jnp.max(jnp.abs(b))) > 0
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-11 * float(jnp.max(jnp.abs(b))))
    direction = np.random.default_rng(3).standard_normal(shape)
    eps = 1e-2  # m/s, against velocities of 1500-2000 m/s
    fd = (misfit(c + eps * direction, rho, False) - misfit(c - eps * direction, rho, False)) / (2 * eps)
    np.testing.assert_allclose(float(jnp.sum(grads[False][0] * direction)), float(fd), rtol=1e-6)


def test_vmap_over_shots_and_initial_fields(monkeypatch):
    shape = (30, 32)
    m, params = model(shape, 6, Neumann()), medium(shape)
    dt = 0.8 * float(m.leapfrog_stable_dt(params))
    ts = dt * np.arange(0, 31, 10)
    shots = jnp.array([[1, 12], [16, 30]])

    def seismogram(source, scale):
        y0 = jax.tree_util.tree_map(lambda a: scale * a, initial_state(shape))
        return run(m, {**params, "source": source}, ts, dt, False, monkeypatch, "seismogram", y0=y0)["seismogram"]

    scales = jnp.array([1.0, -2.0])
    batched = jax.vmap(seismogram)(shots, scales)
    for k in range(2):
        y0 = jax.tree_util.tree_map(lambda a, k=k: scales[k] * a, initial_state(shape))
        one = run(m, {**params, "source": shots[k]}, ts, dt, True, monkeypatch, "seismogram", y0=y0)["seismogram"]
        np.testing.assert_allclose(batched[k], one, rtol=0, atol=1e-12 * float(jnp.max(jnp.abs(one))))
    assert float(jnp.max(jnp.abs(batched[0] - batched[1]))) > 1e-3 * float(jnp.max(jnp.abs(batched)))


@pytest.mark.parametrize("bc, mode", [(Neumann(), "symmetric"), (ZeroPadding(), "constant")])
def test_padded_step_against_numpy_fornberg(bc, mode):
    """One step on every point, edges included: NumPy's `"symmetric"` padding is `Neumann()`'s mirror, its
    `"constant"` padding `ZeroPadding()`'s zeros, for the pressure, the density's ghost and (`flux=True`) the
    face flux."""
    n, h, dt = (36, 40), 1.0, 1e-3
    rng = np.random.default_rng(3)
    c, rho = 1 + rng.random(n), 1 + rng.random(n)
    p, p_prev = rng.standard_normal(n), rng.standard_normal(n)
    m = AcousticWave(Grid(n, (n[0] * h, n[1] * h)), f0=5.0, bc=bc, order=8)
    method = Leapfrog(dt)
    coefficients = method.prepare(m, {"c": jnp.asarray(c), "rho": jnp.asarray(rho)})
    state = _leapfrog.LeapfrogState(m.to_padded(jnp.asarray(p), 0.0), m.to_padded(jnp.asarray(p_prev), -dt), None)
    assert state.p.shape == (44, 48)
    out = np.asarray(m.from_padded(jax.jit(lambda s: method.step(m, s, 0.0, coefficients))(state).p))
    total = 0.0
    for axis in range(2):
        inv_rho = 2 / (
            rho
            + np.take(
                np.pad(rho, [(0, 1) if b == axis else (0, 0) for b in range(2)], mode),
                np.arange(1, n[axis] + 1),
                axis,
            )
        )
        widths = [(4, 4) if b == axis else (0, 0) for b in range(2)]
        # Forward to the half points i + 1/2, i = 0 .. n - 1: p[i + 1 + k] - p[i - k], p mirrored at the edges.
        flux = shifted_sum(np.pad(p, widths, mode), axis, 5, 4, n[axis]) / h * inv_rho
        # Back to the points: flux at i + 1/2 + k and i - 1/2 - k, the flux mirrored at the edges.
        total = total + shifted_sum(np.pad(flux, widths, mode), axis, 4, 3, n[axis]) / h
    want = 2 * p - p_prev + dt**2 * rho * c**2 * total
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-12 * np.max(np.abs(want)))
