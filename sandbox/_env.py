"""The environment of a run: an allowlist, the refusal rules for ``pass_env``, dead proxies."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Mapping

__all__ = [
    "CREDENTIAL_PATTERNS",
    "DEAD_PROXY",
    "HOOK_PATTERNS",
    "URL_PASSWORD_RULE",
    "CredentialEnvError",
    "HookEnvError",
    "PassEnvError",
    "build_env",
    "check_pass_env",
    "check_set_env",
]

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
    "*JWT*",
    "*WEBHOOK*",
    "KRB5CCNAME",
    "AWS_*",
)
"""The credential rule: a ``pass_env`` name matching any of these fnmatch patterns, compared
case-insensitively, looks like a credential and is refused.

It errs on the side of refusing (``KEYBOARD_LAYOUT`` matches ``*KEY*``, ``AWS_REGION`` matches
``AWS_*``): a refused harmless name costs a config change, a passed secret cannot be taken back.
Two patterns are narrower than the obvious ones to keep common harmless names passable:
``*AUTH`` and ``*AUTH_*`` rather than ``*AUTH*`` (``GIT_AUTHOR_NAME`` passes; ``NPM_AUTH``,
``BASIC_AUTH_USER``, ``SSH_AUTH_SOCK`` do not), and ``*_PWD`` rather than ``*PWD*`` (``PWD`` and
``OLDPWD`` pass; ``MYSQL_PWD`` does not). Whatever the name, a value that carries a password in
a URL (``scheme://user:password@host``, as in ``DATABASE_URL``) is refused too
(:data:`URL_PASSWORD_RULE`).
"""

URL_PASSWORD_RULE = "value with a password in a URL (scheme://user:password@...)"
"""The rule a ``pass_env`` entry breaks when its value, not its name, carries a credential."""

HOOK_PATTERNS: tuple[str, ...] = (
    "LD_*",
    "GLIBC_TUNABLES",
    "GCONV_PATH",
    "LOCPATH",
    "NLSPATH",
    "HOSTALIASES",
    "RESOLV_HOST_CONF",
    "MALLOC_*",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PYTHONHOME",
    "PYTHONUSERBASE",
    "PYTHONPLATLIBDIR",
    "PYTHONEXECUTABLE",
    "PYTHONBREAKPOINT",
    "PYTHONWARNINGS",
    "PYTHONINSPECT",
    "PYTHONPYCACHEPREFIX",
    "BASH_FUNC_*",
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "PROMPT_COMMAND",
    "IFS",
    "PERL5LIB",
    "PERL5OPT",
    "PERLLIB",
    "NODE_OPTIONS",
    "NODE_PATH",
    "RUBYOPT",
    "RUBYLIB",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
)
"""The loader and interpreter-hook rule: names (fnmatch, case-sensitive as the loaders read
them) that make a dynamic loader, libc or an interpreter run code the program did not ask for.
A ``pass_env`` entry matching one is refused; the run's environment never holds one."""

LOCALE_NAMES: tuple[str, ...] = (
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_ADDRESS",
    "LC_COLLATE",
    "LC_CTYPE",
    "LC_IDENTIFICATION",
    "LC_MEASUREMENT",
    "LC_MESSAGES",
    "LC_MONETARY",
    "LC_NAME",
    "LC_NUMERIC",
    "LC_PAPER",
    "LC_TELEPHONE",
    "LC_TIME",
)
"""The locale variables of POSIX and glibc, the only ones passed without ``pass_env``: a name
that merely starts with ``LC_`` (``LC_API_TOKEN``) is not a locale."""

DEAD_PROXY = "http://127.0.0.1:9"
"""Where the proxy variables point: the discard port on loopback, which nothing serves."""

_PROXY_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
_ALLOWED = frozenset({"PATH", "TERM", *LOCALE_NAMES})
# user:password@ right after a scheme's "//" (the user part may be empty: "redis://:pw@host").
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/@:\s]*:[^/@\s]+@")


class PassEnvError(ValueError):
    """``pass_env`` entries that are never passed to a run, each with the rule it breaks."""

    def __init__(self, refusals: tuple[tuple[str, str], ...], what: str, rule: str) -> None:
        self.refusals = refusals
        """(name, rule) pairs: the rule is a pattern of the documented lists or a value rule."""
        self.names = tuple(name for name, _ in refusals)
        super().__init__(
            f"pass_env names that {what} are never passed into a sandbox: "
            + ", ".join(self.names)
            + f" (the rule: {rule}; matched: "
            + ", ".join(f"{name} {matched}" for name, matched in refusals)
            + ")"
        )


class CredentialEnvError(PassEnvError):
    """A ``pass_env`` entry looks like a credential; it is never passed to a run.

    Its name matches :data:`CREDENTIAL_PATTERNS`, or its value carries a password in a URL.
    """

    def __init__(self, refusals: tuple[tuple[str, str], ...]) -> None:
        super().__init__(
            refusals, "look like credentials", "sandbox.CREDENTIAL_PATTERNS, case-insensitive"
        )


class HookEnvError(PassEnvError):
    """A ``pass_env`` entry is a loader or interpreter hook (:data:`HOOK_PATTERNS`)."""

    def __init__(self, refusals: tuple[tuple[str, str], ...]) -> None:
        super().__init__(refusals, "steer a loader or an interpreter", "sandbox.HOOK_PATTERNS")


def credential_rule(name: str, value: str | None = None) -> str | None:
    """The credential rule ``name`` (or its ``value``) breaks, or ``None``."""
    upper = name.upper()
    for pattern in CREDENTIAL_PATTERNS:
        if fnmatch.fnmatchcase(upper, pattern):
            return pattern
    if value is not None and _URL_PASSWORD.search(value):
        return URL_PASSWORD_RULE
    return None


def hook_rule(name: str) -> str | None:
    """The loader or interpreter-hook pattern ``name`` matches, or ``None``."""
    return next((p for p in HOOK_PATTERNS if fnmatch.fnmatchcase(name, p)), None)


def looks_like_credential(name: str) -> bool:
    """Tell whether an environment variable name matches the credential rule."""
    return credential_rule(name) is not None


def check_pass_env(names: Iterable[str], source: Mapping[str, str] | None = None) -> None:
    """Raise for ``pass_env`` entries that may never reach a run, naming each with its rule.

    :class:`HookEnvError` for loader and interpreter hooks first, then
    :class:`CredentialEnvError` for credential-like names and, where ``source`` (the environment
    the values come from) is given, for values carrying a password in a URL.
    """
    names = tuple(names)
    hooks = tuple((n, rule) for n in names if (rule := hook_rule(n)) is not None)
    if hooks:
        raise HookEnvError(hooks)
    values = source if source is not None else {}
    credentials = tuple(
        (n, rule) for n in names if (rule := credential_rule(n, values.get(n))) is not None
    )
    if credentials:
        raise CredentialEnvError(credentials)


def check_set_env(names: Iterable[str]) -> None:
    """Raise :class:`HookEnvError` for values a caller would set on a loader or interpreter hook.

    Values the caller sets are its own (no credential can leak from an environment through
    them), but a hook would still make the loader or the interpreter run code nobody asked for.
    """
    hooks = tuple((n, rule) for n in names if (rule := hook_rule(n)) is not None)
    if hooks:
        raise HookEnvError(hooks)


def build_env(
    source: Mapping[str, str],
    pass_env: Iterable[str],
    dirs: Mapping[str, str],
    set_env: Iterable[tuple[str, str]] = (),
) -> dict[str, str]:
    """Build a run's environment from nothing: the allowlist read from ``source``, then ``dirs``.

    ``dirs`` (HOME, XDG dirs, TMPDIR inside the work dir) and the dead proxies are set last, so
    no ``pass_env`` entry can override them; XDG_RUNTIME_DIR is never set. The ``pass_env``
    rules are checked again against ``source``, whose values may differ from the policy's.
    """
    pass_env = tuple(pass_env)
    check_pass_env(pass_env, source)
    env: dict[str, str] = {"PATH": source.get("PATH", os.defpath)}
    for name, value in source.items():
        if name in _ALLOWED:
            env[name] = value
    for name in pass_env:
        if name in source:
            env[name] = source[name]
    env.update(set_env)
    env.update(dirs)
    for name in _PROXY_NAMES:
        env[name] = env[name.lower()] = DEAD_PROXY
    env["NO_PROXY"] = env["no_proxy"] = ""
    env.pop("XDG_RUNTIME_DIR", None)
    return env
