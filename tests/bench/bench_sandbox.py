"""Per-run overhead of each sandbox backend against a bare ``subprocess.run`` of the same command.

Usage: ``python tests/bench/bench_sandbox.py OUT.json [--runs N] [--command /bin/true]``

All measurements happen in this one process, interleaved round by round (in a new order each
round) so that drift in the machine's load hits every column alike; each column reports the
median wall time of N runs, its 10th and 90th percentile, and the mean CPU time of this process
and of its children per run (which the load shifts far less than wall time).
``bwrap (alone)`` is bubblewrap with the same namespaces and a read-only root, without anything
of ``sandbox`` (no init, no filter, no Landlock, no status pipes), which separates bubblewrap's
cost from ours; it gets ``--new-session`` exactly where a run does (where this process has a
controlling terminal), so that a session's cost falls on both sides alike, and where that
leaves it out ``bwrap (alone, new session)`` shows what the session would cost (the kernel's
scheduler group per session). ``bwrap (alone, as pid 1)`` is the same with ``--as-pid-1``, the
baseline for the CPU columns. ``bwrap + our mounts`` is bubblewrap with exactly the argv a run
gets (its in-memory file systems, masked homes, binds and seccomp filter) but ``true`` in place
of the sandbox's own init (the stage). ``bwrap + python -I -S`` adds only the start of the
interpreter the stage runs in. ``bwrap`` is a whole run, ``landlock`` a whole run of the
backend without namespaces (the stage on the host). The target: each at most 20 ms over
``bwrap (alone)``; the report says by how much, and splits the bubblewrap run's share into the
mounts and filter, the stage's start, and the rest (the stage's own work, the memory cgroup
and the caller's side).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import sandbox  # noqa: E402 - after making the checkout importable when run as a script

# Internals, for the split of our share only.
from sandbox._backend import Request  # noqa: E402
from sandbox._backends import choose  # noqa: E402
from sandbox._bubblewrap import BubblewrapProbe, _has_terminal  # noqa: E402
from sandbox._env import build_env  # noqa: E402
from sandbox._landlock import MIN_ABI  # noqa: E402
from sandbox._runuid import lease_uid  # noqa: E402
from sandbox._workdir import in_sandbox_work_dir  # noqa: E402

TARGET_OVERHEAD_MS = 20.0
_MOUNTS = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")
_ROOT_FLAGS = ("--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts")
_USER_FLAGS = ("--unshare-all", "--unshare-user")
_COMMON = ("--cap-drop", "ALL", "--die-with-parent")


def _timed(action: Callable[[], object]) -> tuple[float, float, float]:
    """Wall time, this process's CPU time and its reaped children's CPU time, in ms."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = time.process_time()
    start = time.perf_counter()
    action()
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    children = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall * 1000, cpu * 1000, children * 1000


def _sandboxed(
    argv: tuple[str, ...], isolation: sandbox.Isolation, path: str
) -> Callable[[], object]:
    policy = sandbox.Policy(argv=argv, isolation=isolation, source_env={"PATH": path, "HOME": "/"})

    def action() -> object:
        outcome = sandbox.run(policy)
        if outcome.status is not sandbox.Status.PASSED:
            raise SystemExit(
                f"{outcome.backend}: {outcome.status} {outcome.detail} {outcome.stderr}"
            )
        return outcome

    return action


def _our_mounts(path: str) -> Callable[[], object]:
    """bubblewrap with a real run's argv up to the init, which is replaced by ``true``."""
    source = {"PATH": path, "HOME": "/"}
    policy = sandbox.Policy(argv=("true",), source_env=source)
    backend, probe = choose(policy.isolation, path)
    assert isinstance(probe, BubblewrapProbe)
    program = shutil.which("true", path=path) or "/bin/true"

    def action() -> object:
        lease = lease_uid() if os.geteuid() == 0 else None
        work = in_sandbox_work_dir()
        env = build_env(source, (), work.env_dirs())
        request = Request(policy, work, env, program, source, lease.uid if lease else None)
        launch = backend.launch(probe, request)
        try:
            argv = [*launch.argv[: _stage_index(launch.argv, probe)], program]
            return subprocess.run(
                argv,
                check=True,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                pass_fds=launch.pass_fds,
                env=launch.env,
                cwd=launch.cwd,
            )
        finally:
            launch.release()
            if lease is not None:
                lease.release()

    return action


def _stage_index(argv: list[str], probe: BubblewrapProbe) -> int:
    """Where the stage's words begin in a launch's argv (after bubblewrap's own ``--``)."""
    return next(
        i + 1 for i, word in enumerate(argv) if word == "--" and argv[i + 1] == probe.python
    )


def _plain(argv: list[str], *, check: bool = True) -> Callable[[], object]:
    def action() -> object:
        return subprocess.run(argv, check=check, stdin=subprocess.DEVNULL, capture_output=True)

    return action


def _columns(command: str) -> dict[str, Callable[[], object]]:
    """Every column this machine can measure, bare first."""
    path = os.environ.get("PATH", os.defpath)
    columns: dict[str, Callable[[], object]] = {"bare": _plain([command])}
    backends = {r.name: r for r in sandbox.probe_backends(path=path)}
    bwrap = backends["bwrap"]
    if bwrap.available and bwrap.executable:
        alone = [bwrap.executable, *_MOUNTS]
        alone += [*(_ROOT_FLAGS if os.geteuid() == 0 else _USER_FLAGS), *_COMMON]
        # As a run: a session of its own only where there is a terminal to keep from it, or
        # no Landlock to keep it from the caller's scheduling group.
        session = sandbox.probe_host(path=path).landlock_abi == 0 or _has_terminal()
        alone += ["--new-session", "--"] if session else ["--"]
        columns["bwrap (alone)"] = _plain([*alone, command])
        if not session:
            columns["bwrap (alone, new session)"] = _plain(
                [*alone[:-1], "--new-session", "--", command]
            )
        # The same with the program as the namespace's pid 1, as a run's stage is: bubblewrap
        # then waits for the namespace to end, and the CPU time of what ran inside is counted
        # (without it, bubblewrap's own init outlives the wait and is never counted here).
        columns["bwrap (alone, as pid 1)"] = _plain([*alone[:-1], "--as-pid-1", "--", command])
        columns["bwrap + our mounts"] = _our_mounts(path)
        # The interpreter the Python stage runs in (see sandbox._bubblewrap).
        interpreter = [os.path.realpath(sys.executable), "-I", "-S", "-c", "pass"]
        columns["bwrap + python -I -S"] = _plain([*alone, *interpreter])
        columns["bwrap"] = _sandboxed((command,), sandbox.Isolation.NAMESPACE, path)
    if backends["unshare"].available:
        columns["unshare"] = _sandboxed((command,), sandbox.Isolation.UNSHARE, path)
    if sandbox.probe_host().landlock_abi >= MIN_ABI:
        # No namespaces: the Python stage on the host, Landlock, seccomp and a subreaper.
        columns["landlock"] = _sandboxed((command,), sandbox.Isolation.LANDLOCK, path)
    columns["env"] = _sandboxed((command,), sandbox.Isolation.ENV, path)
    return columns


def measure(command: str, runs: int) -> dict[str, object]:
    """Interleave ``runs`` rounds over every column; return the medians and ratios."""
    columns = _columns(command)
    load_before = os.getloadavg()
    for action in columns.values():
        action()  # warm-up: backend probe, page cache, first-import costs
    samples: dict[str, list[float]] = {name: [] for name in columns}
    caller_cpu: dict[str, list[float]] = {name: [] for name in columns}
    children_cpu: dict[str, list[float]] = {name: [] for name in columns}
    order = list(columns.items())
    shuffler = random.Random(13)
    for _ in range(runs):
        # A new order each round: a column must not pay for what the one before it left
        # behind (a namespace bubblewrap tears down after its caller has returned).
        shuffler.shuffle(order)
        for name, action in order:
            wall, cpu, children = _timed(action)
            samples[name].append(wall)
            caller_cpu[name].append(cpu)
            children_cpu[name].append(children)
    bare = statistics.median(samples["bare"])
    results = {
        name: {
            "median_ms": round(statistics.median(values), 3),
            "overhead_ms": round(statistics.median(values) - bare, 3),
            "ratio": round(statistics.median(values) / bare, 2),
            "p90_ms": round(sorted(values)[int(len(values) * 0.9) - 1], 3),
            # The fast end: what a run costs when other work on the machine lets it be.
            "p10_ms": round(sorted(values)[len(values) // 10], 3),
            # Means: the kernel counts CPU time in ticks, a median of ticks says little.
            "caller_cpu_ms": round(statistics.mean(caller_cpu[name]), 3),
            "children_cpu_ms": round(statistics.mean(children_cpu[name]), 3),
        }
        for name, values in samples.items()
    }
    share = _share(results, "bwrap", "bwrap + python -I -S") if "bwrap" in results else None
    over_alone = {
        name: round(results[name]["median_ms"] - results["bwrap (alone)"]["median_ms"], 3)
        for name in ("bwrap", "landlock")
        if name in results and "bwrap (alone)" in results
    }
    return {
        "command": command,
        "runs": runs,
        "machine": {
            "python": platform.python_version(),
            "kernel": platform.release(),
            "cpus": os.cpu_count(),
            "euid": os.geteuid(),
            # Other work on the machine shifts every column: compare runs of similar load.
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
        },
        "columns": results,
        "our_share": share,
        "over_bwrap_alone_ms": over_alone,
        "target": {
            "over_bwrap_alone_ms_max": TARGET_OVERHEAD_MS,
            "met": None
            if not over_alone
            else all(value <= TARGET_OVERHEAD_MS for value in over_alone.values()),
        },
    }


def _share(results: dict[str, dict[str, float]], run: str, start: str) -> dict[str, float]:
    """Our share of a whole run over bubblewrap alone, split by the columns in between."""
    alone = results["bwrap (alone)"]["median_ms"]
    stage = results[start]["median_ms"] - alone
    mounts = results["bwrap + our mounts"]["median_ms"] - alone
    total = results[run]["median_ms"] - alone
    p10 = results[run]["p10_ms"] - results["bwrap (alone)"]["p10_ms"]
    return {
        "over_bwrap_alone_ms": round(total, 3),
        "over_bwrap_alone_p10_ms": round(p10, 3),
        "of_which_mounts_and_filter_ms": round(mounts, 3),
        "of_which_stage_start_ms": round(stage, 3),
        "rest_ms": round(total - stage - mounts, 3),
    }


def render(report: dict[str, object]) -> str:
    """The report as a text table."""
    columns = report["columns"]
    assert isinstance(columns, dict)
    machine = report["machine"]
    assert isinstance(machine, dict)
    lines = [
        f"{report['command']}, median of {report['runs']} runs, load average "
        f"{machine['load_average_before'][0]} -> {machine['load_average_after'][0]}",
        f"{'column':<30}{'median ms':>11}{'p10 ms':>9}{'p90 ms':>9}{'overhead ms':>13}{'ratio':>8}"
        f"{'caller cpu':>12}{'child cpu':>11}",
    ]
    for name, row in columns.items():
        lines.append(
            f"{name:<30}{row['median_ms']:>11.2f}{row['p10_ms']:>9.2f}{row['p90_ms']:>9.2f}"
            f"{row['overhead_ms']:>13.2f}{row['ratio']:>7.2f}x"
            f"{row['caller_cpu_ms']:>12.2f}{row['children_cpu_ms']:>11.2f}"
        )
    target = report["target"]
    assert isinstance(target, dict)
    share = report["our_share"]
    if isinstance(share, dict):
        lines.append(
            f"a bwrap run over bwrap alone: {share['over_bwrap_alone_ms']:.2f} ms, of which the "
            f"mounts and filter {share['of_which_mounts_and_filter_ms']:.2f} ms, the stage's "
            f"start {share['of_which_stage_start_ms']:.2f} ms, the rest {share['rest_ms']:.2f} ms; "
            f"at the 10th percentile {share['over_bwrap_alone_p10_ms']:.2f} ms"
        )
    over = report["over_bwrap_alone_ms"]
    assert isinstance(over, dict)
    lines.append(
        "over bwrap alone: "
        + ", ".join(f"{name} {value:.2f} ms" for name, value in over.items())
        + f"; target <= {target['over_bwrap_alone_ms_max']} ms each: {target['met']}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, write the JSON; exit 1 if the target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path, help="where to write the JSON report")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--command", default=shutil.which("true") or "/bin/true")
    args = parser.parse_args(argv)
    report = measure(args.command, args.runs)
    print(render(report))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0 if report["target"]["met"] is not False else 1  # type: ignore[index]


if __name__ == "__main__":
    sys.exit(main())
