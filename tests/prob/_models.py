"""Small models shared by the tests of sciax.prob."""

import jax.numpy as jnp
import numpyro.distributions as dist

import sciax

DECAY = sciax.ode.ODE(lambda t, y, p: -p["k"] * y, names=("y",))
DECAY_TIMES = jnp.linspace(0.5, 4.0, 8)


def decay_model(**overrides) -> sciax.prob.SimulationModel:
    """y' = -k y observed with Gaussian noise; priors on k and y0 (2 parameters)."""
    kwargs = dict(
        priors={"k": dist.LogNormal(jnp.log(0.5), 0.25)},
        y0=dist.LogNormal(0.0, 0.2).expand([1]).to_event(1),
        likelihood=sciax.prob.NormalLikelihood(0.05),
        t0=0.0,
    )
    kwargs.update(overrides)
    return sciax.prob.SimulationModel(DECAY, DECAY_TIMES, **kwargs)
