"""The environment of a run: an allowlist, a credential rule, and dead proxies."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping

CREDENTIAL_PATTERNS: tuple[str, ...] = (
    "*TOKEN*",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*PASSPHRASE*",
    "*PASS",
    "*_PWD",
    "*KEY*",
    "*CREDENTIAL*",
    "*CREDS*",
    "*AUTH",
    "*AUTH_*",
    "*AUTHORIZATION*",
    "*COOKIE*",
    "*PRIVATE*",
    "*DSN*",
    "*_PAT",
    "AWS_*",
)
"""The credential rule: a ``pass_env`` name matching any of these fnmatch patterns, compared
case-insensitively, looks like a credential and is refused.

It errs on the side of refusing (``KEYBOARD_LAYOUT`` matches ``*KEY*``, ``AWS_REGION`` matches
``AWS_*``): a refused harmless name costs a config change, a passed secret cannot be taken back.
Two patterns are narrower than the obvious ones to keep common harmless names passable:
``*AUTH`` and ``*AUTH_*`` rather than ``*AUTH*`` (``GIT_AUTHOR_NAME`` passes; ``NPM_AUTH``,
``BASIC_AUTH_USER``, ``SSH_AUTH_SOCK`` do not), and ``*_PWD`` rather than ``*PWD*`` (``PWD`` and
``OLDPWD`` pass; ``MYSQL_PWD`` does not).
"""

DEAD_PROXY = "http://127.0.0.1:9"
"""Where the proxy variables point: the discard port on loopback, which nothing serves."""

_PROXY_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
_ALLOWED = ("PATH", "LANG", "LANGUAGE", "TERM")


class CredentialEnvError(ValueError):
    """A ``pass_env`` name looks like a credential; it is never passed to a run."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        super().__init__(
            "pass_env names that look like credentials are never passed into a sandbox: "
            + ", ".join(names)
            + " (the rule: sandbox.CREDENTIAL_PATTERNS, case-insensitive)"
        )


def looks_like_credential(name: str) -> bool:
    """Tell whether an environment variable name matches the credential rule."""
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in CREDENTIAL_PATTERNS)


def check_pass_env(names: Iterable[str]) -> None:
    """Raise :class:`CredentialEnvError` naming every entry that looks like a credential."""
    offending = tuple(name for name in names if looks_like_credential(name))
    if offending:
        raise CredentialEnvError(offending)


def build_env(
    source: Mapping[str, str], pass_env: Iterable[str], dirs: Mapping[str, str]
) -> dict[str, str]:
    """Build a run's environment from nothing: the allowlist read from ``source``, then ``dirs``.

    ``dirs`` (HOME, XDG dirs, TMPDIR inside the work dir) and the dead proxies are set last, so
    no ``pass_env`` entry can override them; XDG_RUNTIME_DIR is never set.
    """
    env: dict[str, str] = {"PATH": source.get("PATH", os.defpath)}
    for name, value in source.items():
        if name in _ALLOWED or name.startswith("LC_"):
            env[name] = value
    for name in pass_env:
        if name in source:
            env[name] = source[name]
    env.update(dirs)
    for name in _PROXY_NAMES:
        env[name] = env[name.lower()] = DEAD_PROXY
    env["NO_PROXY"] = env["no_proxy"] = ""
    env.pop("XDG_RUNTIME_DIR", None)
    return env
