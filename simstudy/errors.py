"""The errors a user can cause, each with a message that names the field, the value and the fix.

The command-line front ends print the message of a :class:`UserError` as one paragraph and exit
with status 2; anything else is a bug and keeps its traceback.
"""
from __future__ import annotations

__all__ = ["UserError", "ConfigError", "DataUnavailableError", "RunDirectoryError", "ReplicateFailed",
           "FailureRateExceeded", "PartOutputError"]


class UserError(Exception):
    """Something the user can fix (bad input, a busy run directory, missing data)."""


class ConfigError(UserError, ValueError):
    """A configuration value is invalid; the message names the field, the value and the fix."""


class DataUnavailableError(UserError, RuntimeError):
    """The data set could not be loaded (missing file, no network for a download, ...)."""


class RunDirectoryError(UserError):
    """The run directory cannot be used: another process holds it, or it holds something else."""


class FailureRateExceeded(UserError, RuntimeError):
    """Too many replicates failed; the message shows one failure and how to reproduce it."""


class WorkerLost(UserError, RuntimeError):
    """A worker process died while it computed a chunk (killed for memory, a crash in compiled
    code); the message says which chunk and how to resume."""


class ReplicateFailed(UserError, RuntimeError):
    """A replicate raised with ``runner.on_error=raise``: names the study, condition and replicate.

    The original exception is the ``__cause__``.
    """

    def __init__(self, study: str, condition: str, replicate: int, exc: BaseException):
        self.study, self.condition, self.replicate, self.original = study, condition, replicate, exc
        super().__init__(f"{study}: replicate {replicate} of condition ({condition}) failed with "
                         f"{type(exc).__name__}: {exc}")


class PartOutputError(UserError, ValueError):
    """A user's part (a population's sample, a learner's predictions, a loss's values) returned
    something the engine cannot use; the message names the part, what it returned and what it must
    return. Raised inside a replicate, it fails that replicate (recorded); raised on a probe before
    the run, it stops the run."""
