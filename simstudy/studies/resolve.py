"""From what a user names to a study: the Study class of a registered name, import path, class or
instance (:func:`resolve_study`), and its validated config dataclass (:func:`make_config`)."""
from __future__ import annotations

from typing import Any, Mapping

from simstudy.errors import ConfigError
from simstudy.registry import STUDIES, import_path
from simstudy.studies.base import Study, StudyConfig

__all__ = ["make_config", "resolve_study"]


def resolve_study(study: Any) -> type[Study]:
    """The Study class for a registered name, an import path, a Study subclass or instance."""
    if isinstance(study, Study):
        return type(study)
    if isinstance(study, type) and issubclass(study, Study):
        return study
    if isinstance(study, str):
        if study in STUDIES:
            try:
                return STUDIES[study].load()
            except (ImportError, AttributeError) as exc:
                raise ConfigError(f"study={study!r} is invalid: its implementation {STUDIES[study].target!r} cannot "
                                  f"be imported ({type(exc).__name__}: {exc}); fix the target it was registered "
                                  "with.") from None
        if "." in study or ":" in study:
            try:
                cls = import_path(study)
            except (ImportError, AttributeError, ValueError) as exc:
                raise ConfigError(f"study._target_={study!r} is invalid: cannot import it ({type(exc).__name__}: "
                                  f"{exc}).") from None
            if isinstance(cls, type) and issubclass(cls, Study):
                return cls
            raise ConfigError(f"study._target_={study!r} is invalid: it is not a subclass of "
                              "simstudy.studies.base.Study.")
        raise ConfigError(f"study={study!r} is invalid: choose one of {', '.join(STUDIES)}, or give the import path "
                          "of your Study class.")
    raise ConfigError(f"study={study!r} is invalid: give a study name, a Study subclass or its import path.")


def make_config(study: type[Study], params: Mapping[str, Any]) -> StudyConfig:
    """The study's config dataclass from ``params`` (unknown keys refused), validated."""
    from simstudy.schema import typed_settings

    params = {k: v for k, v in params.items() if k not in ("_target_",)}
    params = typed_settings(study.Config, params, "study", f"study {study.name!r}")
    params.setdefault("name", study.name)
    if params["name"] != study.name:
        params["name"] = study.name
    config = study.Config(**params)
    config.validate()
    return config
