"""What each CLI sub-command does, one module per sub-command.

Each module's functions load, check and render, and return data and exit codes: they never
print, never call ``sys.exit``, and never change the working directory or the environment, so
tests and the pytest plugin call them directly. The CLI (:mod:`exampleguard.cli`) parses options
and prints.

- :mod:`~exampleguard._commands.validate`: ``validate`` (and the evaluation every command shares)
- :mod:`~exampleguard._commands.counts`: ``counts``
- :mod:`~exampleguard._commands.tree`: ``tree``
- :mod:`~exampleguard._commands.schema`: ``schema``
- :mod:`~exampleguard._commands.records`: ``dispositions add|exclude|list|check``
- :mod:`~exampleguard._commands.dryrun`: ``dryrun`` and ``sandbox``
- :mod:`~exampleguard._commands.init`: ``init``
- :mod:`~exampleguard._commands.merge`: ``report merge``
"""

__all__: list[str] = []
