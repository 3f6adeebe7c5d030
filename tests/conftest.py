"""Shared test configuration: hypothesis bounds, the opt-in for long runs, the temporary root."""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests.support.project import compile_bytecode

# The suite stays fast and draws from a fixed seed. The examples are not quite the same on every
# run: Hypothesis mixes in constants read from the source of the local modules loaded so far
# (about one draw in twenty), and what a worker has loaded depends on the files it ran before.
# So a failure prints its `@reproduce_failure` line, which replays that case anywhere.
# `--hypothesis-profile=long` (or `--run-slow` for the marked fuzz tests) runs far more
# examples, drawn at random, to find new ones.
settings.register_profile(
    "default",
    max_examples=200,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "long",
    max_examples=20_000,
    deadline=None,
    print_blob=True,
    suppress_health_check=list(HealthCheck),
)
settings.load_profile("default")


class ReadableTempPaths:
    """pytest's temporary-directory factory, making directories readable like a checkout.

    A root caller's sandboxed runs (dry runs, a live tree's import) execute as the sandbox's own
    uid, which reads only what every user may; pytest makes its temporary dirs 0700.
    """

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self._factory = factory

    def mktemp(self, basename: str, numbered: bool = True) -> Path:
        path = self._factory.mktemp(basename, numbered)
        path.chmod(0o755)
        return path

    def __getattr__(self, name: str) -> Any:
        return getattr(self._factory, name)


@pytest.fixture(scope="session")
def tmp_path_factory(tmp_path_factory: pytest.TempPathFactory) -> ReadableTempPaths:
    return ReadableTempPaths(tmp_path_factory)


@pytest.fixture
def tmp_path(tmp_path: Path) -> Path:
    """pytest's temporary directory, readable like a checkout (see :class:`ReadableTempPaths`)."""
    tmp_path.chmod(0o755)
    return tmp_path


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow", action="store_true", help="Run the tests marked slow (long fuzzing)."
    )


_OWN_BASETEMP = pytest.StashKey[Path]()


def pytest_configure(config: pytest.Config) -> None:
    """As root, keep this session's temporary dirs out of ``/tmp/pytest-of-root``.

    A root caller's dry runs execute as a uid of their own, which must walk to the test's
    project (``tests/support/runuid.py`` opens the way). Every pytest session that starts on
    the machine sets ``/tmp/pytest-of-root`` back to 0700, so a session started by anyone
    else meanwhile would close it again under a running test: a folder of this session's
    own cannot be.
    """
    if os.geteuid() != 0 or config.option.basetemp or hasattr(config, "workerinput"):
        return
    own = Path(tempfile.mkdtemp(prefix=_PREFIX))
    # Held for the session: a folder whose lock can be taken belongs to no live session.
    _HELD.append(os.open(own, os.O_RDONLY | os.O_DIRECTORY))
    fcntl.flock(_HELD[-1], fcntl.LOCK_EX)
    config.stash[_OWN_BASETEMP] = own
    config.option.basetemp = str(own / "basetemp")
    _prune(own.parent)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile what the suite's ``exampleguard`` processes import from this checkout, once.

    See :func:`tests.support.project.compile_bytecode`.
    """
    if hasattr(session.config, "workerinput"):
        return  # the controller did, before its workers started
    compile_bytecode()


_PREFIX = "exampleguard-tests-"
_KEPT = 3
_HELD: list[int] = []


def _prune(temp: Path) -> None:
    """Remove the folders of finished sessions but the newest three, as pytest keeps its own."""
    finished: list[tuple[float, Path]] = []
    for folder in temp.glob(f"{_PREFIX}*"):
        try:
            descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            continue
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            finished.append((folder.stat().st_mtime, folder))
        except OSError:
            continue  # a live session's
        finally:
            os.close(descriptor)
    for _, folder in sorted(finished)[:-_KEPT]:
        shutil.rmtree(folder, ignore_errors=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Remove this session's own temporary root when every test passed.

    A failed session's is kept to inspect; later sessions keep the newest three.
    """
    own = session.config.stash.get(_OWN_BASETEMP, None)
    if own is not None and exitstatus == pytest.ExitCode.OK:
        shutil.rmtree(own, ignore_errors=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="long run: opt in with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True, scope="session")
def _own_cache_directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keep the tree cache of every run the suite starts out of the user's cache directory."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        yield
