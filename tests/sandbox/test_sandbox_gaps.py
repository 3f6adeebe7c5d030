"""The documented gaps of ``unshare`` and ``env``: real, and never claimed.

A file a run leaves in a world-writable host directory outlives it under both backends, and
their outcomes list ``work-dir-only-writable`` as not guaranteed; the full sandbox leaves
nothing. (Concurrent runs of an unprivileged caller sharing its uid is the other gap; the
escape suite shows runs of the full sandbox cannot reach each other.)
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import pytest
from sbx_support import World, unshare_only_path

import sandbox
from sandbox import Guarantee, Status

pytestmark = pytest.mark.sandbox


@pytest.mark.parametrize("isolation", ["unshare", "env", "auto"])
def test_a_file_left_in_a_world_writable_host_dir(
    world: World, tmp_path: Path, isolation: str
) -> None:
    if isolation == "unshare" and shutil.which("unshare") is None:
        pytest.skip("util-linux unshare is not installed")
    if isolation == "auto" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    left = world.host_tmp / f"left-{uuid.uuid4().hex}"
    env = dict(world.source_env)
    if isolation == "unshare":
        env["PATH"] = unshare_only_path(tmp_path)
    script = f"echo left > {left}; echo done"

    outcome = sandbox.run(
        world.policy(("/bin/sh", "-c", script), isolation=isolation, source_env=env)
    )

    assert outcome.status is Status.PASSED, outcome.stderr + str(outcome.detail)
    if isolation == "auto":
        assert not left.exists()
        assert Guarantee.WORK_DIR_ONLY_WRITABLE in outcome.guarantees
        return
    # The gap: the file outlives the run, and the outcome never claimed otherwise.
    assert left.read_text(encoding="utf-8") == "left\n"
    assert Guarantee.WORK_DIR_ONLY_WRITABLE in outcome.not_guaranteed
    # umask 077: private to the run's uid.
    assert left.stat().st_mode & 0o077 == 0
    if os.geteuid() == 0:
        assert left.stat().st_uid in sandbox.RUN_UIDS
    left.unlink()
