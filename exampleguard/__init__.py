"""exampleguard: keep the command examples a CLI publishes to AI agents true.

The public surface is small: the ``exampleguard`` command, :func:`main` (the command line, run
in this process), the pytest plugin (:mod:`exampleguard.pytest_plugin`) and the file formats
(:mod:`exampleguard.schemas`). Every module whose name starts with an underscore is internal:
it may change in any release.
"""

from exampleguard._version import VERSION as __version__

__all__ = ["__version__", "main"]


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return its exit code.

    It runs in this process and never exits it: a harness embedding exampleguard gets the code
    ``exampleguard`` would have exited with.
    """
    # Imported when called: ``import exampleguard`` (every internal module's import begins
    # with it) stays free of the command line and Typer.
    from exampleguard.cli import main as run  # noqa: PLC0415

    return run(argv)
