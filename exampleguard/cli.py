"""Command-line interface."""


def entry_point() -> None:
    """Console-script entry point."""
