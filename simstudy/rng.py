"""Seed derivation: every replicate of every condition has its own reproducible stream.

Replicate r of a condition gets ``SeedSequence(entropy=study_seed,
spawn_key=(*condition_words, r))`` where ``condition_words`` are four 32-bit words of a
BLAKE2b hash of the condition's parameters (canonical JSON). The stream therefore depends
only on (study seed, condition parameters, replicate index): not on n_jobs, chunk size,
backend, the order of conditions in a sweep, or which other conditions run.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

import numpy as np

__all__ = ["condition_key", "condition_words", "replicate_rng", "replicate_seed_sequence"]


def _canonical(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {str(k): _canonical(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        return [_canonical(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    return obj


def condition_key(params: Mapping[str, Any]) -> str:
    """Stable hexadecimal digest (32 hex chars) of a condition's parameters.

    Parameters
    ----------
    params : mapping
        JSON-serialisable parameters that define the condition (for example
        ``{"study": "cv_variance", "n": 20, "K": 10, "population": {...}}``). Key order does
        not matter.
    """
    text = json.dumps(_canonical(params), sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def condition_words(key: str) -> tuple[int, int, int, int]:
    """The four 32-bit words of a :func:`condition_key` digest."""
    return tuple(int(key[i : i + 8], 16) for i in range(0, 32, 8))  # type: ignore[return-value]


def replicate_seed_sequence(seed: int, key: str, replicate: int) -> np.random.SeedSequence:
    """The SeedSequence of replicate ``replicate`` of the condition with digest ``key``."""
    if replicate < 0:
        raise ValueError(f"replicate index must be >= 0; got {replicate}.")
    return np.random.SeedSequence(entropy=int(seed), spawn_key=(*condition_words(key), int(replicate)))


def replicate_rng(seed: int, key: str, replicate: int) -> np.random.Generator:
    """A PCG64 generator for one replicate (see module docstring)."""
    return np.random.Generator(np.random.PCG64(replicate_seed_sequence(seed, key, replicate)))
