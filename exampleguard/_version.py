"""exampleguard's version, where every module reads it (the package re-exports it)."""

__all__ = ["VERSION"]

VERSION = "0.1.0"
