"""Run one argv in isolation and report what happened.

A :class:`Policy` goes in, an :class:`Outcome` comes out: status, exit code, capped output,
duration, the backend used and the :class:`Guarantee` values that held. Backends, strongest
first: bubblewrap (``bwrap``), util-linux ``unshare``, and ``env`` (only when asked for by name).
This package knows nothing about catalogs or examples and uses the standard library only.
"""

from sandbox._backends import probe_backends, select_backend
from sandbox._env import CREDENTIAL_PATTERNS, CredentialEnvError, check_pass_env
from sandbox._registry import ProcessRegistry, kill_all
from sandbox._run import run
from sandbox._types import (
    CONTRACT_GUARANTEES,
    BackendReport,
    Guarantee,
    Isolation,
    IsolationUnavailable,
    Limits,
    Outcome,
    Policy,
    Status,
)

__all__ = [
    "CONTRACT_GUARANTEES",
    "CREDENTIAL_PATTERNS",
    "BackendReport",
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
