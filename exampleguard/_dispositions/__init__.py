"""Reviewer decisions: dry-run dispositions and coverage exclusions, both in ``dispositions/``.

A *disposition* removes one exact example of a tool with a reviewed dry-run capability from the
dry-run set, for an approved, reason-coded, concrete reason. It never removes anything from
contract validation. An *exclusion* (``dispositions/exclusions.toml``) says why one exact
runnable command is not offered to agents. A *doc exception* (``dispositions/doc-exceptions.toml``)
says why one exact command text of a documentation file is wrong on purpose. A *gate record*
(``dispositions/gates.toml``) says where a command asks for confirmation in application code
that no tree can see (:mod:`exampleguard._safety` checks it). All are checked on
every ``validate``: invalid, stale and duplicate records fail the run.

The package follows the data: the records' formats (``records``), reading them (``load``),
checking them (``check``) and writing them (``write``, for ``exampleguard dispositions`` and
``exclusions``).
"""

__all__: list[str] = []
