"""Ordinary differential equations: the `ODE` model and methods over diffrax.

Methods (pass one as `sciax.simulate(..., method=...)`):

- non-stiff, adaptive: `Tsit5` (default), `Dopri5`, `Dopri8`;
- fixed step (`dt0=`): `Euler`, `Heun`, `RK4`;
- stiff (implicit): `ImplicitEuler`, `Kvaerno3`, `Kvaerno4`, `Kvaerno5`;
- stiff (linearly implicit Rosenbrock–Wanner, one Jacobian per step): `Rodas5P`,
  `Rodas4`, `Ros3P`, `Ros34PW2`; dense or matrix-free (`lineax`) stage solves;
  also mass-matrix problems `ODE(f, mass_matrix=M)`, index-1 DAEs included
  (`consistent_initial_state` solves the algebraic variables of `y0`);
- large stiff systems (method-of-lines PDEs): `BDF`, variable-order NDF/BDF with
  Jacobian and factorisation reuse; dense, sparse (`jacobian=<pattern>` or
  `"sparse"`, SuperLU) or matrix-free Newton–Krylov (`jacobian="jvp"` with
  `lineax.GMRES` and a preconditioner such as `DiffusionPreconditioner`); mass
  matrices and index-1 DAEs too;
- automatic: `Auto()` picks `Tsit5` or `Rodas5P` from a stiffness estimate;
- SDEs (`SDE(drift, diffusion, ...)`, `key=` option): `EulerMaruyama`,
  `StratonovichHeun`, `Milstein` (`ItoMilstein`, `StratonovichMilstein`), and for
  additive noise `SRA1`, `ShARK`; `ensemble_stats` summarises a vmapped ensemble;
- ensembles of small systems: `simulate_ensemble` integrates every member in its own
  loop inside one kernel (Pallas/Triton on a GPU), the vmapped solve's result without
  its lockstep;
- delay differential equations (`DDE(vector_field, delays, history)`): `MethodOfSteps`
  (Tsit5 or Dopri5, or the Rosenbrock methods for stiff DDEs; steps up to the smallest delay,
  discontinuity tracking);
- IMEX (needs `ODE(explicit=..., implicit=...)`): `KenCarp3`, `KenCarp4`, `KenCarp5`.

Models ready to simulate: `lotka_volterra`, `van_der_pol`, `lorenz`, `sir`, `seir`,
`robertson`, and the stiff test-set problems `hires`, `pollu` (`stiff_problem`); the
2-D Brusselator with diffusion, a large stiff system (`brusselator_2d`).

Adjoints (`adjoint=`), re-exported from diffrax:

- `RecursiveCheckpointAdjoint()` (default): reverse mode (`jax.grad`) by
  discretise-then-optimise with checkpointing; exact gradients of the computed
  solution, memory O(log steps) checkpoints. The right choice almost always.
- `BacksolveAdjoint()`: solves the adjoint ODE backwards; O(1) memory but
  gradients only approximate the discrete ones and it can be unstable for
  dissipative or chaotic systems. For very long solves where memory binds.
- `ForwardMode()`: forward-mode autodiff (`jax.jvp`, `jax.jacfwd`); cheapest when
  there are fewer inputs than outputs (sensitivities to a few parameters or
  initial conditions). Required for forward mode.
"""

from diffrax import BacksolveAdjoint, ForwardMode, RecursiveCheckpointAdjoint

from ._auto import Auto
from ._bdf import BDF
from ._brusselator import Brusselator2D, brusselator_2d
from ._catalogue import lorenz, lotka_volterra, robertson, van_der_pol
from ._dae import consistent_initial_state
from ._dde import DDE
from ._dde_method import MethodOfSteps
from ._diffrax_method import AbstractDiffraxMethod
from ._diffusion_preconditioner import DiffusionPreconditioner
from ._ensemble import ensemble_stats
from ._epidemic import seir, sir
from ._explicit import RK4, Dopri5, Dopri8, Euler, Heun, Tsit5
from ._imex import KenCarp3, KenCarp4, KenCarp5
from ._implicit import ImplicitEuler, Kvaerno3, Kvaerno4, Kvaerno5
from ._mass import MassMatrix
from ._ode import ODE
from ._rosenbrock_methods import AbstractRosenbrock, Rodas4, Rodas5P, Ros3P, Ros34PW2
from ._rosenbrock_reuse import JacobianReuse
from ._sde import SDE
from ._sde_methods import (
    SRA1,
    AbstractSDEMethod,
    EulerMaruyama,
    ItoMilstein,
    Milstein,
    ShARK,
    StratonovichHeun,
    StratonovichMilstein,
)
from ._simulate_ensemble import simulate_ensemble
from ._stiff_catalogue import hires, pollu, stiff_problem

__all__ = [
    "BDF",
    "Brusselator2D",
    "brusselator_2d",
    "ODE",
    "SDE",
    "DDE",
    "MethodOfSteps",
    "Auto",
    "AbstractDiffraxMethod",
    "Euler",
    "Heun",
    "RK4",
    "Tsit5",
    "Dopri5",
    "Dopri8",
    "ImplicitEuler",
    "Kvaerno3",
    "Kvaerno4",
    "Kvaerno5",
    "AbstractRosenbrock",
    "Rodas5P",
    "Rodas4",
    "Ros3P",
    "Ros34PW2",
    "JacobianReuse",
    "AbstractSDEMethod",
    "EulerMaruyama",
    "StratonovichHeun",
    "ItoMilstein",
    "StratonovichMilstein",
    "Milstein",
    "SRA1",
    "ShARK",
    "ensemble_stats",
    "simulate_ensemble",
    "consistent_initial_state",
    "MassMatrix",
    "DiffusionPreconditioner",
    "KenCarp3",
    "KenCarp4",
    "KenCarp5",
    "RecursiveCheckpointAdjoint",
    "BacksolveAdjoint",
    "ForwardMode",
    "lotka_volterra",
    "robertson",
    "van_der_pol",
    "lorenz",
    "sir",
    "seir",
    "hires",
    "pollu",
    "stiff_problem",
]
