"""``python -m exampleguard``."""

from exampleguard.cli import entry_point

__all__: list[str] = []

if __name__ == "__main__":
    entry_point()
