"""No silent downgrade: every output names a backend that is not the full sandbox.

``isolation = "unshare"`` (asked for by name) runs, and the text, GitHub and JUnit output name
the backend and list every guarantee that did not hold; JSON and SARIF carry the same. A run
under the full sandbox prints no such line. Without bubblewrap, ``auto`` fails closed (see
``test_dryrun.py``'s ``test_no_namespace_backend_fails_closed``).
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

import sandbox
from tests.dryrun.test_dryrun import Result, build, dryrun, needs_bwrap, reconfigure, tool
from tests.support.runuid import public_dir, reachable_by_runs

pytestmark = pytest.mark.sandbox

needs_unshare = pytest.mark.skipif(
    shutil.which("unshare") is None, reason="util-linux unshare is not installed"
)


@pytest.fixture(scope="module")
def project() -> Iterator[Path]:
    with public_dir("eg-downgrade-") as base:
        yield build(
            base / "project", [tool("shown", ["ok"], "prev ok --label shown")], isolation="unshare"
        )


@pytest.fixture(scope="module")
def unshare_runs(project: Path) -> dict[str, Result]:
    """One dry run per output format, all under unshare."""
    if shutil.which("unshare") is None:
        pytest.skip("util-linux unshare is not installed")
    reconfigure(project, isolation="unshare")
    results = {}
    for fmt in ("json", "text", "github", "junit", "sarif"):
        # A root caller's unshare run executes as a uid of its own, which must reach the
        # project; a concurrent pytest session may give pytest's base dir back its 0700.
        reachable_by_runs(project)
        results[fmt] = dryrun(project, "--format", fmt)
    return results


def _missing(result: Result) -> list[str]:
    missing: list[str] = result.runs[("shown", 0)]["isolation"]["not_guaranteed"]
    return missing


@needs_unshare
def test_unshare_named_runs_and_reports_what_did_not_hold(
    unshare_runs: dict[str, Result],
) -> None:
    result = unshare_runs["json"]

    assert result.returncode == 0, result.explain()
    entry = result.runs[("shown", 0)]
    assert entry["status"] == "passed"
    assert entry["isolation"]["backend"] == "unshare"
    missing = _missing(result)
    assert "read-only-root" in missing
    assert "home-masked" in missing
    # Everything the contract names is either held or listed as not held.
    held = set(entry["isolation"]["guarantees"])
    assert {g.value for g in sandbox.CONTRACT_GUARANTEES} <= held | set(missing)


@needs_unshare
def test_the_text_output_names_the_backend_and_every_missing_guarantee(
    unshare_runs: dict[str, Result],
) -> None:
    text = unshare_runs["text"]
    missing = _missing(unshare_runs["json"])

    assert text.returncode == 0, text.explain()
    lines = text.stdout.splitlines()
    assert lines[-2] == (
        "isolation: 1 dry run ran under unshare, not the full sandbox (bwrap); not guaranteed: "
        + ", ".join(missing)
    )
    assert lines[-1].startswith("All checks passed: ")


@needs_unshare
def test_the_github_output_warns_with_the_backend_and_every_missing_guarantee(
    unshare_runs: dict[str, Result],
) -> None:
    github = unshare_runs["github"]
    missing = _missing(unshare_runs["json"])

    assert github.returncode == 0, github.explain()
    assert (
        "::warning title=exampleguard isolation::1 dry run ran under unshare, not the full "
        f"sandbox (bwrap); not guaranteed: {', '.join(missing)}"
    ) in github.stdout.splitlines()


@needs_unshare
def test_the_junit_case_names_the_backend_and_every_missing_guarantee(
    unshare_runs: dict[str, Result],
) -> None:
    junit = unshare_runs["junit"]
    missing = _missing(unshare_runs["json"])

    assert junit.returncode == 0, junit.explain()
    case = next(
        c
        for c in ET.fromstring(junit.stdout).iter("testcase")
        if c.get("name") == "shown[0] dry run"
    )
    properties = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert properties == {
        "isolation.backend": "unshare",
        "isolation.not_guaranteed": ",".join(missing),
    }
    out = case.findtext("system-out") or ""
    assert out.splitlines()[0] == (
        "isolation: 1 dry run ran under unshare, not the full sandbox (bwrap); not guaranteed: "
        + ", ".join(missing)
    )


@needs_bwrap
def test_the_full_sandbox_prints_no_isolation_line(project: Path) -> None:
    reconfigure(project, isolation="auto")
    try:
        text = dryrun(project, "--format", "text")
        sarif = dryrun(project, "--format", "sarif")
    finally:
        reconfigure(project, isolation="unshare")

    assert text.returncode == 0, text.explain()
    assert not [line for line in text.stdout.splitlines() if line.startswith("isolation:")]
    bag = json.loads(sarif.stdout)["runs"][0]["properties"]["dryRunIsolation"]
    assert bag == {"fullSandbox": True, "gaps": []}


@needs_unshare
def test_sarif_carries_the_backend_and_every_missing_guarantee(
    unshare_runs: dict[str, Result],
) -> None:
    sarif = unshare_runs["sarif"]
    missing = _missing(unshare_runs["json"])

    bag = json.loads(sarif.stdout)["runs"][0]["properties"]["dryRunIsolation"]
    assert bag == {
        "fullSandbox": False,
        "gaps": [{"backend": "unshare", "notGuaranteed": missing, "runs": ["shown[0]"]}],
    }
