"""Populations: data-generating processes from which training sets are drawn.

:func:`build_population` turns a population given as an object, a registered name
(:data:`simstudy.registry.POPULATIONS`), a config mapping (``kind`` and the kind's fields) or a
mapping with ``_target_`` (a user's class and its keyword arguments) into a population object,
checked against the protocol (:func:`check_population`) before any work starts.
"""
from __future__ import annotations

import importlib
from typing import Any, Mapping

from simstudy.errors import ConfigError, DataUnavailableError
from simstudy.populations.base import Population, ResidualPopulation, Sample
from simstudy.populations.configs import MISSING_POLICIES, LabelNoiseFields
from simstudy.populations.mechanism_builders import MECHANISM_KINDS

__all__ = ["DataUnavailableError", "GaussianFoldsPopulation", "LogisticPopulation", "Population",
           "ResidualPopulation", "Sample", "TabularPopulation", "binarize", "build_population", "check_population",
           "load_covtype", "load_openml", "load_table_file", "validate_population_config", "expand_preset", "KINDS",
           "MISSING_MARKERS", "MISSING_POLICIES", "TabularData", "data_fingerprint"]

#: Names re-exported from the modules that define them, imported on first use: the ``simstudy``
#: command checks population configs before its workers start, and these modules import numba
#: and pandas (about a second), which the checks do not need.
_LAZY = {name: "simstudy.populations.synthetic" for name in ("GaussianFoldsPopulation", "LogisticPopulation")}
_LAZY.update({"MISSING_MARKERS": "simstudy.populations.io.table", "TabularData": "simstudy.populations.io.table",
              "binarize": "simstudy.populations.io.table", "TabularPopulation": "simstudy.populations.finite",
              "data_fingerprint": "simstudy.populations.io.fingerprint",
              "load_covtype": "simstudy.populations.io.openml", "load_openml": "simstudy.populations.io.openml",
              "load_table_file": "simstudy.populations.io.text"})


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'simstudy.populations' has no attribute {name!r}")


#: Methods every population defines (residual populations: ``residual_blocks`` instead of ``sample``).
REQUIRED_METHODS = ("sample", "seed_params")


def check_population(population: Any, field_name: str = "population") -> None:
    """Refuse an object that does not implement the population protocol, naming what is missing."""
    needs = ("residual_blocks", "seed_params") if isinstance(population, ResidualPopulation) else REQUIRED_METHODS
    missing = [m for m in needs if not callable(getattr(population, m, None))]
    if not isinstance(getattr(population, "name", None), str):
        missing.append("name (a str)")
    if missing:
        raise ConfigError(
            f"{field_name}: {type(population).__name__} is not a simstudy population: it lacks {', '.join(missing)}. "
            "A population defines name, sample(n, rng) -> Sample(X, y) and seed_params() -> dict (the parameters "
            "that seed the random streams); see simstudy.populations.base.Population.")
    task = getattr(population, "task", "classification")
    if task not in ("classification", "regression", "residuals"):
        raise ConfigError(f"{field_name}.task={task!r} is invalid: use 'classification', 'regression' or 'residuals'.")
    params = population.seed_params()
    if not isinstance(params, Mapping):
        raise ConfigError(f"{field_name}.seed_params returned {params!r}, not a dict: return a dict of the parameters "
                          "that define the distribution, e.g. {'kind': 'my_population', 'shift': 1.0} (they seed "
                          "the random streams).")


def validate_population_config(cfg: Mapping[str, Any]) -> None:
    """Field checks of a population config that need no data (run before anything is loaded)."""
    kind = cfg.get("kind", "custom" if "_target_" in cfg else None)
    _refuse_unknown_keys(cfg, kind)
    _validate_noise(cfg)
    if kind == "logistic":
        if not isinstance(cfg.get("bayes_error"), (int, float)) or not 0 < cfg["bayes_error"] < 0.5:
            raise ConfigError(f"population.bayes_error={cfg.get('bayes_error')!r} is invalid: the Bayes error must "
                              "lie in (0, 0.5).")
    elif kind == "gaussian_folds":
        if not 0 <= cfg.get("rho", 0.5) < 1:
            raise ConfigError(f"population.rho={cfg.get('rho')!r} is invalid: the between-block correlation must lie "
                              "in [0, 1).")
        if not cfg.get("sigma", 1.0) > 0:
            raise ConfigError(f"population.sigma={cfg.get('sigma')!r} is invalid: use a positive residual standard "
                              "deviation.")
    elif kind in ("gaussian_linear", "friedman1"):
        if not isinstance(cfg.get("sigma", 1.0), (int, float)) or not cfg.get("sigma", 1.0) > 0:
            raise ConfigError(f"population.sigma={cfg.get('sigma')!r} is invalid: use a positive noise standard "
                              "deviation.")
        low = 5 if kind == "friedman1" else 1
        if isinstance(cfg.get("p"), bool) or not isinstance(cfg.get("p", low), int) or cfg.get("p", low) < low:
            raise ConfigError(f"population.p={cfg.get('p')!r} is invalid: use an integer >= {low}.")
    elif kind == "tabular":
        if cfg.get("task", "classification") not in ("classification", "regression"):
            raise ConfigError(f"population.task={cfg.get('task')!r} is invalid: use 'classification' (class labels) "
                              "or 'regression' (a real-valued target).")
        if cfg.get("task") == "regression" and cfg.get("positive") is not None:
            raise ConfigError(f"population.positive={list(cfg['positive'])!r} is invalid with population.task="
                              "regression: a regression target has no classes; set population.positive=null.")
        if cfg.get("path") is None and cfg.get("source") not in ("openml", "covtype"):
            raise ConfigError(f"population.source={cfg.get('source')!r} is invalid: use 'openml' (with "
                              "population.openml_id), 'covtype', or set population.path to a local file.")
        if cfg.get("path") is None and cfg.get("source") == "openml" and cfg.get("openml_id") is None:
            raise ConfigError("population.openml_id=None is invalid: set the OpenML data id (Letter is 6) or "
                              "population.path.")
        if cfg.get("missing", "error") not in MISSING_POLICIES:
            raise ConfigError(f"population.missing={cfg.get('missing')!r} is invalid: use 'error' (refuse missing "
                              "values) or 'drop_rows' (leave out the rows with a missing feature).")
    elif kind in MECHANISM_KINDS:
        from simstudy.populations.mechanism_builders import validate_mechanism_config

        validate_mechanism_config(cfg)
    elif kind != "custom":
        from simstudy.registry import POPULATIONS

        raise ConfigError(f"population.kind={kind!r} is invalid: choose population={', '.join(POPULATIONS)} "
                          "(or population=custom with population._target_=your.Class).")


#: The values of ``population.kind`` (a preset such as ``letter`` is a kind with its fields set).
KINDS = ("logistic", "gaussian_folds", "tabular", "gaussian_linear", "friedman1", *MECHANISM_KINDS, "custom")


def expand_preset(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """A config mapping that names a preset instead of a kind, completed from that preset.

    ``{"name": "letter", "path": ...}`` and ``{"kind": "letter", "path": ...}`` both mean the
    ``letter`` preset with ``path`` overridden (as ``population=letter population.path=...`` on
    the command line). Mappings with a kind or a ``_target_`` are returned unchanged (as a dict).
    """
    cfg = dict(cfg)
    if "_target_" in cfg:
        return cfg
    from simstudy.registry import POPULATIONS

    kind = cfg.get("kind")
    name = kind if kind is not None and kind not in KINDS else (cfg.get("name") if kind is None else None)
    if name is None:
        if kind is None:
            raise ConfigError("population.kind is missing: give a kind (" + ", ".join(KINDS) + ") with its fields, "
                              "or name a preset (population='letter', or {'name': 'letter', 'path': ...}).")
        return cfg
    if not isinstance(name, str) or name not in POPULATIONS or name == "custom":
        presets = ", ".join(n for n in POPULATIONS if n not in KINDS)
        if kind is not None:
            raise ConfigError(f"population.kind={name!r} is invalid: choose a kind ({', '.join(KINDS)}) or a preset "
                              f"({presets}).")
        raise ConfigError(f"population.name={name!r} names no preset ({presets}) and population.kind is missing: "
                          f"add a kind ({', '.join(KINDS)}) with its fields.")
    overrides = {k: v for k, v in cfg.items() if k != "kind"}
    return {**POPULATIONS.preset(name, "population", "a population object"), **overrides}


def build_population(spec: Any) -> Any:
    """A population object from an object, a registered name or a config mapping.

    Parameters
    ----------
    spec : population object, str or mapping
        An object is checked and returned; a name is a registered preset
        (``"letter"``, ``"logistic"``, ...); a mapping has ``kind`` and that kind's fields
        (:mod:`simstudy.populations.configs`), or ``_target_`` and keyword arguments.

    Raises
    ------
    ConfigError, DataUnavailableError
        With the field, the value and the fix.
    """
    if isinstance(spec, str):
        from simstudy.registry import POPULATIONS

        spec = POPULATIONS.preset(spec, "population", "a population object")
    from simstudy.populations.in_memory import in_memory_population, is_in_memory

    if is_in_memory(spec):
        return in_memory_population(spec)
    if not isinstance(spec, Mapping) and not hasattr(spec, "items"):
        check_population(spec)
        return spec
    cfg = typed_population_config(expand_preset(spec))
    if "_target_" in cfg:
        cfg["kind"] = "custom"
    validate_population_config(cfg)
    from simstudy.registry import POPULATIONS

    population = POPULATIONS[cfg["kind"]].load()(cfg)
    check_population(population)
    if cfg.get("label_noise") is not None:
        from simstudy.populations.noise import LabelNoisePopulation

        try:
            population = LabelNoisePopulation(population, cfg["label_noise"], cfg.get("noise_truth", "clean"))
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    return population


#: Keys every population mapping may carry besides its kind's fields.
COMMON_KEYS = ("kind", "name", "label_noise", "noise_truth")


def _refuse_unknown_keys(cfg: Mapping[str, Any], kind: Any) -> None:
    """A key that is not a field of the kind's config schema (a misspelling) or a value of the wrong
    type is refused, as Hydra refuses it on the command line."""
    typed_population_config(cfg, kind)


def typed_population_config(cfg: Mapping[str, Any], kind: Any = None) -> dict[str, Any]:
    """A population mapping checked against its kind's schema (unknown keys with the nearest valid
    name, values of the wrong type), converted to the fields' types and completed with the schema's
    defaults, as the command line composes it. Mappings of other kinds are returned as given."""
    import dataclasses

    from simstudy.registry import POPULATIONS
    from simstudy.schema import typed_settings

    kind = cfg.get("kind") if kind is None else kind
    if not isinstance(kind, str) or kind not in POPULATIONS or "_target_" in cfg:
        return dict(cfg)
    schema = POPULATIONS[kind].load_config()
    if not dataclasses.is_dataclass(schema):
        return dict(cfg)
    values = typed_settings(schema, cfg, "population", f"population kind {kind!r}", extra=COMMON_KEYS)
    noise = {k: values[k] for k in ("label_noise", "noise_truth") if k in values}
    values.update(typed_settings(LabelNoiseFields, noise, "population", "label noise"))
    # the kind's schema defaults, not a preset's values (a preset is chosen by name, see expand_preset)
    blank = type(schema)() if not isinstance(schema, type) else schema()
    defaults = {f.name: getattr(blank, f.name) for f in dataclasses.fields(blank) if f.name not in values}
    return {**{k: v for k, v in defaults.items() if v != "???"}, **values}


def _validate_noise(cfg: Mapping[str, Any]) -> None:
    """The label-noise fields (a transform of any classification population)."""
    eta = cfg.get("label_noise")
    if eta is not None and (isinstance(eta, bool) or not isinstance(eta, (int, float)) or not 0 <= eta < 1):
        raise ConfigError(f"population.label_noise={eta!r} is invalid: the flip probability must lie in [0, 1) "
                          "(null: no label noise).")
    if cfg.get("noise_truth", "clean") not in ("clean", "noisy"):
        raise ConfigError(f"population.noise_truth={cfg.get('noise_truth')!r} is invalid: use 'clean' (risk on the "
                          "true labels) or 'noisy' (risk on labels flipped like the training labels).")
