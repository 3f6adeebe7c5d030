"""The policy side: credential rule, environment, validation, backend choice, the public surface."""

from __future__ import annotations

import dataclasses
import struct
from pathlib import Path

import pytest
from sbx_support import PROBE, needs_bwrap

import sandbox
import sandbox._backend
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
from sandbox._seccomp import unix_socket_filter
from sandbox._unshare import UnshareProbe


def test_the_public_surface() -> None:
    assert sorted(sandbox.__all__) == sorted(
        [
            "BackendReport",
            "CONTRACT_GUARANTEES",
            "CREDENTIAL_PATTERNS",
            "CredentialEnvError",
            "Guarantee",
            "Isolation",
            "IsolationUnavailable",
            "Limits",
            "Outcome",
            "Policy",
            "ProcessRegistry",
            "Status",
            "check_pass_env",
            "kill_all",
            "probe_backends",
            "run",
            "select_backend",
        ]
    )


def test_closed_choices_have_the_contract_values() -> None:
    assert [s.value for s in Status] == ["passed", "failed", "timed-out", "crashed", "not-started"]
    assert [i.value for i in Isolation] == ["auto", "namespace", "env"]
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
        ("PYTHONPATH", False),
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
def test_no_namespace_backend_on_path_fails_closed(isolation: Isolation, tmp_path: Path) -> None:
    with pytest.raises(IsolationUnavailable) as caught:
        sandbox.select_backend(isolation, path=str(tmp_path))
    message = str(caught.value)
    assert message.startswith("isolation-unavailable")
    assert "bwrap not found on PATH" in message
    assert "unshare not found on PATH" in message


def _fake(directory: Path, name: str) -> None:
    # Runs the command after "--" with no namespace at all, as a broken or fake tool might.
    script = directory / name
    script.write_text(
        '#!/bin/sh\nwhile [ "$#" -gt 0 ] && [ "$1" != "--" ]; do shift; done\nshift\nexec "$@"\n',
        encoding="utf-8",
    )
    script.chmod(0o755)


def test_binaries_that_create_no_namespace_do_not_count(tmp_path: Path) -> None:
    _fake(tmp_path, "bwrap")
    _fake(tmp_path, "unshare")
    with pytest.raises(IsolationUnavailable) as caught:
        sandbox.select_backend(Isolation.AUTO, path=str(tmp_path))
    assert caught.value.reasons == (
        "bwrap ran but did not create a net namespace",
        "unshare ran but did not create a net namespace",
    )


def test_run_fails_closed_and_starts_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    policy = Policy(
        argv=("/bin/sh", "-c", f"touch {marker}"),
        source_env={"PATH": str(tmp_path / "empty")},
    )
    with pytest.raises(IsolationUnavailable):
        sandbox.run(policy)
    assert not marker.exists()


def test_reports_without_any_namespace_backend(tmp_path: Path) -> None:
    reports = {r.name: r for r in sandbox.probe_backends(path=str(tmp_path))}
    assert list(reports) == ["bwrap", "unshare", "env"]
    assert not reports["bwrap"].available
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


def _probe(backend: str, **changes: object) -> sandbox._backend.Probe:
    host_fields = {"euid", "prlimit", "pids_cgroup"}
    host = HostInfo(
        path="/usr/bin:/bin",
        euid=0,
        own_namespaces={},
        prlimit="/usr/bin/prlimit",
        pids_cgroup=Path("/sys/fs/cgroup/pids"),
        pdeathsig=(),
    )
    host = dataclasses.replace(host, **{k: v for k, v in changes.items() if k in host_fields})  # type: ignore[arg-type]
    own = {k: v for k, v in changes.items() if k not in host_fields}
    if backend == "bwrap":
        fields = {"disable_userns": True, "seccomp": True, **own}
        return BubblewrapProbe(host, True, "/usr/bin/bwrap", None, **fields)  # type: ignore[arg-type]
    if backend == "unshare":
        return UnshareProbe(host, True, "/usr/bin/unshare", None, **{"full": True, **own})  # type: ignore[arg-type]
    return sandbox._backend.Probe(host, True, None)


@pytest.mark.parametrize(
    ("backend", "changes", "held", "missing"),
    [
        ("bwrap", {}, {Guarantee.NO_FS_UNIX_SOCKETS, Guarantee.PROCESS_LIMIT}, set()),
        ("bwrap", {"seccomp": False}, set(), {Guarantee.NO_FS_UNIX_SOCKETS}),
        ("bwrap", {"pids_cgroup": None}, set(), {Guarantee.PROCESS_LIMIT}),
        ("bwrap", {"pids_cgroup": None, "euid": 1000}, {Guarantee.PROCESS_LIMIT}, set()),
        ("bwrap", {"prlimit": None}, set(), {Guarantee.MEMORY_LIMIT}),
        ("unshare", {}, {Guarantee.MEMORY_LIMIT}, {Guarantee.PROCESS_LIMIT}),
        ("unshare", {"euid": 1000}, {Guarantee.PROCESS_LIMIT}, set()),
        ("unshare", {"full": False}, set(), {Guarantee.TREE_KILLED}),
        ("env", {}, set(), {Guarantee.MEMORY_LIMIT, Guarantee.PROCESS_LIMIT}),
        ("env", {"euid": 1000}, {Guarantee.MEMORY_LIMIT, Guarantee.PROCESS_LIMIT}, set()),
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
        program = unix_socket_filter(machine)
        assert program is not None
        assert len(program) % 8 == 0
        code, _, _, k = struct.unpack("=HBBI", program[:8])
        assert (code, k) == (0x20, 4)  # first: load the architecture
        returns = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
        assert {k for code, _, _, k in returns if code == 0x06} == {0x7FFF0000, 0x00050001}
    assert unix_socket_filter("riscv64") is None


def test_fixtures_are_copied_and_a_bad_fixture_dir_is_not_started(tmp_path: Path) -> None:
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    (fixtures / "data.txt").write_text("fixture", encoding="utf-8")
    (fixtures / "link").symlink_to("/etc/hostname")
    policy = Policy(argv=("/bin/sh", "-c", "cat data.txt; readlink link"), fixtures=fixtures)
    outcome = sandbox.run(dataclasses.replace(policy, isolation=Isolation.ENV))
    assert outcome.stdout == "fixture/etc/hostname\n"
    missing = dataclasses.replace(policy, fixtures=tmp_path / "nope", isolation=Isolation.ENV)
    outcome = sandbox.run(missing)
    assert outcome.status is Status.NOT_STARTED
    assert outcome.detail is not None
    assert outcome.detail.startswith("cannot prepare the work dir")


def test_the_probe_is_not_collected_as_a_test() -> None:
    assert not PROBE.name.startswith("test_")
