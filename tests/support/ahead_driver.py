"""A process of its own that starts a live tree's child ahead, as ``validate`` does.

``python -m tests.support.ahead_driver ROOT ACTION`` starts the child of ROOT's tree
``click:app_module:cli`` ahead (this process has one thread, so a helper process is forked to
run it), prints a JSON line with the helper's pid, then:

- ``ask``: asks about ``--x 1`` and ``--x one`` and prints the verdicts as a JSON line;
- ``wait``: waits until the child waits for its questions, prints ``waiting``, and sleeps
  until it is killed;
- ``drop``: waits as ``wait`` does, then claims the child for another time limit (which stops
  it) and prints whether the helper is still a process.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from exampleguard import treechild
from exampleguard.tree import JudgedTree, TreeSpec, load_judged_tree

ARGVS = [["--x", "1"], ["--x", "one"]]
"""The questions asked about the application: one example it accepts, one it rejects."""


def load_app_tree(root: Path, *, argvs: list[list[str]] = ARGVS, **options: Any) -> JudgedTree:
    """Load ROOT's tree ``click:app_module:cli`` (program ``app``) as ``validate`` does.

    ``options`` go to :func:`~exampleguard.tree.load_judged_tree` (``timeout`` 30 unless given).
    """
    return load_judged_tree(
        TreeSpec("click", "app_module", "cli"),
        root=root,
        display="tree",
        program="app",
        argvs=argvs,
        **{"timeout": 30, **options},
    )


def _waiting(child: treechild.ContainedChild) -> None:
    deadline = time.monotonic() + 60
    while child._frames.waiting_since is None:
        if time.monotonic() > deadline:
            raise SystemExit("the child never waited for its questions")
        time.sleep(0.01)


def main() -> None:
    """Run ACTION (see the module) for the project at ROOT."""
    root, action = Path(sys.argv[1]).resolve(), sys.argv[2]
    treechild.start_ahead(None, root, cached=False)
    child = treechild._ahead
    helper = child._helper if child is not None else None
    print(json.dumps({"helper": helper}), flush=True)
    if action == "ask":
        judged = load_app_tree(root)
        verdicts = {" ".join(argv): verdict.accepted for argv, verdict in judged.verdicts.items()}
        print(json.dumps(verdicts), flush=True)
        return
    assert child is not None
    _waiting(child)
    if action == "wait":
        print("waiting", flush=True)
        time.sleep(600)
        return
    taken = treechild.take_ahead("click", "app_module", "cli", root=root, timeout=1.0, inputs=False)
    assert taken is None, "a child started for another time limit was handed out"
    print(json.dumps({"helper_alive": helper is not None and _alive(helper)}), flush=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


if __name__ == "__main__":
    main()
