"""What a run directory admits: a run's identity (:class:`RunIdentity`) and the rules that compare
it with what the directory recorded (:func:`admission`, :func:`refusal`; see
:mod:`simstudy.engine.rundir`, which applies them when a run claims the directory)."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FINGERPRINTS_FILE", "RunIdentity", "admission", "identity_digest", "refusal"]

#: The data fingerprints of a run that reads data sets (:attr:`RunIdentity.data`), written at every
#: claim: what the records were computed on, kept apart from ``run_state.json`` so that losing that
#: file, or bringing back an older one, does not lose them.
FINGERPRINTS_FILE = "data_fingerprints.json"


def identity_digest(content: Any) -> str:
    """The identity hash of ``content`` (:attr:`RunIdentity.hash`): SHA-256 of its sorted JSON."""
    return hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class RunIdentity:
    """What a run directory's records depend on.

    Attributes
    ----------
    study : str
    hash : str
        Hash of ``content`` (see the module docstring).
    subjects : dict
        Subject name -> hash of its specification.
    content : dict
        What was hashed (kept in ``run_state.json`` so that a refusal can say what changed).
    data : dict
        Data set name -> fingerprint of its contents (:meth:`simstudy.Study.data_fingerprints`).
    locations : dict
        The study's ``location`` fields (name -> value, e.g. the benchmark's data paths): not in
        ``content``; the data's fingerprints (``data``) stand for them.
    legacy_hash : str or None
        The hash of ``content`` with the location fields in it, as identities were hashed before
        those fields had a role of their own; None for a study without location fields.
    """

    study: str
    hash: str
    subjects: dict[str, str] = field(default_factory=dict)
    content: dict[str, Any] = field(default_factory=dict)
    data: dict[str, str] = field(default_factory=dict)
    locations: dict[str, Any] = field(default_factory=dict)
    legacy_hash: str | None = None


def _changed_keys(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    keys = []
    for k in sorted(set(old) | set(new)):
        a, b = old.get(k), new.get(k)
        if isinstance(a, dict) and isinstance(b, dict):
            keys += _changed_keys(a, b, f"{prefix}{k}.")
        elif a != b:
            keys.append(f"{prefix}{k}")
    return keys


def admission(state: dict[str, Any], identity: RunIdentity) -> tuple[str, dict[str, Any]] | None:
    """(hash, identity content to record) under which the directory's records are ``identity``'s,
    or None when they are not. Hashes decide, never a comparison of values (1 == 1.0):

    - the directory's hash is the identity's;
    - it is the identity's :attr:`~RunIdentity.legacy_hash`: recorded while the location fields
      were hashed, with the same values (paths) as now; the run goes on under that hash and
      keeps recording the content in that form;
    - it was recorded so, the content it recorded hashes to it, that content without the
      location fields hashes to the identity's hash, and the directory has recorded the
      fingerprint of every data set the identity reads since (``data``): the same configuration
      with its data read elsewhere (the fingerprints are compared by :func:`refusal`).
    """
    recorded = state.get("identity_hash")
    if not recorded or ("recovered" not in state and state.get("study") != identity.study):
        return None
    if recorded == identity.hash:
        return recorded, identity.content
    with_locations = {**identity.content, "study": {**identity.content.get("study", {}), **identity.locations}}
    if identity.legacy_hash is not None and recorded == identity.legacy_hash:
        return recorded, with_locations
    content = state.get("identity")
    study = content.get("study") if isinstance(content, dict) else None
    if ("recovered" in state or not identity.locations or not isinstance(study, dict)
            or not any(name in study for name in identity.locations) or identity_digest(content) != recorded
            or any(name not in state.get("data", {}) for name in identity.data)):
        return None  # every data set it reads must have been recorded by its contents since
    moved = {**content, "study": {k: v for k, v in study.items() if k not in identity.locations}}
    return (recorded, content) if identity_digest(moved) == identity.hash else None


def refusal(state: dict[str, Any], identity: RunIdentity, where: str) -> str:
    """Why ``state`` (what a directory recorded) does not admit ``identity``; "" when it does. ``where``
    names the directory as the user gave it (e.g. ``out='runs/x'``)."""
    if state.get("fingerprint_clash"):
        return (f"{where}: run_state.json and {FINGERPRINTS_FILE} name other contents for "
                f"{', '.join(state['fingerprint_clash'])}; one of them was edited or brought back from elsewhere "
                "(restore both from the same moment)")
    admitted = admission(state, identity)
    if "recovered" in state and admitted is None:
        return (f"{where}: its {state['recovered']}, and its manifest and shards were "
                f"written by identity {state['identity_hash']}, not this run's {identity.hash}")
    if "recovered" in state and admitted[0] == identity.hash and identity.locations and "data" not in state:
        # the hash does not name the data (location fields): without their fingerprints other rows could join
        return (f"{where}: its {state['recovered']}, and so is {FINGERPRINTS_FILE}, which named the data "
                "its records were computed on: other data could be mixed in")
    if admitted is None:
        recorded = state.get("identity")
        recorded = recorded if isinstance(recorded, dict) else {}
        content = identity.content
        fingerprinted = all(name in state.get("data", {}) for name in identity.data)
        if isinstance(recorded.get("study"), dict) and any(name in recorded["study"] for name in identity.locations):
            if fingerprinted:  # recorded with its paths, which its fingerprints have replaced since
                recorded = {**recorded, "study": {k: v for k, v in recorded["study"].items()
                                                  if k not in identity.locations}}
            else:  # recorded with its paths, which still say what its data are
                content = {**content, "study": {**content.get("study", {}), **identity.locations}}
        changed = _changed_keys(recorded, content) if "identity" in state else []
        what = f" (changed: {', '.join(changed[:8])})" if changed else ""
        why = (f"{where} holds a run of a different configuration{what}: identity "
               f"{state.get('identity_hash', state.get('study_config_hash'))} there, {identity.hash} now")
        if changed and not fingerprinted and all(
                key.split(".")[:2] in (["study", name] for name in identity.locations) for key in changed):
            paths = {f"study.{name}": recorded["study"].get(name) for name in identity.locations}
            why += (f". It was written before its data's fingerprints were recorded, so its data are the files "
                    f"at the recorded paths ({paths}): run it once with those, and then the same rows "
                    "may come from any path")
        return why
    for name, digest in identity.subjects.items():
        old = state.get("subjects", {}).get(name)
        if old is not None and old != digest:
            return (f"{where} holds subject {name!r} with other settings "
                    f"({old} there, {digest} now)")
    for name, digest in identity.data.items():
        old = state.get("data", {}).get(name)
        if old is not None and old != digest:
            return (f"{where} holds records of {name!r} computed on other data "
                    f"(fingerprint {old[:12]} there, {digest[:12]} now): give it the same data")
    return ""
