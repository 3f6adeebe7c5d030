"""Turn a policy into the exact command line, environment and descriptors of one backend."""

from __future__ import annotations

import contextlib
import functools
import os
import pwd
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from sandbox._backends import BWRAP, ENV, UNSHARE, Mechanisms, backend_guarantees, mechanisms
from sandbox._host import (
    BWRAP_BASE_MOUNTS,
    BWRAP_FLAGS,
    UNSHARE_FULL,
    UNSHARE_MINIMAL,
    HostInfo,
    unshare_mapping,
)
from sandbox._limits import PidsCgroup, prlimit_prefix
from sandbox._pyguard import install_guard
from sandbox._seccomp import unix_socket_filter
from sandbox._types import Guarantee, Policy
from sandbox._workdir import WorkDir, in_memory_dirs

_ROOT = Path("/")
_TMP = Path("/tmp")


@dataclass
class Launch:
    """One process to start: argv, environment, the descriptors it inherits, what it promises.

    ``pass_fds`` are the only descriptors the backend inherits: pipes, never anything that
    reaches the host filesystem (an inherited directory descriptor defeats a read-only bind).
    """

    backend: str
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    guarantees: frozenset[Guarantee]
    pass_fds: tuple[int, ...] = ()
    status_fd: int | None = None
    cgroup: PidsCgroup | None = None
    child_is_init: bool = False
    """The backend forks the namespace's init as its only child (util-linux unshare --fork)."""
    _close_after_spawn: list[int] = field(default_factory=list)

    def spawned(self) -> None:
        """Close this side's copies of the descriptors the child now holds."""
        for fd in self._close_after_spawn:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._close_after_spawn.clear()

    def release(self) -> None:
        """Free everything the launch holds (after the run, or when it never started)."""
        self.spawned()
        if self.status_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.status_fd)
            self.status_fd = None
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None


def build_launch(
    backend: str,
    *,
    host: HostInfo,
    policy: Policy,
    work: WorkDir,
    env: dict[str, str],
    executable: str,
    source: Mapping[str, str],
) -> Launch:
    """Build the launch of ``policy`` on ``backend``; OSError if a resource cannot be made."""
    limits = policy.limits
    mech = mechanisms(backend, host)
    guarantees = backend_guarantees(
        backend,
        host,
        memory=limits.memory_mb is not None,
        processes=limits.max_processes is not None,
    )
    # Tasks the backend itself adds to the count: bwrap's outer process and its init, or the
    # unshare process (inside the user namespace once it has unshared).
    overhead = {BWRAP: 1, UNSHARE: 1, ENV: 0}[backend]
    nproc = (
        limits.max_processes + overhead
        if limits.max_processes is not None and mech.processes == "rlimit"
        else None
    )
    memory = limits.memory_mb if mech.memory else None
    prefix = prlimit_prefix(host.prlimit, memory, nproc) if host.prlimit else []
    command = [*prefix, *policy.argv]

    if backend == ENV:
        guard = install_guard(work.path)
        prior = env.get("PYTHONPATH")
        env["PYTHONPATH"] = f"{guard}{os.pathsep}{prior}" if prior else str(guard)
        return Launch(backend, command, env, work.path, guarantees)
    if backend == UNSHARE:
        flags = UNSHARE_FULL if host.unshare_full else UNSHARE_MINIMAL
        assert host.unshare is not None
        argv = [*host.pdeathsig, host.unshare, *unshare_mapping(host.euid), *flags, "--", *command]
        return Launch(backend, argv, env, work.path, guarantees, child_is_init=host.unshare_full)
    return _bwrap_launch(
        host,
        mech,
        policy=policy,
        work=work,
        env=env,
        visible=[policy.project_dir, *policy.readable, Path(executable)],
        homes=_homes(source),
        command=command,
        guarantees=guarantees,
    )


def _bwrap_launch(
    host: HostInfo,
    mech: Mechanisms,
    *,
    policy: Policy,
    work: WorkDir,
    env: dict[str, str],
    visible: list[Path | None],
    homes: list[str],
    command: list[str],
    guarantees: frozenset[Guarantee],
) -> Launch:
    assert host.bwrap is not None
    status_read, status_write = os.pipe()
    launch = Launch(BWRAP, [], env, work.path, guarantees, status_fd=status_read)
    launch._close_after_spawn.append(status_write)
    try:
        argv = [host.bwrap, *BWRAP_BASE_MOUNTS]
        for home in homes:
            argv += ["--tmpfs", home]
        bound = _to_bind_back((p for p in visible if p is not None), homes)
        for path in bound:
            argv += ["--ro-bind-try", path, path]
        if any(
            Path(home) == Path(b) or Path(b) in Path(home).parents for home in homes for b in bound
        ):
            # The policy asked for a whole home (as project dir or readable path): say so.
            launch.guarantees -= {Guarantee.HOME_MASKED}
        argv += ["--bind", str(work.path), str(work.path), *in_memory_dirs(work.path)]
        argv += ["--chdir", str(work.path)]
        argv += [*BWRAP_FLAGS, "--json-status-fd", str(status_write)]
        pass_fds = [status_write]
        if host.bwrap_disable_userns:
            argv.append("--disable-userns")
        program = unix_socket_filter() if host.bwrap_seccomp else None
        if program is not None:
            seccomp_read, seccomp_write = os.pipe()
            launch._close_after_spawn.append(seccomp_read)
            # A few hundred bytes: far below a pipe's capacity, so this cannot block.
            os.write(seccomp_write, program)
            os.close(seccomp_write)
            argv += ["--seccomp", str(seccomp_read)]
            pass_fds.append(seccomp_read)
        max_processes = policy.limits.max_processes
        if max_processes is not None and mech.processes == "cgroup":
            assert host.pids_cgroup is not None
            # Two tasks of overhead: the outer bwrap and its init inside the namespace.
            launch.cgroup = PidsCgroup(host.pids_cgroup, max_processes + 2)
            argv = [*launch.cgroup.wrapper(), *argv]
        launch.argv = [*argv, "--", *command]
        launch.pass_fds = tuple(pass_fds)
    except BaseException:
        launch.release()
        raise
    return launch


@functools.cache
def _passwd_home(uid: int) -> str | None:
    """Look up the password database's home of ``uid`` once (each lookup parses a file)."""
    try:
        return pwd.getpwuid(uid).pw_dir
    except KeyError:
        return None


def _homes(source: Mapping[str, str]) -> list[str]:
    """List the invoking user's homes to mask: $HOME (ours, the source's) and the passwd one."""
    candidates = [source.get("HOME"), os.environ.get("HOME"), _passwd_home(os.getuid())]
    homes: list[str] = []
    for candidate in candidates:
        if not candidate or not Path(candidate).is_absolute():
            continue
        real = Path(candidate).resolve()
        # "/" cannot be masked without masking everything; /tmp is private already; a home
        # that does not exist (nobody's /nonexistent) has nothing to hide and no mount point.
        if real in (_ROOT, _TMP) or _TMP in real.parents or not real.is_dir():
            continue
        if str(real) not in homes:
            homes.append(str(real))
    return homes


def _to_bind_back(paths: Iterable[Path], homes: list[str]) -> list[str]:
    """Pick the paths (and real targets of symlinks) that a masked home or the private /tmp hides.

    Everything else is already visible through the read-only root; binding it again would only
    add mounts (and fail on a symlink whose target is hidden). Parents come before children, and
    a path inside one already bound is left out.
    """
    hiding = [Path(home) for home in homes] + [_TMP]
    chosen: list[Path] = []
    for path in paths:
        absolute = Path(path).absolute()
        for candidate in (absolute, absolute.resolve()):
            if any(h == candidate or h in candidate.parents for h in hiding):
                chosen.append(candidate)
    chosen.sort(key=lambda p: len(p.parts))
    kept: list[Path] = []
    for candidate in chosen:
        if not any(k == candidate or k in candidate.parents for k in kept):
            kept.append(candidate)
    return [str(k) for k in kept]
