"""Shared fixtures: paths, small data files, config composition."""
from __future__ import annotations

import logging
import os
import signal
import string
from pathlib import Path

# One BLAS thread in the suite's process and in every process it starts (they inherit the variable):
# the suite runs its tests' workers side by side on few cores, and BLAS threads over the small
# matrices of the tests only contend with them (a loaded machine makes each small fit many times
# slower).
os.environ["OPENBLAS_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402  (after the thread setting, which OpenBLAS reads when it loads)
import pytest  # noqa: E402
from hydra import compose, initialize_config_module  # noqa: E402
from hydra.core.global_hydra import GlobalHydra  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from simstudy.cli.hydra import register_configs  # noqa: E402
from simstudy.errors import ConfigError  # noqa: E402, F401  (re-exported for the tests)

threadpool_limits(1, user_api="blas")  # also if a plugin loaded OpenBLAS before this file

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
LETTER_FILE = SHARED / "data" / "letter-recognition.data"


_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

# The suite tests what a terminal user gets: Ctrl-C, SIGHUP and SIGTERM at their defaults. A suite
# started in the background of a script (SIGINT ignored) or under nohup (SIGHUP ignored) would
# otherwise pass those ignored dispositions on to every command it starts, which rightly keeps them.
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGHUP, signal.SIG_DFL)
signal.signal(signal.SIGTERM, signal.SIG_DFL)


@pytest.fixture(autouse=True)
def _restore_process_state():
    """Each test leaves the root logger and the signal handlers as it found them: a command run
    in-process (its console handler bound to that test's captured stdout, its signal handlers)
    must not change what a later test or a subprocess it starts (inherited dispositions) sees."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    dispositions = {s: signal.getsignal(s) for s in _SIGNALS}
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for s, handler in dispositions.items():
        if signal.getsignal(s) is not handler and handler is not None:
            signal.signal(s, handler)


@pytest.fixture(autouse=True)
def _close_figures():
    """Figures a test asks for (``result.figures()`` hands them to the caller, as pyplot does) are closed after
    it, so that one xdist worker running a whole file does not pile them up."""
    yield
    import sys

    if "matplotlib.pyplot" in sys.modules:   # a test that never drew imports nothing here
        sys.modules["matplotlib.pyplot"].close("all")


def make_letter_like(rows: int = 400, seed: int = 0):
    """Small Letter-like data: 16 integer features 0..15, class letters A..Z."""
    rng = np.random.default_rng(seed)
    letters = np.array(list(string.ascii_uppercase))
    y = letters[rng.integers(0, 26, rows)]
    X = rng.integers(0, 16, (rows, 16))
    X[:, 0] = np.searchsorted(letters, y) % 16  # some signal
    return X, y


@pytest.fixture
def letter_like_file(tmp_path):
    """A UCI-style file (class first, no header) of Letter-like rows."""
    X, y = make_letter_like()
    path = tmp_path / "letter-like.data"
    path.write_text("\n".join(",".join([c] + [str(v) for v in row]) for c, row in zip(y, X)) + "\n")
    return path, X, y


@pytest.fixture
def compose_config():
    """Compose the Hydra config with overrides, as the CLI does."""
    register_configs()

    def _compose(*overrides):
        GlobalHydra.instance().clear()
        with initialize_config_module(config_module="simstudy.conf", version_base="1.3"):
            return compose(config_name="config", overrides=list(overrides))

    yield _compose
    GlobalHydra.instance().clear()


def validate(cfg):
    """Everything the CLI checks before a run starts: the fields (no data loaded), then the parts
    (population, learner, loss) and the study's own checks. Returns the study instance."""
    from simstudy.cli.hydra import plan_from_config
    from simstudy.engine.plan import build

    return build(plan_from_config(cfg))


def run_config(cfg, out, command: str = "simstudy"):
    """Run a composed config into ``out`` as the CLI does; returns the StudyResult."""
    from simstudy.cli.hydra import plan_from_config
    from simstudy.engine.execution import execute
    from simstudy.engine.rundir import RunDirectory

    # the command's directory names its flags (hydra.run.dir, runner.overwrite=true)
    return execute(plan_from_config(cfg, command), None if out is None else RunDirectory(out))
