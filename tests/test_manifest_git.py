"""The manifest's git state: commit, dirty flag (code only, not committed results or the run's own
files), modified paths; and a run records it from before it writes anything."""
import subprocess

import pytest

from simstudy.engine.manifest import environment_info, git_state


def _git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(repo), "PATH": "/usr/bin:/bin"})


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "code.py").write_text("x = 1\n")
    (tmp_path / "results" / "run").mkdir(parents=True)
    (tmp_path / "results" / "run" / "cli.log").write_text("old\n")
    (tmp_path / "runs" / "mine").mkdir(parents=True)
    (tmp_path / "runs" / "mine" / "cli.log").write_text("old\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "init")
    return tmp_path


def test_clean_checkout(repo):
    state = git_state(where=repo / "pkg")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    assert state.commit == head and state.dirty is False and state.label == head and state.modified == ()


def test_rewritten_results_and_own_run_directory_are_not_dirty(repo):
    (repo / "results" / "run" / "cli.log").write_text("new\n")
    (repo / "runs" / "mine" / "cli.log").write_text("new\n")
    (repo / "untracked.py").write_text("y = 2\n")
    state = git_state(exclude=repo / "runs" / "mine", where=repo / "pkg")
    assert state.dirty is False and set(state.modified) == {"results/run/cli.log", "runs/mine/cli.log"}
    assert git_state(where=repo / "pkg").dirty is True             # another run's directory does count


def test_modified_code_is_dirty(repo):
    (repo / "pkg" / "code.py").write_text("x = 2\n")
    state = git_state(where=repo / "pkg")
    assert state.dirty is True and state.label.endswith("-dirty") and state.modified == ("pkg/code.py",)
    _git(repo, "add", "pkg/code.py")                                 # staged counts too
    assert git_state(where=repo / "pkg").dirty is True


def test_outside_git(tmp_path):
    state = git_state(where=tmp_path)
    assert state.commit is None and state.dirty is None and state.label is None


def test_environment_info_fields():
    env = environment_info()
    assert {"git_commit", "git_dirty", "git_modified"} <= set(env)
