"""Learned schemes with memory and the forcing as input (float64): `lagged` against the exact solution of its ODE, the
memory model against the memoryless one and the published centred scheme, the polynomial
constraint with extra fields, conservation, vmap, the unrolled loss's gradient against finite
differences with lags, the derivative loss against a loop, bad input."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax.pde import fv, learned

N, TAU, DT = 16, 0.2, 0.05
GRID = sciax.pde.Grid(N, 2 * np.pi, points="centre")
TS = np.arange(3) * 0.1
FORCING = learned.random_forcing(jax.random.key(1), (2,))
X = GRID.coords()[0]


def _net(features: int, seed: int, scale: float = 0.3):
    """A `face_net` with a random (nonzero) last layer."""
    recon = learned.face_net(
        (-2, 3), 1, inputs=(-3, 4), values=2, features=features, width_size=8, depth=1, key=jax.random.key(seed)
    )
    last = recon.net.layers[-1].weight
    return eqx.tree_at(
        lambda r: r.net.layers[-1].weight, recon, scale * jax.random.normal(jax.random.key(seed + 1), last.shape)
    )


MODEL = learned.ForcedBurgers(GRID, reconstruction=_net(1, 2), memory=TAU)
U0 = jnp.asarray(np.stack([np.sin(X) + 0.3, 0.5 * np.cos(2 * X)]))
LAG0 = U0[:, None] - 0.1 * jnp.asarray(np.stack([np.cos(X), np.sin(3 * X)]))[:, None]


def test_lagged_is_exact_for_linear_data_and_second_order_for_smooth_data():
    # dm/dt = (u - m) / tau, m(0) = u(0). For u = c0 + c1 t: m = c0 + c1 (t - tau) + c1 tau exp(-t / tau).
    ts = np.linspace(0.0, 2.0, 11)
    c0, c1 = np.array([0.5, -1.0]), np.array([2.0, 0.3])
    u = c0 + c1 * ts[:, None]
    exact = c0 + c1 * (ts[:, None] - TAU) + c1 * TAU * np.exp(-ts[:, None] / TAU)
    got = learned.lagged(u, ts, TAU)
    assert got.shape == (11, 1, 2)
    np.testing.assert_allclose(got[:, 0], exact, rtol=0, atol=1e-13)
    # For u = sin t: m = (sin t - tau cos t + tau exp(-t / tau)) / (1 + tau^2); second order in the sampling step.
    errors = []
    for samples in (21, 41, 81):
        ts = np.linspace(0.0, 2.0, samples)
        exact = (np.sin(ts) - TAU * np.cos(ts) + TAU * np.exp(-ts / TAU)) / (1 + TAU**2)
        got = learned.lagged(np.sin(ts)[:, None], ts, (TAU, 1.0))[:, 0, 0]
        errors.append(np.max(np.abs(got - exact)))
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(np.abs(orders - 2) < 0.1), orders


def test_memory_model_against_the_memoryless_one_and_the_centred_scheme():
    y = {"u": U0[0], "lag": LAG0[0]}
    p = {k: v[0] for k, v in FORCING.items()}
    rhs = eqx.filter_jit(lambda m, t, y, p: m.rhs(t, y, p))
    # The untrained network gives the sixth-order centred face value (a linear scheme, through the FV route).
    zero = learned.face_net((-2, 3), 1, inputs=(-3, 4), values=2, features=1, key=jax.random.key(0))
    memory = learned.ForcedBurgers(GRID, reconstruction=zero, memory=TAU)
    linear = learned.ForcedBurgers(
        GRID, reconstruction=learned.LinearReconstruction((-2, 3)), numerical_flux=fv.Rusanov()
    )
    rate = rhs(memory, 0.3, y, p)
    np.testing.assert_allclose(rate["u"], rhs(linear, 0.3, y["u"], p), rtol=0, atol=1e-12)
    np.testing.assert_allclose(rate["lag"], (y["u"] - y["lag"]) / TAU, rtol=0, atol=1e-14)
    # A random network that ignores its extra inputs is the memoryless scheme with the same weights.
    plain = _net(0, 2)
    first = plain.net.layers[0]
    blind = eqx.tree_at(
        lambda r: r.net,
        _net(1, 2),
        eqx.tree_at(
            lambda n: (n.layers[0].weight, n.layers[0].bias, n.layers[-1]),
            _net(1, 2).net,
            (jnp.concatenate([first.weight, jnp.zeros_like(first.weight)], 1), first.bias, plain.net.layers[-1]),
        ),
    )
    got = rhs(learned.ForcedBurgers(GRID, reconstruction=blind, memory=TAU), 0.3, y, p)["u"]
    np.testing.assert_allclose(
        got, rhs(learned.ForcedBurgers(GRID, reconstruction=plain), 0.3, y["u"], p), rtol=0, atol=1e-13
    )
    # ... and the extra inputs do matter for MODEL's network.
    assert (
        np.max(np.abs(rhs(MODEL, 0.3, y, p)["u"] - rhs(MODEL, 0.3, {"u": y["u"], "lag": y["u"][None]}, p)["u"])) > 1e-4
    )


def test_forcing_as_input_against_the_model_that_ignores_it():
    y = {"u": U0[0], "lag": LAG0[0]}
    p = {k: v[0] for k, v in FORCING.items()}
    rhs = eqx.filter_jit(lambda m, t, y, p: m.rhs(t, y, p)["u"])
    # A network blind to its last input (the forcing) is the memory model with the same weights.
    two = _net(2, 2)
    first = MODEL.inviscid.reconstruction.net.layers[0]
    weight = jnp.concatenate([first.weight, jnp.zeros((first.weight.shape[0], 8))], 1)
    net = eqx.tree_at(
        lambda n: (n.layers[0].weight, n.layers[0].bias, n.layers[-1]),
        two.net,
        (weight, first.bias, MODEL.inviscid.reconstruction.net.layers[-1]),
    )
    blind = learned.ForcedBurgers(
        GRID, reconstruction=eqx.tree_at(lambda r: r.net, two, net), memory=TAU, read_forcing=True
    )
    np.testing.assert_allclose(rhs(blind, 0.3, y, p), rhs(MODEL, 0.3, y, p), rtol=0, atol=1e-13)
    # With its own weights the forcing field matters: a different time moves more than the forcing term.
    seeing = learned.ForcedBurgers(GRID, reconstruction=two, memory=TAU, read_forcing=True)
    moved = rhs(seeing, 0.7, y, p) - rhs(seeing, 0.3, y, p)
    forcing_only = seeing.forcing(0.7, p) - seeing.forcing(0.3, p)
    assert np.max(np.abs(moved - forcing_only)) > 1e-4
    np.testing.assert_allclose(rhs(blind, 0.7, y, p) - rhs(blind, 0.3, y, p), forcing_only, rtol=0, atol=1e-12)


def test_forcing_without_memory_and_the_forcing_fields():
    p = {k: v[0] for k, v in FORCING.items()}
    u = U0[0]
    rhs = eqx.filter_jit(lambda m, t, y, p: m.rhs(t, y, p))
    # Without memory the state stays an array; a net blind to the forcing field is the plain learned scheme.
    plain = learned.ForcedBurgers(GRID, reconstruction=_net(0, 3))
    first = plain.inviscid.reconstruction.net.layers[0]
    one = _net(1, 3)
    weight = jnp.concatenate([first.weight, jnp.zeros((first.weight.shape[0], 8))], 1)
    net = eqx.tree_at(
        lambda n: (n.layers[0].weight, n.layers[0].bias, n.layers[-1]),
        one.net,
        (weight, first.bias, plain.inviscid.reconstruction.net.layers[-1]),
    )
    blind = learned.ForcedBurgers(GRID, reconstruction=eqx.tree_at(lambda r: r.net, one, net), read_forcing=True)
    assert blind.initial_state(u) is u and blind.observed(u) is u
    np.testing.assert_allclose(rhs(blind, 0.3, u, p), rhs(plain, 0.3, u, p), rtol=0, atol=1e-13)
    seeing = learned.ForcedBurgers(GRID, reconstruction=_net(3, 4), read_forcing=("face", "average", "rate"))
    ys = sciax.simulate(seeing, u, TS, p, method=sciax.pde.RK4(DT)).ys
    assert ys.shape == (3, N) and np.all(np.isfinite(ys))
    # Conservative: the cells' total changes by the forcing's alone.
    np.testing.assert_allclose(np.sum(rhs(seeing, 0.3, u, p)), np.sum(seeing.forcing(0.3, p)), rtol=0, atol=1e-12)
    # The fields against the formula sampled independently: averages by fine quadrature, the rate by a
    # centred difference in time, the faces at x_i - dx / 2.
    t = 0.7
    fields = seeing.forcing_fields(t, p, ("average", "rate", "face"))
    dx = GRID.spacing[0]
    a, w, k, phi = (np.asarray(p[name])[:, None] for name in ("amplitude", "omega", "wavenumber", "phase"))

    def f(x, t):
        return np.sum(a * np.sin(w * t + k * x + phi), 0)

    fine = (np.arange(4000) + 0.5) / 4000 * dx
    average = np.array([f(X[i] - dx / 2 + fine, t).mean() for i in range(N)])
    rate = np.array(
        [(f(X[i] - dx / 2 + fine, t + 1e-5) - f(X[i] - dx / 2 + fine, t - 1e-5)).mean() / 2e-5 for i in range(N)]
    )
    np.testing.assert_allclose(fields[0], average, atol=1e-7)
    np.testing.assert_allclose(fields[1], rate, atol=1e-7)
    np.testing.assert_allclose(fields[2], f(X - dx / 2, t), atol=1e-13)
    np.testing.assert_allclose(seeing.forcing(t, p), fields[0], atol=1e-14)


def test_random_network_with_extra_fields_is_exact_for_linear_functions():
    recon = _net(2, 5, scale=1.0)
    rng = np.random.default_rng(0)
    cells, r = 20, recon.radius
    # Averages of a + b x over unit cells are its values at the centres; faces at the half-integers.
    a, b = rng.normal(size=2)
    ubar = a + b * np.arange(cells)
    extra = jnp.asarray(rng.normal(size=(2, cells)))
    faces = recon.faces(jnp.asarray(ubar), extra)
    exact = a + b * (np.arange(r - 1, cells - r) + 0.5)
    np.testing.assert_allclose(faces[:, 0], exact, rtol=0, atol=1e-11)
    np.testing.assert_allclose(faces[:, 1], exact, rtol=0, atol=1e-11)
    # The extra fields change the weights (their effect shows on a quadratic).
    quad = jnp.asarray(np.arange(cells) ** 2 / 10.0)
    assert np.max(np.abs(recon.faces(quad, extra) - recon.faces(quad, 2 * extra))) > 1e-4


_run = jax.jit(jax.vmap(lambda y, p: sciax.simulate(MODEL, y, TS, p, method=sciax.pde.RK4(DT)).ys))


def test_conservation_and_vmap_over_states_and_forcings_match_a_loop():
    ys = _run({"u": U0, "lag": LAG0}, FORCING)
    assert ys["u"].shape == (2, 3, N) and ys["lag"].shape == (2, 3, 1, N)
    np.testing.assert_allclose(jnp.sum(ys["u"], -1), jnp.sum(U0, -1)[:, None] * np.ones(3), rtol=0, atol=1e-12)
    one = jax.jit(lambda y, p: sciax.simulate(MODEL, y, TS, p, method=sciax.pde.RK4(DT)).ys)
    for i in range(2):
        single = one({"u": U0[i], "lag": LAG0[i]}, {k: v[i] for k, v in FORCING.items()})
        np.testing.assert_allclose(ys["u"][i], single["u"], rtol=1e-12, atol=1e-13)
    # From no history: the lags start at u.
    assert jnp.array_equal(MODEL.initial_state(U0[0])["lag"], U0[0][None])


REFS = _run({"u": U0, "lag": LAG0}, FORCING)["u"] + 0.01 * jnp.asarray(np.cos(X))
WEIGHTS, REST = eqx.partition(MODEL, learned.trainable(MODEL))


@eqx.filter_jit
def _loss_and_grad(w, lags):
    def loss(w):
        return learned.unrolled_loss(eqx.combine(w, REST), REFS, TS, FORCING, dt=DT, checkpoint=None, lags=lags)

    return eqx.filter_value_and_grad(loss)(w)


def test_grad_of_unrolled_loss_with_lags_matches_finite_differences():
    value, grads = _loss_and_grad(WEIGHTS, LAG0)
    direction = jax.tree_util.tree_map(lambda g: jax.random.normal(jax.random.key(4), g.shape), grads)
    h = 1e-5
    plus, _ = _loss_and_grad(jax.tree_util.tree_map(lambda w, d: w + h * d, WEIGHTS, direction), LAG0)
    minus, _ = _loss_and_grad(jax.tree_util.tree_map(lambda w, d: w - h * d, WEIGHTS, direction), LAG0)
    along = sum(jnp.vdot(g, d) for g, d in zip(jax.tree_util.tree_leaves(grads), jax.tree_util.tree_leaves(direction)))
    np.testing.assert_allclose(along, (plus - minus) / (2 * h), rtol=1e-6)
    # The loss is the run's squared error from the given lags; without lags it starts from no history.
    ys = _run({"u": REFS[:, 0], "lag": LAG0}, FORCING)["u"]
    np.testing.assert_allclose(value, np.mean((np.asarray(ys)[:, 1:] - np.asarray(REFS[:, 1:])) ** 2), rtol=1e-12)
    cold, _ = _loss_and_grad(WEIGHTS, None)
    ys = _run({"u": REFS[:, 0], "lag": REFS[:, 0, None]}, FORCING)["u"]
    np.testing.assert_allclose(cold, np.mean((np.asarray(ys)[:, 1:] - np.asarray(REFS[:, 1:])) ** 2), rtol=1e-12)


def test_derivative_loss_with_memory_against_a_loop():
    states = {"u": U0, "lag": LAG0}
    times, targets = jnp.array([0.1, 0.4]), jnp.asarray(np.stack([np.cos(X), np.sin(X)]))
    got = eqx.filter_jit(lambda m: learned.derivative_loss(m, states, times, FORCING, targets, absolute=True))(MODEL)
    rhs = jax.jit(lambda t, y, p: MODEL.rhs(t, y, p)["u"])
    misfit = [
        rhs(times[i], {"u": U0[i], "lag": LAG0[i]}, {k: v[i] for k, v in FORCING.items()}) - targets[i]
        for i in range(2)
    ]
    np.testing.assert_allclose(got, np.mean(np.abs(np.stack(misfit))), rtol=1e-12)


def test_bad_input():
    for bad in (0.0, -1.0, float("nan"), "0.2", (0.2, 0.0)):
        with pytest.raises(ValueError, match="memory must be a time constant > 0 or a tuple of them"):
            learned.ForcedBurgers(GRID, reconstruction=_net(1, 0), memory=bad)
    with pytest.raises(
        ValueError, match="must be a LearnedFaceValues reading 1 extra fields \\(features=1\\), got WENO5Z"
    ):
        learned.ForcedBurgers(GRID, memory=TAU)
    with pytest.raises(ValueError, match="memory=\\(\\) \\(0 lagged fields\\).*features=1"):
        learned.ForcedBurgers(GRID, reconstruction=_net(1, 0))
    with pytest.raises(ValueError, match="features=2"):
        learned.ForcedBurgers(GRID, reconstruction=_net(1, 0), memory=(0.1, 0.5))
    with pytest.raises(ValueError, match="read_forcing=True the reconstruction must be .* reading 2 extra fields"):
        learned.ForcedBurgers(GRID, reconstruction=_net(1, 0), memory=TAU, read_forcing=True)
    for bad in ("yes", ("average", "average"), ("speed",)):
        with pytest.raises(ValueError, match="read_forcing must be True, False or a tuple of distinct names from"):
            learned.ForcedBurgers(GRID, reconstruction=_net(1, 0), memory=TAU, read_forcing=bad)
    with pytest.raises(ValueError, match="read_forcing=\\('rate', 'face'\\) the reconstruction .*\\(features=3\\)"):
        learned.ForcedBurgers(GRID, reconstruction=_net(1, 0), memory=TAU, read_forcing=("rate", "face"))
    with pytest.raises(ValueError, match="features must be an integer >= 0.*got -1"):
        learned.face_net((-2, 3), 1, features=-1, key=jax.random.key(0))
    with pytest.raises(ValueError, match="input window of shape \\(16,\\)"):
        learned.LearnedFaceValues(_net(0, 0).net, (-2, 3), 1, inputs=(-3, 4), values=2, features=1)
    with pytest.raises(ValueError, match="features=1 reads extra fields .* ForcedBurgers\\(memory=...\\)"):
        _net(1, 0).edges(jnp.zeros(12))
    with pytest.raises(ValueError, match="extra must be \\(1, 12\\), got \\(2, 12\\)"):
        _net(1, 0).faces(jnp.zeros(12), jnp.zeros((2, 12)))
    with pytest.raises(ValueError, match="extra must be None, got \\(1, 12\\)"):
        _net(0, 0).faces(jnp.zeros(12), jnp.zeros((1, 12)))
    with pytest.raises(ValueError, match="the state must be a dict with keys 'u' and 'lag'"):
        sciax.simulate(MODEL, np.zeros(N), TS, None, method=sciax.pde.RK4(DT))
    with pytest.raises(ValueError, match="\\['lag'\\] must have shape \\(1, 16\\), got \\(2, 16\\)"):
        MODEL.check_state({"u": jnp.zeros(N), "lag": jnp.zeros((2, N))})
    with pytest.raises(ValueError, match="lag was given but the model has no memory"):
        learned.ForcedBurgers(GRID).initial_state(jnp.zeros(N), jnp.zeros((1, N)))
    # Every model has the hooks; one without hidden state says so when given some.
    plain = fv.Burgers(GRID, sciax.pde.Periodic())
    assert plain.observed(U0) is U0 and plain.initial_state(U0) is U0
    with pytest.raises(ValueError, match="Burgers has no hidden state, but \\['lag'\\] were given"):
        plain.initial_state(U0, lag=U0)
    with pytest.raises(ValueError, match="ts must be uniform output times"):
        learned.lagged(np.zeros((3, 4)), np.array([0.0, 0.1, 0.3]), TAU)
    with pytest.raises(ValueError, match="u of shape \\(..., len\\(ts\\), n\\).*u of shape \\(4, 3\\)"):
        learned.lagged(np.zeros((4, 3)), np.array([0.0, 0.1, 0.2]), TAU)
