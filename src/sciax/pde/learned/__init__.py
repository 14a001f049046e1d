"""Learned discretisations trained through `sciax.simulate` (`sciax.pde.learned`).

- `LearnedReconstruction` (a `sciax.pde.fv.AbstractReconstruction`): face values from stencil
  weights a network picks cell by cell, exact for polynomials up to a chosen degree
  (Bar-Sinai et al., PNAS 2019); `stencil_net` builds one around an MLP; `face_coefficients`
  gives the constraint space; `LinearReconstruction` the
  standard linear schemes (centred or upwind-biased) on a stencil; `trainable` the filter of the weights to train.
- `LearnedFaceValues`: one learned value per face on a window around it (the paper's
  conservative scheme: no built-in upwinding or dissipation), or both states, or (`derivative=1`)
  a learned face derivative for `ForcedBurgers(viscous=...)`; `face_net` builds one around an MLP.
- `ForcedBurgers`: `u_t + (u^2/2)_x = eta u_xx + f(x, t)` on a periodic grid, the paper's
  benchmark, with `random_forcing` (their recipe) and `coarse_grain` (cell averaging) or
  `spectral_filter` (Fourier truncation); with
  `memory`, lagged fields the learned scheme reads (`face_net(..., features=k)`), and `lagged`,
  their values along a reference trajectory.
- `Corrected`: any model plus a learned correction, `rhs + net(state)` (closures);
  `SpectralCorrected`: a spectral model's correction in its nonlinear term, for `ETDRK4` and friends.
- Training: `derivative_loss` (one right-hand side per snapshot), `unrolled_loss`, `train` (optax,
  progress bar, checkpoints), `random_batches` (its batches, drawn on the host), `error_vs_time`, `survival_time`.
"""

from ._closure import Corrected, SpectralCorrected, corrected_spec
from ._coarse import coarse_grain, spectral_filter
from ._face import LearnedFaceValues, face_net
from ._forced_burgers import FORCING_FIELDS, ForcedBurgers, random_forcing
from ._linear import LinearReconstruction
from ._memory import lagged
from ._stencil import LearnedReconstruction, face_coefficients, stencil_net, trainable
from ._training import derivative_loss, error_vs_time, random_batches, survival_time, train, unrolled_loss

__all__ = [
    "LearnedReconstruction",
    "LinearReconstruction",
    "LearnedFaceValues",
    "face_net",
    "face_coefficients",
    "stencil_net",
    "trainable",
    "ForcedBurgers",
    "FORCING_FIELDS",
    "random_forcing",
    "coarse_grain",
    "spectral_filter",
    "lagged",
    "unrolled_loss",
    "derivative_loss",
    "train",
    "random_batches",
    "error_vs_time",
    "survival_time",
    "Corrected",
    "SpectralCorrected",
    "corrected_spec",
]
