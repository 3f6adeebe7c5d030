"""Building the Go fixture programs (``tests/fixtures/go``) with the cobra helper wired in.

The programs build in GOPATH mode against Debian's packaged cobra and pflag
(``golang-go``, ``golang-github-spf13-cobra-dev``; ``.ci/run`` installs them): nothing is
fetched. Each program's folder is laid out as a module would be, the helper written into
``internal/exampleguard`` from the copy exampleguard ships, and built once per test session into
a folder of the session's temporary directory; the Go build cache is shared between the
session's workers.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.support.project import REPOSITORY

GO_FIXTURES = REPOSITORY / "tests" / "fixtures" / "go"
HELPER = REPOSITORY / "exampleguard" / "go" / "exampleguard.go"
DEBIAN_GOPATH = Path("/usr/share/gocode")
COBRA = DEBIAN_GOPATH / "src" / "github.com" / "spf13" / "cobra"


def missing_go() -> str | None:
    """Why the Go fixtures cannot be built here, or ``None`` when they can."""
    if shutil.which("go") is None:
        return "no `go` on PATH (apt-get install golang-go; .ci/run installs it)"
    if not COBRA.is_dir():
        return f"no cobra at {COBRA} (apt-get install golang-github-spf13-cobra-dev)"
    return None


OTHER_COBRA = os.environ.get("EXAMPLEGUARD_COBRA_GOPATH")
"""A GOPATH holding another cobra (``src/github.com/spf13/cobra``), to build the fixtures
against it instead of Debian's: how the tests are run against cobra 1.7, 1.8 or 1.9."""


def go_environment(gopath: Path) -> dict[str, str]:
    """The environment of a GOPATH-mode build against Debian's packages, offline."""
    cache = Path(tempfile.gettempdir()) / "exampleguard-go-build-cache"
    paths = [*([OTHER_COBRA] if OTHER_COBRA else []), str(DEBIAN_GOPATH), str(gopath)]
    return {
        **os.environ,
        "GO111MODULE": "off",
        "GOPATH": os.pathsep.join(paths),
        "GOCACHE": str(cache),
        "GOFLAGS": "",
        "GOPROXY": "off",
        "CGO_ENABLED": "0",
    }


def lay_out(name: str, gopath: Path, *, helper: bool = True) -> Path:
    """The fixture program ``name`` copied to ``gopath/src/example.com/NAME``, with the helper."""
    source = gopath / "src" / "example.com" / name
    shutil.copytree(GO_FIXTURES / name, source, dirs_exist_ok=True)
    if helper:
        target = source / "internal" / "exampleguard"
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(HELPER, target / "exampleguard.go")
    return source


def build(source: Path, gopath: Path, output: Path) -> Path:
    """``go build`` the package in ``source`` (under ``gopath/src``) to ``output``."""
    package = source.relative_to(gopath / "src").as_posix()
    output.parent.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["go", "build", "-o", str(output), package],
        cwd=source,
        env=go_environment(gopath),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"go build {package} failed:\n{done.stdout}{done.stderr}")
    return output


def build_fixture(name: str, folder: Path) -> Path:
    """The fixture program ``name`` built into ``folder/bin/NAME``, laid out under ``folder``."""
    gopath = folder / "gopath"
    source = lay_out(name, gopath)
    return build(source, gopath, folder / "bin" / name)
