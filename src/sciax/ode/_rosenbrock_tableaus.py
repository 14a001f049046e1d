"""Coefficients of the Rosenbrock–Wanner methods `Rodas5P`, `Rodas4`, `Ros3P` and `Ros34PW2`.

All are written in the transformed form of Hairer & Wanner (Solving ODEs II,
2nd ed., §IV.7, eq. 7.25), which needs no matrix–vector product with the Jacobian:

    (I/(h γ) - J) k_i = f(t0 + c_i h, y0 + Σ_j a_ij k_j) + Σ_j (C_ij / h) k_j + h d_i ∂f/∂t
    y1 = y0 + Σ_i b_i k_i,        error estimate Σ_i e_i k_i.

Dense output (Rodas methods) is the interpolant
`y(θ) = (1-θ) y0 + θ (y1 + (1-θ)(K_1 + θ K_2 + θ² K_3 ...))` with `K_j = Σ_i H_ji k_i`.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np


@dataclasses.dataclass(frozen=True)
class RosenbrockTableau:
    """One Rosenbrock method in transformed form (see the module docstring).

    Hashable (tuples of floats), so it can be a static field of a solver.

    **Fields:**

    - `name`: for error messages and `repr`.
    - `order`: classical order of `y1`; the embedded solution has order `order - 1`.
    - `gamma`: the diagonal coefficient γ.
    - `a`, `c_mat`: strictly lower-triangular `(s, s)` matrices (`a_ij`, `C_ij`), as rows.
    - `c`: stage times `(s,)`; `d`: time-derivative coefficients `(s,)`.
    - `b`, `b_error`: weights of the solution and of the error estimate `(s,)`.
    - `dense`: `H`, `(m, s)` rows of the dense-output polynomial, or `()` when the
      method has none (then a cubic Hermite interpolant is used, at one extra
      evaluation of `f` per step).
    - `w_method`: whether the order holds with any approximation of the Jacobian (a
      Rosenbrock-W method, Hairer & Wanner II §IV.7 "W-methods"), so a Jacobian may be
      kept across steps.
    """

    name: str
    order: int
    gamma: float
    a: tuple[tuple[float, ...], ...]
    c_mat: tuple[tuple[float, ...], ...]
    c: tuple[float, ...]
    d: tuple[float, ...]
    b: tuple[float, ...]
    b_error: tuple[float, ...]
    dense: tuple[tuple[float, ...], ...] = ()
    w_method: bool = False

    @property
    def num_stages(self) -> int:
        return len(self.c)

    def arrays(self) -> dict[str, np.ndarray]:
        return {
            "a": np.asarray(self.a, dtype=float),
            "c_mat": np.asarray(self.c_mat, dtype=float),
            "c": np.asarray(self.c, dtype=float),
            "d": np.asarray(self.d, dtype=float),
            "b": np.asarray(self.b, dtype=float),
            "b_error": np.asarray(self.b_error, dtype=float),
            "dense": np.asarray(self.dense, dtype=float).reshape(len(self.dense), self.num_stages),
        }


def _square(rows: list[list[float]], s: int) -> tuple[tuple[float, ...], ...]:
    """Pad ragged lower-triangular rows (row i has i entries) to an `(s, s)` matrix."""
    out = np.zeros((s, s))
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return tuple(tuple(float(v) for v in r) for r in out)


def _stiffly_accurate(name, order, gamma, a_rows, c_rows, c, d, dense) -> RosenbrockTableau:
    """A Rodas-type method: y1 = (last stage's argument) + k_s, error estimate k_s.

    The last row of `a` is the argument of the last stage, so `b = a[s-1] + e_s`
    and the embedded solution (that argument itself) differs from y1 by `k_s`.
    """
    s = len(c)
    a = _square(a_rows, s)
    b = list(a[s - 1])
    b[s - 1] += 1.0
    b_error = [0.0] * (s - 1) + [1.0]
    return RosenbrockTableau(
        name=name,
        order=order,
        gamma=gamma,
        a=a,
        c_mat=_square(c_rows, s),
        c=tuple(c),
        d=tuple(d),
        b=tuple(b),
        b_error=tuple(b_error),
        dense=tuple(tuple(r) for r in dense),
    )


# Rodas4: Hairer & Wanner, Solving ODEs II (2nd ed. 1996), §IV.7, Table 7.3 and the
# RODAS code (dense output coefficients from the same code).
RODAS4 = _stiffly_accurate(
    "Rodas4",
    4,
    0.25,
    a_rows=[
        [],
        [1.544],
        [0.9466785280815826, 0.2557011698983284],
        [3.314825187068521, 2.896124015972201, 0.9986419139977817],
        [1.221224509226641, 6.019134481288629, 12.53708332932087, -0.6878860361058950],
        [1.221224509226641, 6.019134481288629, 12.53708332932087, -0.6878860361058950, 1.0],
    ],
    c_rows=[
        [],
        [-5.6688],
        [-2.430093356833875, -0.2063599157091915],
        [-0.1073529058151375, -9.594562251023355, -20.47028614809616],
        [7.496443313967647, -10.24680431464352, -33.99990352819905, 11.70890893206160],
        [8.083246795921522, -7.981132988064893, -31.52159432874371, 16.31930543123136, -6.058818238834054],
    ],
    c=[0.0, 0.386, 0.21, 0.63, 1.0, 1.0],
    d=[0.25, -0.1043, 0.1035, -0.0362, 0.0, 0.0],
    dense=[
        [10.12623508344586, -7.487995877610167, -34.80091861555747, -7.992771707568823, 1.025137723295662, 0.0],
        [-0.6762803392801253, 6.087714651680015, 16.43084320892478, 24.76722511418386, -6.594389125716872, 0.0],
    ],
)

# Rodas5P: G. Steinebach, "Construction of Rosenbrock–Wanner method Rodas5P and
# numerical benchmarks within the Julia Differential Equations package",
# BIT Numerical Mathematics 63:27 (2023). Order 5(4), stiffly accurate, order-4 dense output.
_G5P = 0.21193756319429014
_A5P_LAST = [-7.502846399306121, 2.561846144803919, -11.627539656261098, -0.18268767659942256, 0.030198172008377946]
RODAS5P = _stiffly_accurate(
    "Rodas5P",
    5,
    _G5P,
    a_rows=[
        [],
        [3.0],
        [2.849394379747939, 0.45842242204463923],
        [-6.954028509809101, 2.489845061869568, -10.358996098473584],
        [2.8029986275628964, 0.5072464736228206, -0.3988312541770524, -0.04721187230404641],
        _A5P_LAST,
        _A5P_LAST + [1.0],
        _A5P_LAST + [1.0, 1.0],
    ],
    c_rows=[
        [],
        [-14.155112264123755],
        [-17.97296035885952, -2.859693295451294],
        [147.12150275711716, -1.41221402718213, 71.68940251302358],
        [165.43517024871676, -0.4592823456491126, 42.90938336958603, -5.961986721573306],
        [24.854864614690072, -3.0009227002832186, 47.4931110020768, 5.5814197821558125, -0.6610691825249471],
        [
            30.91273214028599,
            -3.1208243349937974,
            77.79954646070892,
            34.28646028294783,
            -19.097331116725623,
            -28.087943162872662,
        ],
        [
            37.80277123390563,
            -3.2571969029072276,
            112.26918849496327,
            66.9347231244047,
            -40.06618937091002,
            -54.66780262877968,
            -9.48861652309627,
        ],
    ],
    c=[0.0, 0.6358126895828704, 0.4095798393397535, 0.9769306725060716, 0.4288403609558664, 1.0, 1.0, 1.0],
    d=[_G5P, -0.42387512638858027, -0.3384627126235924, 1.8046452872882734, 2.325825639765069, 0.0, 0.0, 0.0],
    dense=[
        [
            25.948786856663858,
            -2.5579724845846235,
            10.433815404888879,
            -2.3679251022685204,
            0.524948541321073,
            1.1241088310450404,
            0.4272876194431874,
            -0.17202221070155493,
        ],
        [
            -9.91568850695171,
            -0.9689944594115154,
            3.0438037242978453,
            -24.495224566215796,
            20.176138334709044,
            15.98066361424651,
            -6.789040303419874,
            -6.710236069923372,
        ],
        [
            11.419903575922262,
            2.8879645146136994,
            72.92137995996029,
            80.12511834622643,
            -52.072871366152654,
            -59.78993625266729,
            -0.15582684282751913,
            4.883087185713722,
        ],
    ],
)


def _ros3p() -> RosenbrockTableau:
    """ROS3P: J. Lang & J. Verwer, "ROS3P — an accurate third-order Rosenbrock solver
    designed for parabolic problems", BIT 41 (2001) 731–738. γ = 1/2 + √3/6; order 3
    with an embedded order-2 solution; A-stable, no order reduction for parabolic PDEs.
    The paper's (α, γ, b) coefficients are given here in transformed form.
    """
    gamma = 0.5 + math.sqrt(3.0) / 6.0
    ig = 1.0 / gamma
    t = -ig * (2.0 - 0.5 * ig)
    u = ig * (2.0 / 3.0 - ig / 6.0)
    b = (ig * (1.0 + u), u, ig / 3.0)
    b_embedded = (2.113248654051871, 1.0, 0.4226497308103742)
    return RosenbrockTableau(
        name="Ros3P",
        order=3,
        gamma=gamma,
        a=_square([[], [ig], [ig, 0.0]], 3),
        c_mat=_square([[], [-ig * ig], [-ig * (1.0 - t), t]], 3),
        c=(0.0, 1.0, 1.0),
        d=(0.7886751345948129, -0.2113248654051871, -1.077350269189626),
        b=b,
        b_error=tuple(x - y for x, y in zip(b, b_embedded)),
    )


ROS3P = _ros3p()


def _from_original(name, order, alpha, gamma_mat, b, b_hat, *, w_method=False) -> RosenbrockTableau:
    """The transformed form of a method published in the original form of Hairer & Wanner
    (§IV.7, eq. 7.4: strictly lower `α`, lower `Γ` with `γ` on the diagonal, weights `b`, `b̂`).

    Transformation (eq. 7.25 ff.): `A = α Γ⁻¹`, `C = diag(1/γ) - Γ⁻¹`, `m = b Γ⁻¹`,
    `c_i = Σ_j α_ij`, `d_i = Σ_j Γ_ij`.
    """
    alpha, gamma_mat = np.asarray(alpha, dtype=float), np.asarray(gamma_mat, dtype=float)
    gamma = float(gamma_mat[0, 0])
    inverse = np.linalg.inv(gamma_mat)
    m, m_hat = np.asarray(b) @ inverse, np.asarray(b_hat) @ inverse
    return RosenbrockTableau(
        name=name,
        order=order,
        gamma=gamma,
        a=_square(np.tril(alpha @ inverse, -1).tolist(), len(b)),
        c_mat=_square(np.tril(np.eye(len(b)) / gamma - inverse, -1).tolist(), len(b)),
        c=tuple(alpha.sum(axis=1).tolist()),
        d=tuple(gamma_mat.sum(axis=1).tolist()),
        b=tuple(m.tolist()),
        b_error=tuple((m - m_hat).tolist()),
        w_method=w_method,
    )


def _ros34pw2() -> RosenbrockTableau:
    """ROS34PW2: J. Rang & L. Angermann, "New Rosenbrock W-methods of order 3 for partial
    differential algebraic equations of index 1", BIT 45 (2005) 761–787 (coefficients
    in the original α, Γ, b, b̂ form). Order 3(2), 4 stages, stiffly accurate
    (b is the last row of α + Γ), L-stable; a W-method (order 3 with any
    approximation of the Jacobian), designed for parabolic PDEs and index-1 PDAEs.
    """
    g = 0.435866521508459
    alpha = [
        [0.0, 0.0, 0.0, 0.0],
        [0.87173304301691801, 0.0, 0.0, 0.0],
        [0.84457060015369423, -0.11299064236484185, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
    ]
    gamma_mat = [
        [g, 0.0, 0.0, 0.0],
        [-0.87173304301691801, g, 0.0, 0.0],
        [-0.90338057013044082, 0.054180672388095326, g, 0.0],
        [0.24212380706095346, -1.2232505839045147, 0.54526025533510214, g],
    ]
    b = [0.24212380706095346, -1.2232505839045147, 1.5452602553351020, g]
    b_hat = [0.37810903145819369, -0.096042292212423178, 0.5, 0.2179332607542295]
    return _from_original("Ros34PW2", 3, alpha, gamma_mat, b, b_hat, w_method=True)


ROS34PW2 = _ros34pw2()
