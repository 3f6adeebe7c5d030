"""Reading every record file under ``dispositions/``, each error with its file and place."""

from __future__ import annotations

from pathlib import Path

from exampleguard._codes import (
    FILE_UNREADABLE,
)
from exampleguard._diagnostics import Diagnostic, Location
from exampleguard._dispositions.records import (
    DOC_EXCEPTIONS_FILE,
    EXCLUSIONS_FILE,
    GATES_FILE,
    DispositionFile,
    DocExceptionFile,
    ExclusionFile,
    GateFile,
    LoadedDispositions,
    Record,
)
from exampleguard._documents import SourceError, load_document, validate_model

__all__ = ["all_errors", "load_dispositions", "refuse_escape"]


def load_dispositions(folder: Path, root: Path, display: str) -> LoadedDispositions:
    """Load every ``*.toml`` under ``folder``; a missing folder means no records.

    Raises ``SourceError`` for a file that cannot be read or does not have the expected shape,
    and for a file that is a symlink to somewhere outside the project ``root``.
    """
    loaded = LoadedDispositions()
    if not folder.exists():
        return loaded
    if not folder.is_dir():
        raise SourceError(
            FILE_UNREADABLE.diagnostic(
                message=f"{display} is not a folder",
                location=Location(display),
            )
        )
    errors: list[Diagnostic] = []
    for path in sorted(folder.glob("*.toml")):
        shown = f"{display}/{path.name}"
        try:
            refuse_escape(path, root, shown)
            document = load_document(path, shown)
            if path.name == DOC_EXCEPTIONS_FILE:
                doc = validate_model(DocExceptionFile, document)
                loaded.doc_exceptions.extend(
                    Record(value, document, i) for i, value in enumerate(doc.doc_exception)
                )
            elif path.name == GATES_FILE:
                gates = validate_model(GateFile, document)
                loaded.gates.extend(Record(v, document, i) for i, v in enumerate(gates.gate))
            elif path.name == EXCLUSIONS_FILE:
                exclusions = validate_model(ExclusionFile, document)
                loaded.exclusions.extend(
                    Record(value, document, i) for i, value in enumerate(exclusions.exclusion)
                )
            else:
                records = validate_model(DispositionFile, document)
                loaded.dispositions.extend(
                    Record(value, document, i) for i, value in enumerate(records.disposition)
                )
        except SourceError as error:
            errors.append(error.diagnostic)
    if errors:
        raise _Many(errors)
    return loaded


class _Many(SourceError):
    """Several files failed; the first is the exception's diagnostic, all are in ``all``."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__(diagnostics[0])
        self.all = diagnostics


def all_errors(error: SourceError) -> list[Diagnostic]:
    """Every diagnostic a ``SourceError`` carries (a folder can fail in several files)."""
    return list(error.all) if isinstance(error, _Many) else [error.diagnostic]


def refuse_escape(path: Path, root: Path, shown: str) -> None:
    """Refuse ``path`` if it is a symlink loop, or a link that leads outside ``root``."""
    try:
        resolved = path.resolve()
    except (RuntimeError, OSError):
        # Python 3.11 reports a symlink loop as RuntimeError.
        raise SourceError(
            FILE_UNREADABLE.diagnostic(
                message=f"{shown} is a symlink loop",
                location=Location(shown),
            )
        ) from None
    if resolved != path.absolute() and not resolved.is_relative_to(root.resolve()):
        raise SourceError(
            FILE_UNREADABLE.diagnostic(
                message=f"{shown} is a symlink to {resolved}, outside the project; reviewer "
                "records must live in the repository",
                location=Location(shown),
            )
        )
