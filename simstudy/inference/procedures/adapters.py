"""The methods of the registered procedures: read the split losses of a design, call the formula
(a function of :mod:`simstudy.inference`, or a new one of this package), return an outcome.

Every method has the signature ``(procedure, losses, alpha, mu0, alternative, **options)``.
"""
from __future__ import annotations

import numpy as np

from simstudy.inference import (
    SubsampleCV, binomial_test, cv_clt_test, cv_t_test, five_by_two_f_test, five_by_two_t_test, holdout_test,
    nadeau_bengio_rho, nested_cv_interval, repeated_kfold_t_test, resampled_t_test, subsample_rho,
    subsample_variance, z_test,
)
from simstudy.inference.procedures.bayesian import correlated_posterior
from simstudy.inference.procedures.bootstrap import (
    leave_one_out_bootstrap, location_shifted_interval, point632plus,
)
from simstudy.inference.procedures.conservative_z import conservative_z_test
from simstudy.inference.procedures.outcomes import IntervalOutcome, PosteriorOutcome, from_test_result

__all__ = ["bayesian_correlated_t", "bootstrap_632plus", "bootstrap_location_shifted", "bootstrap_oob",
           "conservative_z", "cv_clt", "five_by_two_f", "five_by_two_t", "holdout_wald", "holdout_wilson",
           "kfold_t", "kfold_t_rho_hat", "nested_cv", "repeated_kfold_t", "repeated_splits_t"]


def _outcome(proc, result, alpha):
    return from_test_result(result, alpha, proc.name, proc.estimand)


def _interval(proc, estimate, lower, upper, se, alpha) -> IntervalOutcome:
    def f(x):
        x = np.asarray(x, dtype=float)
        return float(x) if x.ndim == 0 else x

    return IntervalOutcome(proc.name, proc.estimand, f(estimate), f(lower), f(upper), f(se), 1 - alpha)


# ----------------------------------------------------------------------------- hold-out

def _holdout_losses(losses) -> np.ndarray:
    return losses.losses[..., 0, :][..., losses.plan.test[0]]


def holdout_wald(proc, losses, alpha, mu0, alternative):
    """Wald z on the test losses of the one split: mean -+ z s / sqrt(n_test) (:func:`holdout_test`)."""
    return _outcome(proc, holdout_test(_holdout_losses(losses), mu0, alternative), alpha)


def holdout_wilson(proc, losses, alpha, mu0, alternative):
    """Wilson's score interval for the error rate on the test points (0-1 losses only; :func:`binomial_test`)."""
    e = _holdout_losses(losses)
    if not np.all((e == 0) | (e == 1)):
        raise ValueError(f"procedure {proc.name!r} needs 0-1 losses (an error rate), not loss differences or "
                         "continuous losses; use holdout_wald for those.")
    ci = binomial_test(e.sum(axis=-1), e.shape[-1], method="wilson").confidence_interval(1 - alpha)
    return _interval(proc, ci.estimate, ci.low, ci.high, np.nan, alpha)


# ----------------------------------------------------------------------------- one K-fold CV

def kfold_t(proc, losses, alpha, mu0, alternative, rho=0.0):
    """Grandvalet & Bengio's eq. 9 on the K fold means with a fixed rho (:func:`cv_t_test`)."""
    return _outcome(proc, cv_t_test(losses.split_means(), mu0, rho, alternative), alpha)


def _half_cvs(losses, K: int, n_sub: int) -> SubsampleCV:
    """The half-sample K-fold CVs of a KFoldHalvesDesign plan as a :class:`SubsampleCV`."""
    fm = losses.split_means(slice(K, None))                          # (..., 2 B K)
    fm = fm.reshape(fm.shape[:-1] + (-1, 2, K))
    mu = fm.mean(axis=-1)
    theta3 = np.sum((fm - mu[..., None]) ** 2, axis=-1) / (K * (K - 1))
    return SubsampleCV(mu, theta3, losses.n, n_sub, K)


def kfold_t_rho_hat(proc, losses, alpha, mu0, alternative, estimator="nadeau_bengio"):
    """Eq. 9 with a data-driven rho_hat of :mod:`simstudy.inference.rho_hat` (or its variance estimate)."""
    K = losses.design.K
    fold_means = losses.split_means(slice(0, K))
    if estimator == "nadeau_bengio":
        n = losses.n
        estimate = nadeau_bengio_rho(K, n - n / K, n / K)
    else:
        sub = _half_cvs(losses, K, losses.design.half_size(losses.n))
        estimate = {"subsample_rho": lambda: subsample_rho(sub),
                    "subsample_rho_satterthwaite": lambda: subsample_rho(sub, df="satterthwaite"),
                    "subsample_variance": lambda: subsample_variance(sub)}[estimator]()
    return _outcome(proc, estimate.test(fold_means, mu0, alternative), alpha)


def cv_clt(proc, losses, alpha, mu0, alternative, variance="all-pairs"):
    """Bayle et al.'s CV CLT z on the per-point CV losses (:func:`cv_clt_test`); K-fold or leave-one-out."""
    result = cv_clt_test(losses.residuals(), losses.fold_labels(), mu0, variance, alternative)
    return _outcome(proc, result, alpha)


# ----------------------------------------------------------------------------- repeated designs

def _sizes(losses, rows=slice(None)) -> tuple[float, float]:
    """Average training and test sizes of the splits in ``rows``."""
    return float(losses.plan.train_sizes()[rows].mean()), float(losses.plan.test_sizes()[rows].mean())


def repeated_splits_t(proc, losses, alpha, mu0, alternative, correction=None):
    """The repeated train/validation t, plain or Nadeau-Bengio corrected (:func:`resampled_t_test`)."""
    n_train, n_test = _sizes(losses)
    result = resampled_t_test(losses.split_means(), n_train, n_test, mu0, correction, alternative)
    return _outcome(proc, result, alpha)


def repeated_kfold_t(proc, losses, alpha, mu0, alternative):
    """Bouckaert & Frank's corrected repeated K-fold t (:func:`repeated_kfold_t_test`)."""
    design = losses.design
    estimates = losses.split_means().reshape(losses.batch_shape + (design.repeats, design.K))
    n_train, n_test = _sizes(losses)
    return _outcome(proc, repeated_kfold_t_test(estimates, n_train, n_test, mu0, alternative=alternative), alpha)


def five_by_two_t(proc, losses, alpha, mu0, alternative):
    """Dietterich's 5x2cv t (:func:`five_by_two_t_test`)."""
    estimates = losses.split_means().reshape(losses.batch_shape + (5, 2))
    return _outcome(proc, five_by_two_t_test(estimates, mu0, alternative), alpha)


def five_by_two_f(proc, losses, alpha, mu0, alternative):
    """Alpaydin's combined 5x2cv F (:func:`five_by_two_f_test`; no interval)."""
    estimates = losses.split_means().reshape(losses.batch_shape + (5, 2))
    return from_test_result(five_by_two_f_test(estimates, mu0), alpha, proc.name, proc.estimand, with_interval=False)


# ----------------------------------------------------------------------------- nested CV

def _nested_arrays(losses, r_losses: np.ndarray):
    """(pair (R, K, K, m), outer (R, K, m)) arrays of :func:`nested_cv_interval` for one replicate."""
    design, test = losses.design, losses.plan.test
    K, R, step = design.K, design.repetitions, design.per_repetition
    m = -(-losses.n // K)
    pair, outer = np.full((R, K, K, m), np.nan), np.full((R, K, m), np.nan)
    for r in range(R):
        members = [np.flatnonzero(test[r * step + k]) for k in range(K)]
        for k in range(K):
            outer[r, k, :members[k].size] = r_losses[r * step + k, members[k]]
        for row, (a, b) in enumerate(design.pairs(), start=r * step + K):
            pair[r, b, a, :members[a].size] = r_losses[row, members[a]]    # fold a, trained without a and b
            pair[r, a, b, :members[b].size] = r_losses[row, members[b]]
    return pair, outer


def nested_cv(proc, losses, alpha, mu0, alternative, method="paper"):
    """Bates, Hastie & Tibshirani's nested CV interval (:func:`nested_cv_interval`), replicate by replicate."""
    flat = losses.losses.reshape((-1,) + losses.losses.shape[-2:])
    results = [nested_cv_interval(*_nested_arrays(losses, x), confidence_level=1 - alpha, method=method)
               for x in flat]
    shape = losses.batch_shape
    columns = [np.array([getattr(res, f) for res in results]).reshape(shape) for f in ("estimate", "low", "high", "se")]
    return _interval(proc, *columns, alpha)


# ----------------------------------------------------------------------------- new formulas

def conservative_z(proc, losses, alpha, mu0, alternative):
    """Nadeau & Bengio's conservative Z (:func:`~.conservative_z.conservative_z_test`)."""
    J, M = losses.design.J, losses.design.M
    means = losses.split_means()
    halves = means[..., J:].reshape(losses.batch_shape + (M, 2, J))
    return _outcome(proc, conservative_z_test(means[..., :J], halves, mu0, alternative), alpha)


def bayesian_correlated_t(proc, losses, alpha, mu0, alternative, rope=0.0):
    """Corani & Benavoli's correlated Bayesian t on repeated K-fold estimates (:func:`.correlated_posterior`)."""
    n_train, n_test = _sizes(losses)
    post = correlated_posterior(losses.split_means(), n_test / (n_train + n_test), rope, mu0)
    ci = post.credible(alternative).confidence_interval(1 - alpha)
    interval = IntervalOutcome(proc.name, proc.estimand, post.mean, ci.low, ci.high, post.scale, 1 - alpha,
                               alternative)
    return PosteriorOutcome(proc.name, proc.estimand, post.p_left, post.p_rope, post.p_right, post.rope, alpha,
                            alternative, mu0, interval)


def _bootstrap_parts(losses):
    resamples = slice(1, None)
    oob = leave_one_out_bootstrap(losses.losses[..., resamples, :], losses.plan.train[resamples])
    apparent = losses.losses[..., 0, :].mean(axis=-1)
    return oob, apparent


def _gamma(proc, losses):
    if losses.no_information is None:
        raise ValueError(f"procedure {proc.name!r} needs the no-information error gamma: pass "
                         "SplitLosses(..., no_information=no_information_error(loss, y, predictions of the model "
                         "fitted on all n points)).")
    return np.asarray(losses.no_information, dtype=float)


def bootstrap_oob(proc, losses, alpha, mu0, alternative):
    """The leave-one-out bootstrap Err1 -+ z SE_del (:func:`~.bootstrap.leave_one_out_bootstrap`)."""
    oob, _ = _bootstrap_parts(losses)
    ci = z_test(oob.estimate, oob.se).confidence_interval(1 - alpha)
    return _interval(proc, oob.estimate, ci.low, ci.high, oob.se, alpha)


def _estimate632plus(proc, losses):
    oob, apparent = _bootstrap_parts(losses)
    return oob, apparent, point632plus(oob.estimate, apparent, _gamma(proc, losses))


def bootstrap_632plus(proc, losses, alpha, mu0, alternative):
    """The .632+ -+ z SE_del Err632+/Err1 (Schulz-Kuempel et al.'s ``infer_632plus``)."""
    oob, _, estimate = _estimate632plus(proc, losses)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(np.asarray(oob.estimate) > 0, np.asarray(estimate) / oob.estimate, 1.0)
    se = np.asarray(oob.se) * ratio
    ci = z_test(estimate, se).confidence_interval(1 - alpha)
    return _interval(proc, estimate, ci.low, ci.high, se, alpha)


def bootstrap_location_shifted(proc, losses, alpha, mu0, alternative):
    """Noma et al.'s location-shifted bootstrap around the .632+ (:func:`~.bootstrap.location_shifted_interval`)."""
    _, apparent, estimate = _estimate632plus(proc, losses)
    resample_apparent = losses.in_sample_means(slice(1, None))
    lower, upper = location_shifted_interval(resample_apparent, apparent, estimate, alpha)
    return _interval(proc, estimate, lower, upper, np.nan, alpha)
