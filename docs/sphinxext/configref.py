"""The configuration reference, generated from the registry and the config dataclasses.

Every registered study, population and learner, and every runner preset, with every field of
its config: type, default, role and one line of meaning. The meaning is the field's ``#:``
comment in its dataclass (read the way autodoc reads it); the few fields without one get a line
from :data:`MEANINGS` below. Nothing here is typed by hand twice, so the page cannot drift from
the code; ``tests/test_docs.py`` checks the built page against the registry.
"""
from __future__ import annotations

import dataclasses
import typing
from typing import Any, Iterable

__all__ = ["Part", "Row", "parts", "configuration_rst", "MEANINGS"]

#: One line for the fields whose dataclass gives no ``#:`` comment, by ``Class.field`` first,
#: then by field name.
MEANINGS = {
    "name": "Name of the part (what config.yaml and the reports call it).",
    "kind": "The population kind this preset is an instance of.",
    "K": "Number of folds of the K-fold cross-validation.",
    "replicates": "Monte Carlo replicates (training sets drawn) per condition.",
    "seed": "Base seed: with the condition and the replicate index it fixes every random stream.",
    "sizes": "Training-set sizes n.",
    "alpha": "Level of the tests (intervals have confidence 1 - alpha).",
    "estimator": "The scikit-learn estimator: _target_ (its import path) and its parameters.",
    "p": "Number of features.",
    "sigma": "Standard deviation of the noise.",
    "correlation": "Correlation of neighbouring features: Sigma_ij = correlation^|i-j|.",
    "openml_id": "OpenML data set id (source openml).",
    "path": "Local data file (CSV or whitespace-separated, .gz accepted); sets the source to file.",
    "delimiter": "Column delimiter of the file (null: comma or whitespace, detected).",
    "header": "Whether the file's first line is a header: auto, true or false.",
    "rho": "Between-block correlation of the fold means (Grandvalet & Bengio's rho).",
    "mean": "Expected residual mu (the null value of the t-tests).",
    "GaussianFoldsPopulationConfig.sigma": "Standard deviation of one residual.",
    "cells": "Number of cells of the histogram classifier's feature space.",
    "sample_size": "Training-sample size N.",
    "rhat_calibration_replicates": "Samples per family member when an oracle R_hat is calibrated.",
    "_target_": "Import path of your own class (package.module.Class).",
}

ROLES = {
    "record": "record: part of the run's identity; another value is another study",
    "extent": "extent: how much is computed; a larger value extends a run",
    "report": "report: changes only the tables; re-aggregated without recomputing",
    "prefix": "prefix: the leading replicates that get extra work; lowering it changes no record",
    "location": "location: where data is read from; the run is tied to the data's contents, not the path",
}


@dataclasses.dataclass
class Row:
    """One field: name, type, default, role and meaning."""

    name: str
    type: str
    default: str
    role: str
    meaning: str


@dataclasses.dataclass
class Part:
    """One registered part (or runner preset) with its fields."""

    group: str
    name: str
    description: str
    schema: str
    rows: list[Row]


def _attribute_docs(cls: type) -> dict[str, str]:
    """``#:`` comments of the dataclass fields of ``cls`` and its bases."""
    from sphinx.pycode import ModuleAnalyzer

    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass is object:
            continue
        try:
            docs = ModuleAnalyzer.for_module(klass.__module__).find_attr_docs()
        except Exception:  # a class defined where no source is available: MEANINGS covers it
            continue
        for (scope, name), lines in docs.items():
            if scope == klass.__qualname__:
                out[name] = " ".join(line.strip() for line in lines if line.strip())
    return out


def _type_name(annotation: Any) -> str:
    text = annotation if isinstance(annotation, str) else typing._type_repr(annotation)  # type: ignore[attr-defined]
    text = text.replace("typing.", "")
    if text.startswith("Optional[") and text.endswith("]"):
        return f"{text[9:-1]} or null"
    return text


def _default(field: dataclasses.Field, instance: Any) -> Any:
    if instance is not None:
        return getattr(instance, field.name)
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        return field.default_factory()  # type: ignore[misc]
    return "(required)"


def _show(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value == "???":
        return "(required)"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_show(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return str(value)


def meaning(cls_name: str, field_name: str, docs: dict[str, str]) -> str:
    """The field's ``#:`` comment, else its line in :data:`MEANINGS` ("" when neither exists)."""
    return docs.get(field_name) or MEANINGS.get(f"{cls_name}.{field_name}") or MEANINGS.get(field_name, "")


def _rows(config: Any, role_of: Any) -> tuple[str, list[Row]]:
    if isinstance(config, dict):  # a user's own part: a mapping with _target_
        return "mapping", [Row(k, "str", _show(v), role_of(None), meaning("", k, {})) for k, v in config.items()]
    cls = config if isinstance(config, type) else type(config)
    instance = None if isinstance(config, type) else config
    docs = _attribute_docs(cls)
    hints = {f.name: f.type for f in dataclasses.fields(cls)}
    rows = []
    for f in dataclasses.fields(cls):
        default = _default(f, instance)
        if dataclasses.is_dataclass(default):  # a group of fields (a study's targets): its row, then one per field
            _, inner = _rows(default, lambda _: role_of(f))
            rows.append(Row(f.name, "group", "(fields below)", role_of(f), meaning(cls.__name__, f.name, docs)))
            rows += [Row(f"{f.name}.{r.name}", r.type, r.default, r.role, r.meaning) for r in inner]
            continue
        rows.append(Row(f.name, _type_name(hints[f.name]), _show(default), role_of(f), meaning(cls.__name__, f.name,
                                                                                                 docs)))
    return f"{cls.__module__}.{cls.__qualname__}", rows


def parts() -> list[Part]:
    """Every registered study, population, learner and runner preset with its fields."""
    from hydra.core.config_store import ConfigStore

    from simstudy.cli.hydra import register_configs
    from simstudy.engine.config import RunnerConfig
    from simstudy.registry import LEARNERS, POPULATIONS, STUDIES
    from simstudy.studies.settings import RECORD, ROLE

    out: list[Part] = []
    for registry, group, role_of in (
            (STUDIES, "study", lambda f: f.metadata.get(ROLE, RECORD) if f is not None else RECORD),
            (POPULATIONS, "population", lambda f: RECORD),
            (LEARNERS, "learner", lambda f: RECORD)):
        for name, entry in registry.items():
            schema, rows = _rows(entry.load_config(), role_of)
            out.append(Part(group, name, entry.description, schema, rows))
    register_configs()
    runners = ConfigStore.instance().repo["runner"]
    for file_name in sorted(runners, key=lambda n: (n != "default.yaml", n)):
        node = runners[file_name].node
        preset = RunnerConfig(**{f.name: node[f.name] for f in dataclasses.fields(RunnerConfig)})
        schema, rows = _rows(preset, lambda f: "none")
        backend = preset.backend
        out.append(Part("runner", file_name.removesuffix(".yaml"), f"backend {backend}, n_jobs {preset.n_jobs}",
                        schema, rows))
    return out


def _cell(text: str) -> str:
    return text.replace("\n", " ").replace("|", "\\|").strip() or " "


def _table(rows: Iterable[Row]) -> list[str]:
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 14 14 14 9 49", "   :class: config-table", "",
             "   * - field", "     - type", "     - default", "     - role", "     - meaning"]
    for row in rows:
        lines += [f"   * - ``{row.name}``", f"     - {_cell(row.type)}", f"     - ``{_cell(row.default)}``"
                  if row.default.strip() else "     - ", f"     - {row.role}", f"     - {_cell(row.meaning)}"]
    return lines + [""]


_GROUPS = (
    ("study", "Studies", "``study=NAME``; fields as ``study.FIELD=value`` (keyword arguments of "
     ":func:`simstudy.run_study`)."),
    ("population", "Populations", "``population=NAME``; fields as ``population.FIELD=value`` (or a mapping "
     "with ``kind`` in Python). Every field is part of the run's identity, through the population's "
     "parameters or, for data files, the SHA-256 of the data (so moving a file changes nothing)."),
    ("learner", "Learners", "``learner=NAME``; fields as ``learner.FIELD=value``, estimator parameters as "
     "``+learner.estimator.PARAM=value``. The learner (estimator class, parameters, engine) is part of the "
     "run's identity."),
    ("runner", "Runners", "``runner=NAME``; fields as ``runner.FIELD=value`` (keyword arguments "
     "``n_jobs``, ``progress``... or ``runner={...}`` in Python). Runner settings never change a number, "
     "so they have no role in the run's identity."),
)


def configuration_rst() -> str:
    """The reference as reStructuredText (included by ``docs/configuration.rst``)."""
    all_parts = parts()
    lines: list[str] = []
    for group, title, intro in _GROUPS:
        members = [p for p in all_parts if p.group == group]
        lines += [title, "-" * len(title), "", intro, ""]
        if group == "study":
            lines += ["Roles: " + "; ".join(ROLES.values()) + ".", ""]
        for part in members:
            heading = f"{group}={part.name}"
            lines += [f".. _config-{group}-{part.name}:", "", heading, "~" * len(heading), "",
                      f"{part.description or '(no description)'}", "", f"Schema: ``{part.schema}``.", ""]
            lines += _table(part.rows)
    return "\n".join(lines) + "\n"
