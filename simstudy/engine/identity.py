"""What a run's records depend on: its identity (:func:`run_identity`, see :mod:`simstudy.engine.rundir`)
and the configuration as recorded in ``config.yaml`` (:func:`resolved_config`)."""
from __future__ import annotations

import dataclasses
import json
from typing import Any, Mapping


from simstudy.engine.plan import RunPlan
from simstudy.engine.admission import RunIdentity, identity_digest
from simstudy.populations.io.fingerprint import population_fingerprint
from simstudy.studies.base import Study, describe_part

__all__ = ["resolved_config", "run_identity"]


def run_identity(study: Study) -> RunIdentity:
    """What the records of ``study`` depend on (see :mod:`simstudy.engine.rundir`)."""
    config = study.config.as_dict()
    content: dict[str, Any] = {"study": {k: config[k] for k in study.Config.field_names("record")}}
    if study.population is not None:
        content["population"] = {**study.population.seed_params(), "data": population_fingerprint(study.population)}
    if study.learner is not None:
        content["learner"] = _describe(study.learner)
    if study.loss is not None:
        content["loss"] = study.loss.describe()
    subjects = {name: identity_digest(spec) for name, spec in study.subjects().items()}
    data = {str(name): str(digest) for name, digest in study.data_fingerprints().items()}
    locations = {name: config[name] for name in study.Config.field_names("location")}
    # as identities were hashed while the location fields were record fields (a directory of then keeps its hash)
    legacy = identity_digest({**content, "study": {**content["study"], **locations}}) if locations else None
    return RunIdentity(study.name, identity_digest(content), subjects, json.loads(json.dumps(content, default=str)), data,
                       json.loads(json.dumps(locations, default=str)), legacy)


def _describe(part: Any) -> dict[str, Any]:
    return describe_part(part)


def _study_target(study: Study) -> dict[str, str]:
    """``{"_target_": import path}`` for a study class that its name does not resolve to (a user's
    class), so that :func:`simstudy.load_run` can read its run directory; else nothing."""
    from simstudy.registry import STUDIES

    cls = type(study)
    entry = STUDIES.get(study.name) if hasattr(STUDIES, "get") else None
    if entry is not None and entry.load() is cls:
        return {}
    return {"_target_": f"{cls.__module__}.{cls.__qualname__}"}


def resolved_config(study: Study, plan: RunPlan) -> dict[str, Any]:
    """The configuration as recorded in ``config.yaml``: the study's settings, the parts it used
    (their config, or a description of a part given as an object), the runner."""
    out: dict[str, Any] = {"study": {**_study_target(study), **study.config.as_dict()}}
    for part in ("population", "learner"):
        obj = getattr(study, part)
        if obj is None:
            continue
        given = getattr(plan, part)
        if isinstance(given, Mapping) or hasattr(given, "items"):
            out[part] = json.loads(json.dumps(dict(given), default=str))
        elif isinstance(given, str):
            out[part] = {"preset": given, **_describe(obj)}
        else:
            out[part] = _describe(obj)
    runner = dataclasses.asdict(plan.runner)
    runner.pop("command", None)
    out["runner"] = runner
    return out
