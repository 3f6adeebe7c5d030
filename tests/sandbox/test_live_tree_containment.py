"""A live tree's import as a hostile module and as real project layouts would have it.

Every hostile module here tries what it would get away with if exampleguard imported it as
the caller: it writes into the project and the caller's home through libc (which no audit hook
sees), forges the sandbox's old exec-failure line to be imported a second time, forks and
allocates without bound, announces a frame of 2^60 bytes, or tells the cache it read nothing.
Each runs on the three hosts CI users have, simulated without touching the host's settings:
namespaces available; user namespaces refused (Ubuntu's AppArmor, GitHub's ubuntu-24.04
runners); every namespace refused (a container's default seccomp profile). Where the sandbox
can run, it contains the module; where it cannot, nothing is imported (exit 2,
``isolation-unavailable``). Never does the module run outside the sandbox.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import sandbox
from sandbox._landlock import MIN_ABI
from tests.support.project import ONE_EXAMPLE_COUNTS, REPOSITORY, make_project
from tests.support.runuid import public_dir, reachable_by_runs

HOSTS = ["namespaces", "userns-refused", "all-refused"]
pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(platform.machine() != "x86_64", reason="the host launcher is x86_64's"),
]

TOOL = {"id": "app.hello", "command": ["hello"], "examples": [{"command": "app hello --n 1"}]}
APP_TAIL = """
import click


@click.group()
def cli():
    pass


@cli.command()
@click.option("--n", type=int)
def hello(n):
    pass
"""


def project(root: Path, prelude: str, **settings: object) -> Path:
    """A project whose tree ``click:app:cli`` runs ``prelude`` at import."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "app.py").write_text(textwrap.dedent(prelude) + APP_TAIL, encoding="utf-8")
    make_project(root, [TOOL], program="app", dialect=None, tree="click:app:cli", counts=False)
    table = "".join(f"{key} = {json.dumps(value)}\n" for key, value in settings.items())
    config = root / "exampleguard.toml"
    config.write_text(config.read_text(encoding="utf-8") + table, encoding="utf-8")
    # Written, not counted by the CLI: counting would import the module outside these tests.
    counts = json.dumps(ONE_EXAMPLE_COUNTS)
    (root / "exampleguard-counts.json").write_text(counts, encoding="utf-8")
    return root


PUBLIC_PYTHON = os.environ.get("EXAMPLEGUARD_PUBLIC_PYTHON")
"""An interpreter with exampleguard installed that every user may run (``.ci/run`` builds one
from the system's Python): the one an unprivileged caller runs exampleguard with."""
NOBODY = 65534


@dataclass(frozen=True)
class Caller:
    """Who runs exampleguard: this test's own user, or an unprivileged uid (``nobody``)."""

    name: str
    folder: Path
    """Where its projects and its home are: its own, writable by it without any sandbox."""

    @property
    def unprivileged(self) -> bool:
        return self.name == "nobody" or os.geteuid() != 0

    def make(self, name: str) -> Path:
        """A directory of the caller's own, as a user's project or home is."""
        path = self.folder / name
        path.mkdir(parents=True, exist_ok=True)
        if self.name == "nobody":
            os.chown(path, NOBODY, NOBODY)
        return path

    def own(self, root: Path) -> None:
        """Give everything under ``root`` to the caller."""
        if self.name == "nobody":
            for path in [root, *root.rglob("*")]:
                os.chown(path, NOBODY, NOBODY)

    def python(self) -> list[str]:
        """The interpreter this caller runs, as this caller."""
        if self.name == "caller":
            return [sys.executable]
        assert PUBLIC_PYTHON is not None
        drop = ["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups"]
        return [*drop, PUBLIC_PYTHON]

    def command(self, host: str, *args: str) -> list[str]:
        """``exampleguard ARGS`` run by this caller on the simulated ``host``."""
        command = [*self.python(), "-m", "exampleguard", *args]
        if host != "namespaces":
            # The filter is installed first, and kept across the drop to nobody.
            mode = "userns" if host == "userns-refused" else "all"
            launcher = str(REPOSITORY / "tests" / "support" / "nonamespaces.py")
            command = [sys.executable, launcher, mode, "--", *command]
        return command

    def env(self, **extra: str) -> dict[str, str]:
        if self.name == "nobody":
            base = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(self.make("home"))}
        else:
            base = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
        return {**base, **extra}


CALLERS = ["caller", "nobody"]


@pytest.fixture(params=CALLERS)
def caller(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Caller]:
    """Each test runs as this user (root in CI) and, from root, as nobody."""
    if request.param == "caller":
        yield Caller("caller", tmp_path)
        return
    if os.geteuid() != 0:
        pytest.skip("only root can run exampleguard as nobody")
    if PUBLIC_PYTHON is None:
        pytest.skip("EXAMPLEGUARD_PUBLIC_PYTHON names no interpreter every user may run")
    with public_dir("exampleguard-live-") as folder:
        yield Caller("nobody", folder)


def exampleguard(
    caller: Caller, root: Path, host: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``exampleguard ARGS`` in ``root`` (the caller's), run by ``caller`` on ``host``."""
    caller.own(root)
    return subprocess.run(
        caller.command(host, *args),
        cwd=root,
        env=caller.env(**(env or {})),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def validate(
    caller: Caller, root: Path, host: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``exampleguard validate --no-cache ARGS`` in ``root``, run by ``caller`` on ``host``."""
    return exampleguard(caller, root, host, "validate", "--no-cache", *args, env=env)


LANDLOCK = sandbox.probe_host().landlock_abi >= MIN_ABI
"""Whether this kernel's Landlock lets the ``landlock`` backend run where namespaces cannot."""


def contained(caller: Caller, host: str) -> bool:
    """Whether a sandbox can run on ``host`` for ``caller``: bubblewrap (root needs no user
    namespace), else the ``landlock`` backend where the kernel has it."""
    bubblewrap = host == "namespaces" or (host == "userns-refused" and not caller.unprivileged)
    return bubblewrap or (LANDLOCK and not _unreachable_interpreter(caller))


def _unreachable_interpreter(caller: Caller) -> bool:
    """A root caller's landlock run is another uid: an interpreter in root's 0700 home is out
    of its reach (bubblewrap mounts one into the run; without namespaces nothing can)."""
    if caller.unprivileged:
        return False
    home = Path("/root")
    real = Path(sys.executable).resolve()
    return home in real.parents and not home.stat().st_mode & 0o001


def expect_refused(result: subprocess.CompletedProcess[str]) -> None:
    """Nothing was imported: no sandbox here, or none this caller's interpreter can run in."""
    assert result.returncode == 2, result.stdout + result.stderr
    assert (
        "isolation-unavailable" in result.stderr and "nothing was imported" in result.stderr
    ) or (
        "the sandbox could not start the import" in result.stderr
        and "cannot be used by the run" in result.stderr
    ), result.stderr


LIBC_WRITES = """
import ctypes, os
_libc = ctypes.CDLL(None, use_errno=True)
for _path in {targets!r}:
    _fd = _libc.open(_path.encode(), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
    if _fd >= 0:
        _libc.write(_fd, b"escaped\\n", 8)
        _libc.close(_fd)
"""


@pytest.mark.parametrize("host", HOSTS)
def test_a_libc_write_to_the_project_and_the_callers_home_never_lands(
    caller: Caller, host: str
) -> None:
    home = caller.make("home")
    root = caller.make("app")
    targets = [str(root / "escaped"), str(home / "escaped")]
    project(root, LIBC_WRITES.format(targets=targets))
    result = validate(caller, root, host, env={"HOME": str(home)})
    if contained(caller, host):
        assert result.returncode == 0, result.stdout + result.stderr
    else:
        expect_refused(result)
    assert [path for path in targets if Path(path).exists()] == []


def test_the_same_libc_write_lands_without_the_sandbox(caller: Caller) -> None:
    # What the test above refuses, done by a plain import as the same caller: it works.
    target = caller.make("home") / "escaped"
    source = LIBC_WRITES.format(targets=[str(target)])
    subprocess.run([*caller.python(), "-c", source], env=caller.env(), check=True)
    assert target.read_text(encoding="utf-8") == "escaped\n"


FORGED = """
import sys
sys.stderr.write("sandbox: execvp python3: No such file or directory\\n")
sys.stderr.flush()
os._exit(127)
"""


@pytest.mark.parametrize("host", HOSTS)
def test_a_forged_exec_failure_is_the_imports_own_failure_and_nothing_runs_again(
    caller: Caller, host: str
) -> None:
    marker = caller.make("outside") / "imported"
    root = project(caller.make("app"), LIBC_WRITES.format(targets=[str(marker)]) + FORGED)
    result = validate(caller, root, host)
    assert result.returncode == 2, result.stdout + result.stderr
    if contained(caller, host):
        assert "exited with status 127 while importing" in result.stderr
        assert "tree-unavailable" in result.stderr
    else:
        expect_refused(result)
    assert "All checks passed" not in result.stdout
    # Written only by an import outside the sandbox: there is none.
    assert not marker.exists()


@pytest.mark.parametrize("host", HOSTS)
def test_an_import_that_forks_and_allocates_without_bound_is_stopped(
    caller: Caller, host: str
) -> None:
    hungry = """
    import os, time
    children = 0
    try:
        for _ in range(400):
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
            children += 1
    except OSError:
        pass
    if children >= 400:
        raise SystemExit("forked 400 processes")
    block = bytearray(1536 * 1024 * 1024)
    """
    root = project(caller.make("app"), hungry)
    result = validate(caller, root, host)
    assert result.returncode == 2, result.stdout + result.stderr
    if contained(caller, host):
        assert "MemoryError" in result.stderr
    else:
        expect_refused(result)
    # Nothing of the import is left running.
    leftover = subprocess.run(["pgrep", "-f", str(root)], capture_output=True, check=False)
    assert leftover.stdout == b""


def test_a_frame_header_announcing_2_to_the_60_bytes_is_refused_as_it_arrives(
    caller: Caller,
) -> None:
    announce = """
    import os
    header = b"T" + b"%016x" % (1 << 60)
    for fd in range(3, 64):
        try:
            os.write(fd, header + b"x" * (1 << 20))
            for _ in range(96):
                os.write(fd, b"x" * (1 << 20))
        except OSError:
            continue
    os._exit(0)
    """
    root = project(caller.make("app"), announce)
    measured = caller.make("peak") / "kib"
    # A process of its own measures the run's peak, apart from this worker's other children.
    measure = (
        "import resource, subprocess, sys; done = subprocess.run(sys.argv[2:]); "
        "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))"
        "; sys.exit(done.returncode)"
    )
    run = caller.command("namespaces", "validate", "--no-cache")
    caller.own(root)
    result = subprocess.run(
        [sys.executable, "-c", measure, str(measured), *run],
        cwd=root,
        env=caller.env(),
        capture_output=True,
        text=True,
        check=False,
    )
    peak_mib = int(measured.read_text(encoding="utf-8")) / 1024
    assert result.returncode == 2, result.stdout + result.stderr
    assert "produced an answer larger than the 64 MiB limit" in result.stderr
    # exampleguard's own process holds at most the output cap, never what was announced.
    assert peak_mib < 256, peak_mib


def test_a_child_cannot_keep_its_tree_cached_once_the_module_changed(caller: Caller) -> None:
    # The module sends, besides its tree, the record an older exampleguard took from the child
    # as "what the import read": nothing. The key is the parent's own: an edit is seen.
    poison = """
    import os
    record = b'{"files": [], "directories": []}'
    for fd in range(3, 64):
        try:
            os.write(fd, b"I" + b"%016x" % len(record) + record)
        except OSError:
            continue
    """
    root = project(caller.make("app"), poison)
    cache = caller.make("cache")
    caller.own(root)
    # Dated a minute back: a run does not keep a tree whose files changed as it began.
    moment = time.time() - 60
    for path in [root, *root.rglob("*")]:
        os.utime(path, (moment, moment))
    command = caller.command("namespaces", "validate")
    env = caller.env(XDG_CACHE_HOME=str(cache))
    first = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=False)
    assert first.returncode == 0, first.stdout + first.stderr
    assert list(cache.rglob("trees/*.json")), "the first run keeps the tree"
    source = (root / "app.py").read_text(encoding="utf-8")
    (root / "app.py").write_text(source.replace('"--n"', '"--m"'), encoding="utf-8")
    after = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=False)
    assert after.returncode == 1, after.stdout + after.stderr
    assert "--n" in after.stdout


@pytest.mark.parametrize("host", HOSTS[1:])
def test_where_namespaces_are_refused_every_output_names_the_cause(
    caller: Caller, host: str
) -> None:
    if host == "userns-refused" and not caller.unprivileged:
        pytest.skip("root makes its namespaces without a user namespace")
    # Namespaces asked for by name: the host's refusal is the reason, with what can be done.
    # (No live tree: its import would take the landlock backend first.)
    root = caller.make("app")
    settings = {"dryrun": {"isolation": "namespace"}}
    make_project(root, [TOOL], program="app", settings=settings, counts=False)
    (root / "exampleguard-counts.json").write_text(json.dumps(ONE_EXAMPLE_COUNTS), "utf-8")
    result = exampleguard(caller, root, host, "dryrun", "--format", "json")
    assert result.returncode == 2, result.stdout + result.stderr
    cause = "seccomp profile refuses"
    assert cause in result.stderr
    assert "--security-opt seccomp=unconfined" in result.stderr
    [refused] = [
        d for d in json.loads(result.stdout)["diagnostics"] if d["code"] == "isolation-unavailable"
    ]
    assert cause in refused["hint"]
    shown = exampleguard(caller, root, host, "sandbox")
    # Root is refused every namespace; an unprivileged caller, already the user namespace.
    said = "namespace creation" if not caller.unprivileged else "a seccomp profile"
    assert f"namespaces refused: {said}" in shown.stdout
    assert "unprivileged user namespaces: no" in shown.stdout
    if LANDLOCK:
        assert "isolation 'auto' uses: landlock" in shown.stdout


@pytest.mark.parametrize("host", HOSTS)
def test_a_benign_dry_run_passes_wherever_a_sandbox_can_run(caller: Caller, host: str) -> None:
    tool = {
        "id": "app.hello",
        "command": ["hello"],
        "dry_run": {"flag": None, "reviewed": True, "evidence": "the test's own script"},
        "examples": [{"command": "app hello"}],
    }
    script = 'echo "previewed in $PWD"; test -w "$HOME"'
    root = caller.make("app")
    settings = {"dryrun": {"executable": ["/bin/sh", "-c", script, "sh"]}}
    make_project(root, [tool], program="app", settings=settings, counts=False)
    counts = {**ONE_EXAMPLE_COUNTS, "dry_run_eligible": 1}
    (root / "exampleguard-counts.json").write_text(json.dumps(counts), "utf-8")
    caller.own(root)
    # A root caller's landlock run is another uid, which must reach the project by permission.
    reachable_by_runs(root)
    result = exampleguard(caller, root, host, "dryrun", "--format", "json")
    bubblewrap = host == "namespaces" or (host == "userns-refused" and not caller.unprivileged)
    if not (bubblewrap or LANDLOCK):
        expect_refused(result)
        return
    assert result.returncode == 0, result.stdout + result.stderr
    [run] = json.loads(result.stdout)["dry_runs"]
    assert run["status"] == "passed", run
    assert run["isolation"]["backend"] == ("bwrap" if bubblewrap else "landlock")
    assert "previewed in" in run["stdout"]


# -- real layouts ------------------------------------------------------------------------------


def test_a_variable_read_at_import_is_named_with_tree_env_and_given_through_it(
    tmp_path: Path,
) -> None:
    reads = 'import os\nAPI_KEY = os.environ["WEATHER_API_KEY"]\n'
    root = project(tmp_path / "app", reads)
    missing = validate(
        Caller("caller", tmp_path), root, "namespaces", env={"WEATHER_API_KEY": "a-real-secret"}
    )
    assert missing.returncode == 2
    assert "'WEATHER_API_KEY'" in missing.stderr
    assert "[tool.exampleguard.tree_env]" in missing.stderr
    config = root / "exampleguard.toml"
    config.write_text(
        config.read_text(encoding="utf-8") + '\n[tree_env]\nWEATHER_API_KEY = "placeholder"\n',
        encoding="utf-8",
    )
    given = validate(Caller("caller", tmp_path), root, "namespaces")
    assert given.returncode == 0, given.stdout + given.stderr


def test_programs_users_and_numeric_addresses_at_import_work_in_the_sandbox(
    tmp_path: Path,
) -> None:
    layout = """
    import getpass, socket, subprocess
    VERSION = subprocess.run(["git", "--version"], capture_output=True, check=True).stdout
    USER = getpass.getuser()
    ADDRESS = socket.getaddrinfo("127.0.0.1", 80)
    """
    root = project(tmp_path / "app", layout)
    result = validate(Caller("caller", tmp_path), root, "namespaces")
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_relative_pythonpath_and_an_editable_sibling_are_importable(tmp_path: Path) -> None:
    library = tmp_path / "packages" / "lib" / "src" / "greetlib"
    library.mkdir(parents=True)
    (library / "__init__.py").write_text('GREETING = "hello"\n', encoding="utf-8")
    root = project(tmp_path / "packages" / "app", "from greetlib import GREETING\n")
    result = subprocess.run(
        [sys.executable, "-m", "exampleguard", "validate", "--no-cache"],
        cwd=root,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(["../lib/src", str(REPOSITORY)])},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


ARGPARSE_MAIN = """
import argparse, pathlib


def run(argv=None):
    parser = argparse.ArgumentParser(prog="lint")
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--strict", action="store_true")
    parser.parse_args(argv)
    pathlib.Path({marker!r}).write_text("ran")
"""


def test_an_argparse_main_is_captured_at_its_parse_and_nothing_after_it_runs(
    tmp_path: Path,
) -> None:
    root = tmp_path / "app"
    root.mkdir()
    marker = tmp_path / "ran"
    (root / "lintapp.py").write_text(ARGPARSE_MAIN.format(marker=str(marker)), encoding="utf-8")
    tool = {"id": "lint", "command": [], "examples": [{"command": "lint --strict a.py"}]}
    make_project(root, [tool], program="lint", dialect=None, tree="argparse:lintapp:run")
    result = validate(Caller("caller", tmp_path), root, "namespaces")
    assert result.returncode == 0, result.stdout + result.stderr
    assert not marker.exists()
    # init captures it the same way.
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "lintapp.py").write_text(ARGPARSE_MAIN.format(marker=str(marker)), encoding="utf-8")
    started = subprocess.run(
        [sys.executable, "-m", "exampleguard", "init", "--tree", "argparse:lintapp:run"],
        cwd=fresh,
        env={**os.environ, "PYTHONPATH": str(REPOSITORY)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert started.returncode == 0, started.stdout + started.stderr
    assert (
        json.loads((fresh / "agent-catalog.json").read_text(encoding="utf-8"))["program"] == "lint"
    )
    assert not marker.exists()
    # The same function, called as its users call it, runs its body.
    subprocess.run([sys.executable, "-c", "import lintapp; lintapp.run([])"], cwd=root, check=True)
    assert marker.read_text(encoding="utf-8") == "ran"


def test_the_guard_named_by_name_is_said_in_every_output(tmp_path: Path) -> None:
    if os.geteuid() == 0 and str(Path(sys.executable).resolve()).startswith("/root/"):
        pytest.skip("a root caller's env run cannot execute an interpreter in root's home")
    root = project(tmp_path / "app", "", tree_isolation="guard")
    for output in ("text", "json", "github"):
        result = validate(Caller("caller", tmp_path), root, "namespaces", "--format", output)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "tree-unsandboxed" in result.stdout + result.stderr, output


def test_a_sibling_package_installed_editable_is_importable(tmp_path: Path) -> None:
    # A monorepo: the configuration in packages/app, the library in packages/lib installed
    # editable into the environment exampleguard runs in. Its package directory is named
    # otherwise than the package, so setuptools maps it with an import finder, not a .pth line.
    library = tmp_path / "packages" / "lib"
    (library / "lib_src").mkdir(parents=True)
    (library / "lib_src" / "__init__.py").write_text('GREETING = "hello"\n', encoding="utf-8")
    (library / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "greetlib"\nversion = "1.0"\n'
        '[tool.setuptools]\npackages = ["greetlib"]\npackage-dir = {greetlib = "lib_src"}\n',
        encoding="utf-8",
    )
    environment = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(environment)], check=True)
    python = environment / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # exampleguard, its dependencies and setuptools, from the environment of this test.
    ours = [entry for entry in sys.path if entry.endswith("site-packages")]
    Path(site, "ours.pth").write_text("\n".join([*ours, str(REPOSITORY)]) + "\n", "utf-8")
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q"]
    subprocess.run(
        [*install, "--no-deps", "--no-build-isolation", "--no-index", "-e", str(library)],
        check=True,
    )
    assert list(Path(site).glob("__editable__*finder.py")), "setuptools maps it with a finder"
    root = project(tmp_path / "packages" / "app", "from greetlib import GREETING\n")
    result = subprocess.run(
        [python, "-m", "exampleguard", "validate", "--no-cache"],
        cwd=root,
        env={key: value for key, value in os.environ.items() if key != "PYTHONPATH"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
