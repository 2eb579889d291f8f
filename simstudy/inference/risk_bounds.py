r"""Bias corrections b for Nedelko's estimate R_hat = R_emp + b(R_emp), without the true model.

What Nedelko writes (/work/shared/papers/nedelko_cv_accuracy_ru.md, section "Численный
эксперимент"; our translation): "The comparison also includes R_hat, the risk estimate
obtained by adding to the empirical risk an estimate of the maximal bias [6]. This estimate
is described in detail in [7]." and, in the conclusion, "the estimate based on the empirical
risk with a bias correction ... has comparable accuracy but a much smaller computational
cost". Refs. [6] (2008, "On interval estimation of risk for a decision function") and [7]
(2011, "Exact and empirical estimates of the misclassification probability") are not
available. The abstracts of his related papers state the object: [6] builds risk estimates
"in the absence of any information on the distribution" by "selecting a finite set of
distributions"; ref. [3] of the paper (MLDM 2003) obtains, for a discrete feature, "the
dependence of the average risk on the empirical risk for the worst distribution", the exact
maximal bias of the empirical risk, which "allows scaling the Vapnik-Chervonenkis estimates",
with "a heuristic approach" for continuous features. This module implements that object and a
rigorous distribution-free bound; neither uses the distribution family of the study.

Methods (``rhat_bias_bound(empirical, N, method)``)
---------------------------------------------------
``"nedelko_worst_case"`` (default)
    b(r) = B_n(r; N), the maximal mean bias of the empirical risk of the *histogram
    classifier* with n cells over all distributions whose mean empirical risk is r (upper
    concave envelope, see :func:`histogram_worst_case_bias`). For the histogram classifier it
    is a theorem: E_P[R - R_emp] <= B_n(E_P[R_emp]) for every P. For Fisher's discriminant it
    is Nedelko's heuristic transfer: the discrete class "of the same capacity" stands in for
    the linear rules. The capacity match is ``cells``: ``"growth"`` (default) takes the
    number of cells whose classifier can produce as many labellings of a sample of N points
    as the affine half-planes of R^2 can, 2^n = Pi(N) = N^2 - N + 2, n = log2 Pi(N) (8.58 at
    N = 20; non-integer n interpolates linearly between the neighbouring integers);
    ``"vc_dimension"`` takes n = 3, the VC dimension of half-planes (with a VC bound that
    depends on the class through h only, Nedelko's scaling of the VC estimate by the exact
    discrete worst case reduces to B_h); an integer or float gives n directly.
``"vc_halfplane"``
    A rigorous distribution-free bound that holds for *any* learner whose rules are affine
    half-planes of R^2 (Fisher + ERM threshold, with any tie rule, and the constant rules):
    with probability at least 1 - delta, simultaneously for all such rules (Vapnik 1998,
    the relative deviation inequality P{sup_h (R - R_emp)/sqrt(R) > eps} <= 4 Pi(2N)
    exp(-N eps^2 / 4)),

        R <= R_emp + (E / 2) (1 + sqrt(1 + 4 R_emp / E)),   E = 4 (ln Pi(2N) + ln(4/delta)) / N,

    with Pi(m) = m^2 - m + 2 (Cover 1965: the dichotomies of m points of R^2 cut by affine
    half-planes, all-equal labellings included). b is the added term. It is vacuous at the
    sample sizes of the study (E = 2.35 at N = 20, delta = 0.05, so R_hat = 1).
``"oracle_mean_curve"``, ``"oracle_conditional_max"``
    The study's earlier corrections calibrated by simulation on the *true* model family at the
    true N (:func:`simstudy.studies.nedelko_fisher.aggregate.optimism_table`); kept for
    comparison, they need that table (``table=``).

The histogram worst case
------------------------
For the histogram classifier the mean risk and mean empirical risk are sums over cells of
exact binomial terms; B_n(r) is the upper concave envelope inf_lambda [Phi(lambda) + lambda r]
of the largest mean bias at mean empirical risk r, Phi an n-fold max-plus convolution over a
grid of cell probabilities. The derivation (weak duality, the grids and their conservative
direction, B_n(0) and r_max, why plugging in the observed R_emp is not guaranteed to be
conservative, and why matching the growth function is "Nedelko's scaling") is in the
documentation, :doc:`/statistics/risk` (``docs/statistics/risk.rst``).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

__all__ = ["RHAT_METHODS", "ORACLE_METHODS", "WorstCaseBias", "histogram_cell_terms", "histogram_worst_case_bias",
           "halfplane_growth", "effective_cells", "vc_halfplane_bias", "rhat_bias_bound", "apply_rhat"]

RHAT_METHODS = ("nedelko_worst_case", "vc_halfplane", "oracle_mean_curve", "oracle_conditional_max")
#: The methods calibrated on the true model family (they need the study's calibration table).
ORACLE_METHODS = ("oracle_mean_curve", "oracle_conditional_max")
HALFPLANE_VC_DIMENSION = 3


# ----------------------------------------------------------------------------- histogram worst case
def _within_cell(m_max: int, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Error probability of the cell's vote and E[min(K, m - K)] given m points, (m_max + 1, Q)."""
    from scipy import stats   # here, not at import: the study's workers import this module

    m = np.arange(m_max + 1)[:, None, None]
    k = np.arange(m_max + 1)[None, None, :]
    pmf = stats.binom.pmf(k, m, q[None, :, None])                     # P(K = k | m), (M, Q, K)
    above, tie = (2 * k > m), (2 * k == m)
    q3 = q[None, :]
    # the vote predicts 0 (wrong w.p. q), 1 (wrong w.p. 1 - q) or flips a coin (wrong w.p. 1/2)
    err = q3 * (pmf * (~above & ~tie)).sum(-1) + (1 - q3) * (pmf * above).sum(-1) + 0.5 * (pmf * tie).sum(-1)
    mins = (pmf * np.minimum(k, m - k)).sum(-1)
    return err, mins


def histogram_cell_terms(N: int, p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """rho(p, q) and e(p, q) of one cell (module docstring) for every p (P,) and q (Q,): (P, Q) each."""
    from scipy import stats

    p, q = np.atleast_1d(np.asarray(p, float)), np.atleast_1d(np.asarray(q, float))
    err, mins = _within_cell(N, q)                                        # (N + 1, Q)
    counts = stats.binom.pmf(np.arange(N + 1)[None, :], N, p[:, None])   # P(m | p), (P, N + 1)
    return p[:, None] * (counts @ err), (counts @ mins) / N


def _max_plus_power(h: np.ndarray, n: int) -> np.ndarray:
    """Phi = max over i_1 + ... + i_n = M of sum_k h[:, i_k], for each row of h (L, M + 1)."""
    M = h.shape[1] - 1
    F = h
    for _ in range(n - 1):
        # F_new[s] = max_i F[s - i] + h[i], one shift i at a time (memory L x (M + 1))
        new = np.full_like(F, -np.inf)
        for i in range(M + 1):
            np.maximum(new[:, i:], F[:, :M + 1 - i] + h[:, i:i + 1], out=new[:, i:])
        F = new
    return F[:, M]


@dataclass(frozen=True)
class WorstCaseBias:
    """B_n(r; N) on a grid of r, with its evaluation for any empirical risk.

    Attributes
    ----------
    N, cells : sample size and number of cells n of the histogram classifier.
    r, bias : the grid of mean empirical risks on [0, r_max] and B_n there.
    r_max : the largest mean empirical risk any distribution gives.
    """

    N: int
    cells: int
    r: np.ndarray
    bias: np.ndarray
    r_max: float

    def __call__(self, empirical) -> np.ndarray:
        """B_n at the given empirical risks (constant beyond r_max)."""
        return np.interp(np.asarray(empirical, float), self.r, self.bias)


@lru_cache(maxsize=64)
def histogram_worst_case_bias(N: int, cells: int, p_steps: int = 200, q_steps: int = 100,
                              n_lambda: int = 801, r_points: int = 401) -> WorstCaseBias:
    """The upper concave envelope B_n(r) of the maximal bias of the histogram classifier.

    Parameters
    ----------
    N : int
        Sample size.
    cells : int
        Number of cells n (at most n are used by the worst distribution).
    p_steps, q_steps : int
        Grids p in {0, 1/p_steps, ..., 1}, q in {0, 1/(2 q_steps), ..., 1/2}.
    n_lambda : int
        Multipliers lambda = tan(theta), theta uniform on (-pi/2, pi/2).
    r_points : int
        Grid of r on [0, r_max] at which B_n is tabulated.

    Returns
    -------
    WorstCaseBias
    """
    if cells < 1 or N < 1:
        raise ValueError(f"need cells >= 1 and N >= 1; got cells={cells}, N={N}.")
    p = np.arange(p_steps + 1) / p_steps
    q = np.arange(q_steps + 1) / (2 * q_steps)
    rho, e = histogram_cell_terms(N, p, q)
    beta = rho - e
    # r_max: every cell at q = 1/2 maximises e (the vote is a coin flip, the minority largest)
    r_max = float(_max_plus_power(e.max(axis=1)[None], cells)[0])
    theta = np.linspace(-np.pi / 2, np.pi / 2, n_lambda + 2)[1:-1]
    lam = np.tan(theta)
    h = (beta[None] - lam[:, None, None] * e[None]).max(axis=-1)        # (L, P): best q per cell mass
    phi = _max_plus_power(h, cells)                                       # Phi(lambda)
    b0 = float(_max_plus_power(beta[:, :1].T, cells)[0])                  # lambda -> inf: every q = 0
    r = np.linspace(0.0, r_max, r_points)
    bias = np.min(phi[None, :] + lam[None, :] * r[:, None], axis=1)       # inf over the lambda grid
    bias[0] = min(bias[0], b0)
    return WorstCaseBias(int(N), int(cells), r, bias, r_max)


# ----------------------------------------------------------------------------- capacity of half-planes
def halfplane_growth(m: int) -> int:
    """Pi(m) = m^2 - m + 2: most dichotomies of m points of R^2 by affine half-planes (Cover 1965)."""
    m = int(m)
    return m * m - m + 2 if m >= 1 else 1   # = 2 [C(m-1, 0) + C(m-1, 1) + C(m-1, 2)]


def effective_cells(N: int, cells="growth") -> float:
    """Number of histogram cells standing in for Fisher's linear rules (module docstring)."""
    if cells == "growth":
        return float(np.log2(halfplane_growth(N)))
    if cells == "vc_dimension":
        return float(HALFPLANE_VC_DIMENSION)
    value = float(cells)
    if value < 1:
        raise ValueError(f"cells={cells!r}: use 'growth', 'vc_dimension' or a number >= 1.")
    return value


def _worst_case_bias(empirical, N: int, cells) -> np.ndarray:
    """B_n(empirical) for a possibly non-integer n (linear interpolation in n)."""
    n = effective_cells(N, cells)
    lo, hi = int(np.floor(n)), int(np.ceil(n))
    b_lo = histogram_worst_case_bias(int(N), lo)(empirical)
    if hi == lo:
        return b_lo
    t = n - lo
    return (1 - t) * b_lo + t * histogram_worst_case_bias(int(N), hi)(empirical)


# ----------------------------------------------------------------------------- VC relative deviation bound
def vc_halfplane_bias(empirical, N: int, delta: float = 0.05) -> np.ndarray:
    """b = (E/2)(1 + sqrt(1 + 4 R_emp / E)), E = 4 (ln Pi(2N) + ln(4/delta)) / N (module docstring)."""
    r = np.asarray(empirical, float)
    E = 4.0 * (np.log(halfplane_growth(2 * N)) + np.log(4.0 / delta)) / N
    return E / 2 * (1 + np.sqrt(1 + 4 * r / E))


# ----------------------------------------------------------------------------- oracle (study calibration)
def _oracle_bias(empirical, N: int, table: pd.DataFrame | None, method: str) -> np.ndarray:
    """b(k / N) looked up in the study's calibration table (columns sample_size, errors, bias)."""
    if table is None:
        raise ValueError(f"rhat_method={method!r} needs the calibration table (table=...).")
    rows = table[table["sample_size"] == N].set_index("errors")["bias"]
    k = np.rint(np.asarray(empirical, float) * N).astype(int)
    return rows.reindex(k.ravel()).to_numpy().reshape(k.shape)


def rhat_bias_bound(empirical, N: int, method: str = "nedelko_worst_case", *, cells="growth", delta: float = 0.05,
                    table: pd.DataFrame | None = None) -> np.ndarray:
    """The bias correction b(R_emp) of R_hat for samples of size N (methods: module docstring).

    Parameters
    ----------
    empirical : array_like
        Empirical risks (resubstitution errors) in [0, 1].
    N : int
        Sample size.
    method : str
        One of :data:`RHAT_METHODS`.
    cells : {"growth", "vc_dimension"} or number
        Histogram cells for ``"nedelko_worst_case"``.
    delta : float
        Confidence parameter of ``"vc_halfplane"``.
    table : DataFrame, optional
        The study's calibration table, for the ``"oracle_*"`` methods.

    Returns
    -------
    ndarray
        b, same shape as ``empirical``.
    """
    if method == "nedelko_worst_case":
        return _worst_case_bias(empirical, N, cells)
    if method == "vc_halfplane":
        return vc_halfplane_bias(empirical, N, delta)
    if method in ORACLE_METHODS:
        return _oracle_bias(empirical, N, table, method)
    raise ValueError(f"rhat_method={method!r}: use one of {RHAT_METHODS}.")


def apply_rhat(empirical, N, method: str = "nedelko_worst_case", **options) -> np.ndarray:
    """R_hat = R_emp + b(R_emp), clipped to [0, 1]; ``N`` may vary per sample (array).

    ``options`` go to :func:`rhat_bias_bound`. For the study's aggregation:
    ``records["rhat"] = apply_rhat(records["empirical"], records["sample_size"], study.rhat_method, ...)``.
    """
    emp = np.asarray(empirical, float)
    sizes = np.broadcast_to(np.asarray(N), emp.shape)
    out = np.empty_like(emp)
    for n in np.unique(sizes):
        at = sizes == n
        out[at] = emp[at] + rhat_bias_bound(emp[at], int(n), method, **options)
    return np.clip(out, 0.0, 1.0)
