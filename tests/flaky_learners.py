"""Learners that misbehave on purpose (importable by Hydra's instantiate in the tests)."""
import warnings

from sklearn.tree import DecisionTreeClassifier


class FlakyTree(DecisionTreeClassifier):
    """Raises on some training sets of 18 (those with a large sum of the first feature: about
    30% of the replicates at n = 20, whose 10 training folds overlap heavily)."""

    def fit(self, X, y, **kwargs):
        if len(y) == 18 and X[:, 0].sum() > 2.3:
            raise RuntimeError("flaky fit")
        return super().fit(X, y, **kwargs)


class WarningTree(DecisionTreeClassifier):
    """Warns at every fit."""

    def fit(self, X, y, **kwargs):
        warnings.warn("this tree always warns", UserWarning)
        return super().fit(X, y, **kwargs)


class GatedTree(DecisionTreeClassifier):
    """A tree whose every fit first sleeps the number of seconds written in the file named by the
    environment variable SIMSTUDY_TEST_GATE, while that file exists: a run that is slow while the
    test needs to catch it running, and fast (same records) once the file is removed."""

    def fit(self, X, y, **kwargs):
        import os
        import time

        gate = os.environ.get("SIMSTUDY_TEST_GATE")
        if gate:
            try:
                with open(gate) as fh:
                    time.sleep(float(fh.read() or 0))
            except FileNotFoundError:
                pass
        return super().fit(X, y, **kwargs)


class DyingTree(DecisionTreeClassifier):
    """Kills the worker process that fits it (SIGKILL, as the system's out-of-memory killer would);
    in the run's main process (an in-process run) it is an ordinary tree."""

    def fit(self, X, y, **kwargs):
        import os
        import signal

        if os.environ.get("SIMSTUDY_MAIN_PID") not in (None, str(os.getpid())):
            os.kill(os.getpid(), signal.SIGKILL)
        return super().fit(X, y, **kwargs)
