"""Choosing a learner's implementation.

:func:`build_learner` accepts a learner object, a scikit-learn estimator, a registered preset
name (:data:`simstudy.registry.LEARNERS`) or a config mapping, and returns the fastest
implementation that reproduces it for the population and loss at hand:

- ``DecisionTreeClassifier`` settings the numba CART reproduces -> :class:`CartLearner`;
- ``RidgeClassifier`` / ``LinearDiscriminantAnalysis(solver="lsqr")`` on binary labels ->
  the batched linear kernels;
- ``KNeighborsClassifier`` (uniform weights, Euclidean) on a finite population -> the exact
  population k-NN;
- ``KNeighborsRegressor`` (uniform weights, Euclidean) -> :class:`SampleKNNRegressor` (the fold
  models of a sample evaluated together; scikit-learn's predictions except in distance ties);
- ``LogisticRegression(solver="newton-cholesky")`` (L2, binary labels 0/1) -> the batched
  Newton kernel :class:`LogisticLearner` (scikit-learn's iterates; other solvers only with
  ``engine="numba"``, which then gives the optimum);
- anything else -> :class:`SklearnLearner` (scikit-learn, one clone per fit).

``engine="sklearn"`` always uses scikit-learn; ``engine="numba"`` requires a kernel. ``ties``
chooses the numba CART's tie rule (:data:`~simstudy.learners.cart.params.TIE_RULES`).
"""
from __future__ import annotations

import importlib
import logging
import sys
from typing import Any, Mapping, NamedTuple

from simstudy.errors import ConfigError
from simstudy.learners.base import capabilities, check_learner, check_learner_loss, finite_population_data
from simstudy.learners.cart.params import TIE_RULES
from simstudy.learners.sklearn import SklearnLearner

__all__ = ["ENGINES", "build_learner", "estimator_from_spec", "fast_kernel", "validate_learner_config"]

log = logging.getLogger("simstudy")
#: The scikit-learn classes a kernel reproduces (for some of their settings).
_KERNEL_CLASSES = (("sklearn.tree", "DecisionTreeClassifier"), ("sklearn.linear_model", "RidgeClassifier"),
                   ("sklearn.discriminant_analysis", "LinearDiscriminantAnalysis"),
                   ("sklearn.neighbors", "KNeighborsClassifier"), ("sklearn.linear_model", "LogisticRegression"))
ENGINES = ("auto", "numba", "sklearn")


def estimator_from_spec(spec: Mapping[str, Any], field_name: str = "learner.estimator"):
    """Instantiate a scikit-learn estimator from ``{_target_: ..., **params}``; errors name the field.

    Raises
    ------
    ConfigError
        The class cannot be imported, is not an estimator, or rejects its parameters.
    """
    spec = dict(spec)
    target = spec.pop("_target_", None)
    if not target:
        raise ConfigError(f"{field_name}._target_={target!r} is invalid: name a scikit-learn estimator class, e.g. "
                          "sklearn.tree.DecisionTreeClassifier.")
    module_name, _, attr = str(target).rpartition(".")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError):
        raise ConfigError(f"{field_name}._target_={target!r} is invalid: no such class; give the full import path, "
                          "e.g. sklearn.linear_model.LogisticRegression.") from None
    if not isinstance(cls, type):
        raise ConfigError(f"{field_name}._target_={target!r} is invalid: this is not a class; name a scikit-learn "
                          "estimator class.")
    try:
        estimator = cls(**spec)
    except TypeError as exc:
        raise ConfigError(f"{field_name}={dict(spec, _target_=target)!r} is invalid: {cls.__name__} rejects these "
                          f"parameters ({exc}); check the parameter names.") from None
    if hasattr(estimator, "_validate_params"):
        try:
            estimator._validate_params()
        except Exception as exc:  # scikit-learn's InvalidParameterError (a ValueError) and friends
            raise ConfigError(f"{field_name}={dict(spec, _target_=target)!r} is invalid: {exc}") from None
    return estimator


def fast_kernel(estimator, name: str = "learner", population: Any = None, engine: str = "auto",
                ties: str = "draw"):
    """The simstudy kernel reproducing a scikit-learn estimator, ``(learner, "")``, or
    ``(None, reason)`` when none does for this population.

    ``engine="numba"`` also accepts a kernel that reaches the estimator's optimum more tightly
    than the estimator's own stopping rule (``LogisticRegression`` with solvers other than
    newton-cholesky); ``"auto"`` takes only kernels that give the estimator's own fits. ``ties``
    is the numba CART's tie rule.
    """
    from simstudy.learners.cart import CartLearner, supported_tree_params
    from simstudy.learners.knn.population import PopulationKNN, supported_knn_params
    from simstudy.learners.linear.batched import batched_linear_learner

    if _is_exactly(estimator, "sklearn.linear_model", "LogisticRegression"):
        from simstudy.learners.logistic.learner import logistic_learner

        return logistic_learner(estimator, name, population, engine)
    if _is_exactly(estimator, "sklearn.neighbors", "KNeighborsRegressor"):
        from simstudy.learners.knn.regression import SampleKNNRegressor, supported_knn_regressor_params

        ok, why = supported_knn_regressor_params(estimator)
        return (SampleKNNRegressor(estimator, name=name), "") if ok else (None, why)

    ok, why_tree = supported_tree_params(estimator)
    if ok:
        return CartLearner(estimator, name=name, ties=ties), ""
    data = finite_population_data(population)
    if _is_exactly(estimator, "sklearn.neighbors", "KNeighborsClassifier"):
        ok, why = supported_knn_params(estimator)
        if ok and data is not None:
            return PopulationKNN(estimator, data[0], data[1], name=name), ""
        return None, why if not ok else "the population k-NN needs a finite population"
    batched, why_linear = batched_linear_learner(estimator, name)
    if batched is not None:
        labels = data[1] if data is not None else None
        if labels is not None and not set(map(int, set(labels.tolist()))) <= {0, 1}:
            return None, "the batched linear kernels need binary labels"
        return batched, ""
    return None, why_tree if "Tree" in type(estimator).__name__ else why_linear


def _is_exactly(estimator: Any, module: str, name: str) -> bool:
    """Whether ``estimator``'s class is scikit-learn's ``module.name`` itself (a subclass may
    override ``fit`` or ``predict``, which a kernel would not reproduce). A module not imported
    yet cannot have made the estimator, so it is not imported here."""
    loaded = sys.modules.get(module)
    return loaded is not None and type(estimator) is getattr(loaded, name, None)


class _Accepted(NamedTuple):
    """An estimator spec scikit-learn accepted in an earlier run (:mod:`simstudy.learners.accepted`):
    not built yet, so that a kernel needing only its parameters needs no scikit-learn."""

    target: str                 # the class path as configured
    given: dict[str, Any]       # the parameters as configured
    params: dict[str, Any]      # the estimator's get_params(deep=False)

    @property
    def class_name(self) -> str:
        return self.target.rpartition(".")[2]

    def build(self, field_name: str):
        """The scikit-learn estimator itself."""
        return estimator_from_spec({"_target_": self.target, **self.given}, field_name)


class _Spec(NamedTuple):
    """What a learner config mapping asks for."""

    obj: Any            # a scikit-learn estimator, an _Accepted spec, or a user's learner object
    name: str
    engine: str
    fast_path: bool
    ties: str


def _from_mapping(cfg: Mapping[str, Any], field_name: str) -> _Spec:
    """The estimator or learner object and the engine settings of a learner config mapping."""
    cfg = dict(cfg)
    if cfg.get("_target_") not in (None, "???"):
        from simstudy.registry import import_path

        target = cfg.pop("_target_")
        kwargs = {k: v for k, v in cfg.items() if k not in ("name", "engine", "fast_path", "estimator", "ties")}
        try:
            obj = import_path(str(target))(**kwargs)
        except (ImportError, AttributeError, ValueError) as exc:
            raise ConfigError(f"{field_name}._target_={target!r} is invalid: cannot import it ({type(exc).__name__}: "
                              f"{exc}).") from None
        except TypeError as exc:
            raise ConfigError(f"{field_name}: {target}(**{kwargs!r}) failed ({exc}); check the keyword "
                              f"arguments given with +{field_name}.<name>=value.") from None
        return _Spec(obj, str(cfg.get("name") or getattr(obj, "name", type(obj).__name__)), "auto", True, "draw")
    if "_target_" in cfg:
        raise ConfigError(f"{field_name}._target_ is missing: learner=custom needs the import path of your learner "
                          "class, e.g. learner._target_=mypackage.learners.MyLearner.")
    if not cfg.get("estimator"):
        raise ConfigError(f"{field_name}.estimator is missing: give estimator._target_ (a scikit-learn class).")
    estimator = _checked_estimator(cfg["estimator"], f"{field_name}.estimator")
    target = str(dict(cfg["estimator"]).get("_target_", ""))
    class_name = estimator.class_name if isinstance(estimator, _Accepted) else type(estimator).__name__
    name = cfg.get("name") or class_name
    preset_target = _preset_target(name)
    if preset_target and preset_target != target:
        name = class_name  # a preset's name with another estimator would mislabel every output
    return _Spec(estimator, str(name), str(cfg.get("engine", "auto")), bool(cfg.get("fast_path", True)),
                 str(cfg.get("ties", "draw")))


def _checked_estimator(spec: Mapping[str, Any], field_name: str):
    """A valid estimator spec: an :class:`_Accepted` one when scikit-learn accepted it in an earlier
    run, else the estimator built (and checked) by scikit-learn, remembered for the next run."""
    from simstudy.learners.accepted import accepted_params, remember_accepted

    given = dict(spec)
    target = given.pop("_target_", None)
    if target:
        params = accepted_params(str(target), given)
        if params is not None:
            return _Accepted(str(target), given, params)
    estimator = estimator_from_spec(spec, field_name)
    remember_accepted(str(target), given, estimator.get_params(deep=False))
    return estimator


def _preset_target(name: str) -> str | None:
    from simstudy.registry import LEARNERS

    for entry in LEARNERS.values():
        preset = entry.load_config()
        if getattr(preset, "name", None) == name:
            return str(preset.estimator.get("_target_"))
    return None


def validate_learner_config(cfg: Mapping[str, Any], field_name: str = "learner") -> None:
    """Field checks of a learner config (no data needed): the estimator can be built with its
    parameters and the engine is known. Whether a kernel applies is decided with the population."""
    if cfg.get("_target_") in (None, "???") or "estimator" in cfg and cfg.get("estimator"):
        _from_mapping(cfg, field_name)
    _check_choices(cfg.get("engine", "auto"), cfg.get("ties", "draw"), field_name)


def _check_choices(engine: Any, ties: Any, field_name: str) -> None:
    if engine not in ENGINES:
        raise ConfigError(f"{field_name}.engine={engine!r} is invalid: choose auto, numba or sklearn.")
    if ties not in TIE_RULES:
        raise ConfigError(f"{field_name}.ties={ties!r} is invalid: choose draw (one random draw among tied features, "
                          "the default) or shuffle (a random feature order at every node, scikit-learn's scheme).")


def build_learner(spec: Any, population: Any = None, loss: Any = None, field_name: str = "learner") -> Any:
    """A learner object for ``spec`` (see the module docstring).

    Parameters
    ----------
    spec : learner object, scikit-learn estimator, str or mapping
        A mapping has ``name``, ``estimator`` (``_target_`` and parameters), ``engine`` and
        ``fast_path`` (:class:`simstudy.learners.presets.LearnerConfig`), or ``_target_`` (a
        user's learner class) and keyword arguments.
    population : population object, optional
        Lets the engine choose population-specific kernels (k-NN on a finite population,
        binary labels for the batched linear kernels).
    loss : simstudy.cv.losses.Loss, optional
        A loss that needs probabilities rules out kernels without ``predict_proba``.
    field_name : str
        Config field named in error messages.
    """
    if isinstance(spec, str):
        from simstudy.registry import LEARNERS

        spec = LEARNERS.preset(spec, field_name, "a scikit-learn estimator or a learner object")
    if isinstance(spec, type):
        raise ConfigError(f"{field_name}={spec.__name__} is a class, not an instance: give an instance, e.g. "
                          f"{field_name}={spec.__name__}() (with its parameters), or a preset name such as 'tree'.")
    engine, fast_path, ties = "auto", True, "draw"
    if isinstance(spec, Mapping) or (hasattr(spec, "items") and not hasattr(spec, "fit")):
        obj, name, engine, fast_path, ties = _from_mapping(spec, field_name)
    else:
        obj, name = spec, None
    _check_choices(engine, ties, field_name)
    if isinstance(obj, _Accepted):
        kernel = _tree_from_params(obj, name, engine, ties, loss)
        if kernel is not None:
            return kernel
        obj = obj.build(f"{field_name}.estimator")
    if not hasattr(obj, "get_params"):  # a learner object, not a scikit-learn estimator
        check_learner(obj, field_name)
        check_learner_loss(obj, loss, field_name)
        return obj
    name = name or type(obj).__name__
    sk = SklearnLearner(obj, name=name, fast_path=fast_path)
    if engine == "sklearn":
        check_learner_loss(sk, loss, field_name)
        return sk
    kernel, why = fast_kernel(obj, name, population, engine, ties)
    if kernel is not None and loss is not None and loss.needs_proba and "predict_proba" not in capabilities(kernel):
        kernel, why = None, f"loss {loss.name!r} needs probabilities, which the kernel does not give"
    if kernel is not None:
        return kernel
    check_learner_loss(sk, loss, field_name)
    if engine == "numba":
        raise ConfigError(f"{field_name}.engine='numba' is invalid: no fast kernel reproduces this estimator ({why}); "
                          "use learner.engine=auto or sklearn.")
    if any(_is_exactly(obj, module, cls) for module, cls in _KERNEL_CLASSES):
        log.info("learner %s: no fast kernel reproduces these settings (%s); using scikit-learn", name, why)
    return sk


def _tree_from_params(spec: _Accepted, name: str, engine: str, ties: str, loss: Any):
    """The numba CART of an accepted DecisionTreeClassifier spec, built from its parameters alone
    (no scikit-learn), or None where :func:`fast_kernel` has to decide with the estimator."""
    from simstudy.learners.cart.params import TREE_CLASS_PATHS, supported_tree_settings

    if engine == "sklearn" or spec.target not in TREE_CLASS_PATHS or not supported_tree_settings(spec.params)[0]:
        return None
    from simstudy.learners.cart import CartLearner

    kernel = CartLearner.from_params(spec.params, name=name, ties=ties)
    if loss is not None and loss.needs_proba and "predict_proba" not in capabilities(kernel):
        return None
    return kernel
