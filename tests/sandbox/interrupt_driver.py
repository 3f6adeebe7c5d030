"""Behave like exampleguard under SIGTERM: kill every live run, then exit 130.

Argument: a JSON spec with ``argv``, ``readable``, ``jobs`` and optionally ``path`` (the PATH
backends are found on) and ``isolation``. One run happens in the main thread (as with
``--jobs 1``), the others in worker threads.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

import sandbox


def _stop(signum: int, frame: FrameType | None) -> None:
    sandbox.kill_all()
    sys.exit(130)


def main(argv: list[str]) -> int:
    spec = json.loads(argv[1])
    policy = sandbox.Policy(
        argv=tuple(spec["argv"]),
        # The test's interpreter and probe, vouched for wherever the checkout lies.
        trusted_readable=tuple(Path(p) for p in spec["readable"]),
        source_env={"PATH": spec["path"]} if "path" in spec else None,
        isolation=sandbox.Isolation(spec.get("isolation", "auto")),
    )
    signal.signal(signal.SIGTERM, _stop)
    workers = [
        threading.Thread(target=sandbox.run, args=(policy,)) for _ in range(spec["jobs"] - 1)
    ]
    for worker in workers:
        worker.start()
    sandbox.run(policy)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
