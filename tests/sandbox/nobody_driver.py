"""Run one sandboxed probe as the calling user and print the outcome as JSON.

The suite runs this with ``setpriv --reuid 65534`` so that the bubblewrap backend is exercised
by an unprivileged caller too, and as either caller on a terminal or with none. Argument: a
JSON spec with ``argv``, ``project_dir``, ``probe_dir``, ``source_env`` and optional ``limits``,
``fixtures``, ``isolation`` and ``landlock`` (false: run as on a kernel without Landlock).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import sandbox
import sandbox._host


def main(argv: list[str]) -> int:
    spec = json.loads(argv[1])
    if not spec.get("landlock", True):
        # As on a kernel without it: the probe finds ABI 0, and no run enters a ruleset.
        sandbox._host.landlock_abi = lambda: 0
    real = Path(sys.executable).resolve()
    readable = {
        Path(sys.prefix),
        Path(sys.base_prefix),
        real.parent.parent,
        Path(spec["probe_dir"]),
    }
    policy = sandbox.Policy(
        argv=tuple(spec["argv"]),
        project_dir=Path(spec["project_dir"]),
        # The test's interpreter and probe, vouched for wherever the checkout lies.
        trusted_readable=tuple(sorted(readable)),
        pass_env=tuple(spec.get("pass_env", ())),
        source_env=spec["source_env"],
        limits=sandbox.Limits(**spec.get("limits", {})),
        fixtures=Path(spec["fixtures"]) if "fixtures" in spec else None,
        isolation=sandbox.Isolation(spec.get("isolation", "auto")),
    )
    outcome = sandbox.run(policy)
    print(json.dumps(dataclasses.asdict(outcome)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
