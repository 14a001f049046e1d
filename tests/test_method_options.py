"""Method options are declared once (`AbstractMethod.options`) and checked against that declaration."""

import inspect
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax
import sciax.parallel  # noqa: F401  (its methods are AbstractMethod subclasses too)

MODEL = sciax.ode.ODE(lambda t, y, p: -y)
TS = jnp.linspace(0.0, 1.0, 3)
Y0 = jnp.array([1.0])
_DIFFRAX = ("rtol", "atol", "dt0", "max_steps", "adaptive", "adjoint", "event", "dense", "progress", "throw")


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _keyword_only(solve):
    params = inspect.signature(solve).parameters.values()
    names = tuple(p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY)
    forwards = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
    return names, forwards


@pytest.mark.parametrize(
    "cls", sorted({c for c in _subclasses(sciax.AbstractMethod) if c.__module__.startswith("sciax.")}, key=str)
)
def test_declared_options_match_solve(cls):
    """A `solve` with explicit keywords declares exactly those; one that forwards `**options`
    declares at least the keywords it names itself."""
    declared = cls.__dict__.get("options", getattr(cls, "options", None))
    if isinstance(declared, property):
        return  # Auto: computed from its candidates (test_auto_accepts_what_both_candidates_accept)
    if declared is None:
        pytest.skip(f"{cls.__name__} is abstract and declares no options")
    assert isinstance(declared, tuple) and len(set(declared)) == len(declared)
    names, forwards = _keyword_only(cls.solve)
    if forwards:
        assert set(names) <= set(declared)
    else:
        assert names == declared


def test_declared_sets():
    assert sciax.ode.Tsit5.options == _DIFFRAX
    assert sciax.ode.Rodas5P.options == _DIFFRAX
    assert sciax.ode.EulerMaruyama.options == ("key", *_DIFFRAX)
    assert sciax.pde.RK4.options == ("save", "throw")
    assert sciax.pde.Leapfrog.options == ("save", "throw")
    assert sciax.pde.ETDRK4.options == ("throw",)
    assert sciax.ode.Auto().options == _DIFFRAX


class _OnlyThrow(sciax.AbstractMethod):
    """A method accepting only `throw`: exact exponential decay of y' = -y."""

    options: ClassVar[tuple[str, ...]] = ("throw",)

    def solve(self, model, y0, ts, params, *, throw=True):
        ys = jnp.exp(-(ts - ts[0]))[:, None] * y0
        return sciax.Solution(ts=ts, ys=ys, stats={}, success=jnp.array(True))


def test_auto_accepts_what_both_candidates_accept():
    auto = sciax.ode.Auto(nonstiff=sciax.ode.Tsit5(), stiff=_OnlyThrow())
    assert auto.options == ("throw",)
    with pytest.raises(TypeError, match=r"unknown option\(s\) 'rtol' for method Auto; it accepts: throw$"):
        sciax.simulate(MODEL, Y0, TS, method=auto, rtol=1e-8)


def test_auto_forwards_options_to_the_chosen_method():
    ts = jnp.linspace(0.0, 1.0, 5)
    got = sciax.simulate(MODEL, Y0, ts, method=sciax.ode.Auto(), rtol=1e-10, atol=1e-12, max_steps=500)
    ref = sciax.simulate(MODEL, Y0, ts, method=sciax.ode.Tsit5(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(got.ys[:, 0]), np.exp(-np.asarray(ts)), rtol=1e-8)
    np.testing.assert_array_equal(np.asarray(got.ys), np.asarray(ref.ys))
    with pytest.raises(ValueError, match="max_steps must be a positive integer, got 0"):
        sciax.simulate(MODEL, Y0, ts, method=sciax.ode.Auto(), max_steps=0)


def test_unknown_option_lists_the_declared_names():
    with pytest.raises(TypeError) as err:
        sciax.simulate(MODEL, Y0, TS, method=sciax.ode.Tsit5(), rtoll=1e-6, dt=0.1)
    assert str(err.value) == (
        "simulate: unknown option(s) 'dt', 'rtoll' for method Tsit5; it accepts: " + ", ".join(_DIFFRAX)
    )


def test_sde_method_forwards_options():
    sde = sciax.ode.SDE(lambda t, y, p: -y, lambda t, y, p: 0.0 * y, noise="diagonal")
    key = jax.random.key(0)
    sol = sciax.simulate(sde, Y0, TS, method=sciax.ode.EulerMaruyama(), key=key, dt0=0.25, max_steps=3, throw=False)
    assert not bool(sol.success)  # 4 steps needed, 3 allowed: max_steps reached the diffrax solve
    with pytest.raises(TypeError, match=r"unknown option\(s\) 'seed' for method EulerMaruyama; it accepts: key, rtol"):
        sciax.simulate(sde, Y0, TS, method=sciax.ode.EulerMaruyama(), seed=0, dt0=0.25)


def test_a_method_must_declare_its_options():
    class Undeclared(sciax.AbstractMethod):
        def solve(self, model, y0, ts, params):
            raise AssertionError("not reached")

    with pytest.raises(TypeError, match="options"):
        Undeclared()
