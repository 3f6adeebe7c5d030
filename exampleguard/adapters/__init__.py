"""Tree adapters: each reads one framework's command objects into a tree snapshot.

Each adapter is the only place that touches its framework's internals. They run inside the child
process that imports the application (see :mod:`exampleguard.tree`), and return plain JSON data in
the ``exampleguard.tree/v1`` shape.
"""

from exampleguard.adapters.argparser import extract_argparse
from exampleguard.adapters.clickfamily import extract_click

__all__ = ["extract_argparse", "extract_click"]
