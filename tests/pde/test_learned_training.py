"""Forced Burgers and training through `simulate` (float64): the model against exact cell
averages, coarse graining, transformations, the unrolled loss's gradient against finite
differences, a short seeded training run, checkpoints, evaluation helpers, bad input."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import sciax
from sciax.pde import learned

N = 16
GRID = sciax.pde.Grid(N, 2 * np.pi, points="centre")
TS = np.arange(4) * 0.2
ADAM = optax.adam(3e-2)
DT = 0.05
FORCING = learned.random_forcing(jax.random.key(1), (2,))


def gauss_average(fn, n, points=8):
    """Cell averages of fn over the n cells of [0, 2 pi) by Gauss-Legendre quadrature (numpy)."""
    nodes, weights = np.polynomial.legendre.leggauss(points)
    dx = 2 * np.pi / n
    x = (np.arange(n)[:, None] + 0.5 + nodes[None] / 2) * dx
    return np.sum(fn(x) * weights, axis=1) / 2


def test_rhs_converges_to_exact_cell_averages_at_second_order():
    # u = sin x + cos 2x / 2: the exact averages of -u u_x + eta u_xx + f, by quadrature.
    eta = 0.05
    p = {k: np.asarray(v[0]) for k, v in FORCING.items()}
    t = 0.7

    def u(x):
        return np.sin(x) + 0.5 * np.cos(2 * x)

    def exact(x):
        ux, uxx = np.cos(x) - np.sin(2 * x), -np.sin(x) - 2 * np.cos(2 * x)
        force = sum(
            a * np.sin(w * t + k * x + ph) for a, w, k, ph in zip(*(p[k] for k in learned._forced_burgers.FORCING_KEYS))
        )
        return -u(x) * ux + eta * uxx + force

    errors = []
    for n in (48, 96):
        model = learned.ForcedBurgers(sciax.pde.Grid(n, 2 * np.pi, points="centre"), eta=eta)
        got = jax.jit(model.rhs)(t, jnp.asarray(gauss_average(u, n)), p)
        errors.append(np.max(np.abs(np.asarray(got) - gauss_average(exact, n))))
    order = np.log2(errors[0] / errors[1])
    assert errors[-1] < 1e-3 and 1.9 < order, (errors, order)


def test_coarse_grain():
    fine = np.random.default_rng(0).normal(size=(3, 64))
    coarse = learned.coarse_grain(jnp.asarray(fine), 8)
    np.testing.assert_allclose(coarse[1, 2], fine[1, 16:24].mean(), rtol=1e-14)
    np.testing.assert_allclose(jnp.sum(coarse, -1) * 8, fine.sum(-1), rtol=1e-13)
    with pytest.raises(ValueError, match="factor 5 must divide the number of fine cells.*got 64"):
        learned.coarse_grain(jnp.asarray(fine), 5)
    with pytest.raises(ValueError, match="factor must be an integer >= 1"):
        learned.coarse_grain(jnp.asarray(fine), 0)


@pytest.mark.parametrize("points, offset", [("start", 0.0), ("centre", 0.5)])
@pytest.mark.parametrize("factor", [4, 5, 16])
def test_spectral_filter_samples_band_limited_fields_on_the_coarse_grid(points, offset, factor):
    # Modes strictly below the coarse Nyquist wavenumber are kept exactly (checked against the
    # analytic field at the coarse points); the rest are removed. 80 fine points (x16: an odd coarse grid).
    n, length = 80, 2 * np.pi
    n_coarse = n // factor
    rng = np.random.default_rng(factor)
    kept = (n_coarse + 1) // 2
    low = np.arange(kept)  # 0 .. below n_coarse / 2
    a, b = rng.normal(size=(2, 3, len(low)))

    def field(x, modes, a, b):
        return np.sum(a[..., None] * np.cos(modes[:, None] * x) + b[..., None] * np.sin(modes[:, None] * x), axis=-2)

    x_fine = (np.arange(n) + offset) * length / n
    x_coarse = (np.arange(n_coarse) + offset) * length / n_coarse
    high = np.array([kept, kept + 1, n // 2 - 1])  # from the coarse Nyquist mode (even grids) up
    fine = field(x_fine, low, a, b) + field(x_fine, high, np.ones((3, 3)), np.ones((3, 3)))
    coarse = learned.spectral_filter(jnp.asarray(fine), factor, points=points)
    assert coarse.shape == (3, n_coarse)
    np.testing.assert_allclose(coarse, field(x_coarse, low, a, b), atol=1e-12)
    np.testing.assert_allclose(jnp.mean(coarse, -1), fine.mean(-1), atol=1e-13)
    assert learned.spectral_filter(jnp.asarray(fine, jnp.float32), factor, points=points).dtype == jnp.float32
    with pytest.raises(ValueError, match="factor 3 must divide the number of fine cells.*got 80"):
        learned.spectral_filter(jnp.asarray(fine), 3)
    with pytest.raises(ValueError, match="points must be one of"):
        learned.spectral_filter(jnp.asarray(fine), factor, points="end")


def test_random_forcing_follows_the_recipe():
    f = learned.random_forcing(jax.random.key(0), (50,))
    assert f["amplitude"].shape == (50, 20)
    assert -0.5 <= float(f["amplitude"].min()) and float(f["amplitude"].max()) <= 0.5
    assert -0.4 <= float(f["omega"].min()) and float(f["omega"].max()) <= 0.4
    assert set(np.unique(np.asarray(f["wavenumber"]))) == {3.0, 4.0, 5.0, 6.0}


def _model(seed=0):
    recon = learned.stencil_net((-2, 2), 1, width_size=4, depth=1, key=jax.random.key(seed))
    # A nonzero last layer so that the gradient has every path.
    net = eqx.tree_at(lambda m: m.layers[-1].weight, recon.net, 0.1 * jax.random.normal(jax.random.key(9), (3, 4)))
    return learned.ForcedBurgers(GRID, reconstruction=eqx.tree_at(lambda r: r.net, recon, net))


def _references():
    x = GRID.coords()[0]
    u0 = jnp.stack([jnp.sin(x), 0.5 * jnp.cos(2 * x) + 0.2])
    truth = learned.ForcedBurgers(sciax.pde.Grid(4 * N, 2 * np.pi, points="centre"))
    fine0 = jnp.repeat(u0, 4, axis=-1)
    ys = jax.vmap(lambda u, p: sciax.simulate(truth, u, TS, p, method=sciax.pde.RK4(DT / 4)).ys)(fine0, FORCING)
    # The time derivative of the coarse averages is the coarse average of the fine one.
    rates = jax.vmap(jax.vmap(truth.rhs, in_axes=(0, 0, None)), in_axes=(None, 0, 0))(jnp.asarray(TS), ys, FORCING)
    return learned.coarse_grain(ys, 4).at[:, 0].set(u0), learned.coarse_grain(rates, 4)


REFS, RATES = _references()
# The derivative loss's batch: every snapshot with its time and forcing.
SNAPSHOTS = (
    REFS.reshape(-1, N),
    jnp.tile(jnp.asarray(TS), 2),
    {k: jnp.repeat(v, len(TS), axis=0) for k, v in FORCING.items()},
    RATES.reshape(-1, N),
)


def test_vmap_over_y0_and_forcing_matches_a_loop():
    model = MODEL
    run = jax.jit(jax.vmap(lambda u, p: sciax.simulate(model, u, TS, p, method=sciax.pde.RK4(DT)).ys))
    batched = run(REFS[:, 0], FORCING)
    single = jax.jit(lambda u, p: sciax.simulate(model, u, TS, p, method=sciax.pde.RK4(DT)).ys)
    for i in range(2):
        one = single(REFS[i, 0], {k: v[i] for k, v in FORCING.items()})
        np.testing.assert_allclose(batched[i], one, rtol=1e-12, atol=1e-12)


MODEL = _model()
WEIGHTS, REST = eqx.partition(MODEL, learned.trainable(MODEL))


def _window_loss(w, stop_gradient):
    # Two windows of one output interval; reverse mode stores every step (checkpoint=None): a
    # smaller program to compile.
    return learned.unrolled_loss(
        eqx.combine(w, REST),
        REFS[:, :3],
        TS[:3],
        FORCING,
        dt=DT,
        window=1,
        stop_gradient=stop_gradient,
        checkpoint=None,
    )


@eqx.filter_jit
def _values_and_grads(w):
    # The full and the truncated gradient in one program (one compilation); the loss values it
    # returns at perturbed weights give the finite differences without a second program.
    return eqx.filter_value_and_grad(_window_loss)(w, False), eqx.filter_grad(_window_loss)(w, True)


def test_grad_of_unrolled_loss_matches_finite_differences():
    (_, full), cut = _values_and_grads(WEIGHTS)
    direction = jax.tree_util.tree_map(lambda g: jax.random.normal(jax.random.key(4), g.shape), full)
    h = 1e-5
    # The forward loss is the same with or without the cut.
    (plus, _), _ = _values_and_grads(jax.tree_util.tree_map(lambda w, d: w + h * d, WEIGHTS, direction))
    (minus, _), _ = _values_and_grads(jax.tree_util.tree_map(lambda w, d: w - h * d, WEIGHTS, direction))
    fd = (plus - minus) / (2 * h)

    def along(grads):
        return sum(
            jnp.vdot(g, d) for g, d in zip(jax.tree_util.tree_leaves(grads), jax.tree_util.tree_leaves(direction))
        )

    np.testing.assert_allclose(along(full), fd, rtol=1e-6)
    # Truncated: the second window no longer sees how the weights moved its start.
    assert abs(float(along(cut) - fd)) > 1e-4 * abs(float(fd))


@eqx.filter_jit
def _absolute_loss_and_run(m):
    # One program for both: a single compilation.
    loss = learned.unrolled_loss(m, REFS[:, :3], TS[:3], FORCING, dt=DT, checkpoint=None, absolute=True)
    return loss, jax.vmap(lambda u, p: sciax.simulate(m, u, TS[:3], p, method=sciax.pde.RK4(DT)).ys)(
        REFS[:, 0], FORCING
    )


def test_absolute_unrolled_loss_against_a_direct_run():
    loss, ys = _absolute_loss_and_run(MODEL)
    np.testing.assert_allclose(loss, np.mean(np.abs(np.asarray(ys)[:, 1:] - np.asarray(REFS[:, 1:3]))), rtol=1e-12)


def _derivative_loss(m):
    return learned.derivative_loss(m, *SNAPSHOTS)


def test_derivative_loss_against_a_loop():
    # Snapshot by snapshot with its own time and forcing, unbatched (one compiled rhs).
    rhs = jax.jit(lambda t, u, p: MODEL.rhs(t, u, p))
    states, times, forcing, targets = jax.tree_util.tree_map(np.asarray, SNAPSHOTS)
    misfit = np.stack(
        [
            np.asarray(rhs(times[i], states[i], {k: v[i] for k, v in forcing.items()})) - targets[i]
            for i in range(len(times))
        ]
    )
    np.testing.assert_allclose(eqx.filter_jit(_derivative_loss)(MODEL), np.mean(misfit**2), rtol=1e-12)
    absolute = eqx.filter_jit(lambda m: learned.derivative_loss(m, *SNAPSHOTS, absolute=True))(MODEL)
    np.testing.assert_allclose(absolute, np.mean(np.abs(misfit)), rtol=1e-12)
    with pytest.raises(ValueError, match="states and targets must share one shape.*targets \\(8, 15\\)"):
        learned.derivative_loss(MODEL, SNAPSHOTS[0], SNAPSHOTS[1], SNAPSHOTS[2], SNAPSHOTS[3][:, 1:])
    with pytest.raises(ValueError, match="times be \\(batch,\\).*times \\(3,\\)"):
        learned.derivative_loss(MODEL, SNAPSHOTS[0], SNAPSHOTS[1][:3], SNAPSHOTS[2], SNAPSHOTS[3])


def test_short_training_reduces_the_loss_and_resumes_from_a_checkpoint(tmp_path):
    # The time-derivative loss: one right-hand side per snapshot, a small program to compile
    # (the unrolled loss's gradient is checked above).
    model = MODEL
    trained, losses = learned.train(model, _derivative_loss, ADAM, 30, progress=False)
    assert losses[-1] < 0.4 * losses[0], losses
    # Interrupted after 20 steps and resumed: the same weights as the uninterrupted run.
    path = tmp_path / "weights.eqx"
    learned.train(model, _derivative_loss, ADAM, 20, progress=False, checkpoint=path)
    resumed, rest = learned.train(model, _derivative_loss, ADAM, 30, progress=False, checkpoint=path)
    assert len(rest) == 10
    np.testing.assert_allclose(rest, losses[20:], rtol=1e-10)
    for a, b in zip(
        jax.tree_util.tree_leaves(eqx.filter(resumed, eqx.is_array)),
        jax.tree_util.tree_leaves(eqx.filter(trained, eqx.is_array)),
    ):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14)


def test_random_batches_draw_the_same_rows_from_every_leaf():
    rows = np.arange(40.0)
    arrays = (rows[:, None] * np.ones(3), {"a": jnp.asarray(2 * rows), "b": rows.astype(np.int32)}, None)
    data = learned.random_batches(arrays, 8, seed=3)
    x, p, nothing = data(5)
    assert nothing is None and x.shape == (8, 3) and p["a"].shape == (8,)
    assert all(isinstance(a, jax.Array) for a in (x, p["a"], p["b"]))
    picked = np.asarray(p["b"])
    assert len(set(picked.tolist())) == 8  # without replacement
    np.testing.assert_array_equal(np.asarray(x), np.repeat(picked[:, None], 3, axis=1))
    np.testing.assert_array_equal(np.asarray(p["a"]), 2 * picked)
    # A function of (seed, step) alone: a resumed run draws what it would have drawn.
    np.testing.assert_array_equal(np.asarray(learned.random_batches(arrays, 8, seed=3)(5)[1]["b"]), picked)
    assert not np.array_equal(np.asarray(data(6)[1]["b"]), picked)
    assert not np.array_equal(np.asarray(learned.random_batches(arrays, 8, seed=4)(5)[1]["b"]), picked)
    # A single array is a one-element tuple; all rows at size = rows.
    (whole,) = learned.random_batches(rows, 40)(0)
    np.testing.assert_array_equal(np.sort(np.asarray(whole)), rows)


@pytest.mark.parametrize(
    "arrays, size, match",
    [
        ((np.zeros(4), np.zeros(5)), 2, "share its leading axis"),
        ((np.zeros(4), np.float64(1.0)), 2, "share its leading axis"),
        (np.zeros(4), 5, r"size must be an integer in \[1, 4\]"),
        (np.zeros(4), 0, r"size must be an integer in \[1, 4\]"),
        (np.zeros(4), 2.0, "size must be an integer"),
    ],
)
def test_random_batches_bad_input(arrays, size, match):
    with pytest.raises(ValueError, match=match):
        learned.random_batches(arrays, size)


def test_error_vs_time_and_survival_time():
    ref = jnp.zeros((2, 4, 3))
    pred = ref + jnp.array([[0.0, 0.1, 0.3, 0.2], [0.0, 0.0, 0.0, jnp.nan]])[:, :, None]
    errors = learned.error_vs_time(pred, ref)
    np.testing.assert_allclose(errors[0], [0.0, 0.1, 0.3, 0.2], rtol=1e-15)
    ts = jnp.array([0.0, 1.0, 2.0, 3.0])
    np.testing.assert_allclose(learned.survival_time(ts, errors, 0.15), [2.0, 3.0])
    np.testing.assert_allclose(learned.survival_time(ts, errors, 1.0), [3.0, 3.0])


def test_bad_input():
    model = MODEL
    with pytest.raises(ValueError, match="references must have shape \\(batch, len\\(ts\\), cells\\) = \\(batch, 4"):
        learned.unrolled_loss(model, REFS[:, :3], TS, FORCING, dt=DT)
    with pytest.raises(ValueError, match="window must be an integer in \\[1, 3\\]"):
        learned.unrolled_loss(model, REFS, TS, FORCING, dt=DT, window=7)
    with pytest.raises(ValueError, match="eta must be a number >= 0"):
        learned.ForcedBurgers(GRID, eta=-1.0)
    with pytest.raises(ValueError, match="params must be None or a dict with keys"):
        model.check_params({"amplitude": jnp.zeros(3)})
    with pytest.raises(ValueError, match="no trainable arrays"):
        learned.train(learned.ForcedBurgers(GRID), lambda m: 0.0, optax.adam(1e-3), 1, progress=False)
