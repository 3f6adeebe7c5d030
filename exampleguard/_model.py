"""The parameter model shared by catalogs and tree snapshots, and the strict base for every format.

Every file format is a pydantic model that is strict (``"5"`` is not an integer) and closed
(unknown keys are rejected). A parameter describes one option or positional of a command the way
the framework parses it; the fields beyond SPEC section 3.2 (``hidden``, ``eager``, ``prompt``,
``confirmation``, ``case_sensitive``, ``min``/``max`` and their openness, ``formats``, ``nargs``
as ``"?"``/``"*"``/``"+"``/``"..."``, ``type`` as a list for tuples) are optional additions that
let a tree snapshot say what Click, Typer and argparse really accept.
"""

# No ``from __future__ import annotations`` in the modules of pydantic models: pydantic would
# evaluate each annotation string as the class is made, a third of these modules' import time.
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, Self, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    Strict,
    StringConstraints,
    TypeAdapter,
    model_validator,
)
from pydantic.dataclasses import dataclass as pydantic_dataclass

__all__ = [
    "DIALECTS",
    "DIALECT_NAMES",
    "NO_CONSTRAINTS",
    "RECORD",
    "Alias",
    "Constraints",
    "Dialect",
    "DialectFacts",
    "Flag",
    "Nargs",
    "NonEmpty",
    "ParamType",
    "Parameter",
    "ParserSettings",
    "StrictModel",
    "StrictRecord",
    "Text",
    "Whole",
    "empty_dict",
    "empty_list",
    "spoken_dialects",
]

# Strict by annotation as well as by configuration: the records below are pydantic dataclasses,
# whose strictness has to live in their field types.
Text = Annotated[str, Strict()]
Flag = Annotated[bool, Strict()]
Whole = Annotated[int, Strict()]
Number = Annotated[int, Strict()] | Annotated[float, Strict()]
# Literals need no marker: they match only their own values.
DIALECT_NAMES: tuple[str, ...] = ("click", "argparse", "cobra")
"""The dialects, as catalogs and trees name them: whose parsing rules an example is bound with
(Click and Typer share ``click``; ``cobra`` is Go's cobra with pflag). Each has its facts below
(:data:`DIALECTS`) and a binder in :mod:`exampleguard._bind`; adding one regenerates the
committed JSON Schemas, which list them."""
if TYPE_CHECKING:
    # A Literal built from the registry is opaque to a type checker; to it, a name is a name.
    Dialect = str
else:
    # The registered names, as the Literal of their spellings (``Literal[("a", "b")]`` is
    # ``Literal["a", "b"]``): validation, error messages and the schemas list exactly these.
    Dialect = Literal[DIALECT_NAMES]
ParamType = Literal["string", "integer", "number", "boolean", "path", "datetime", "uuid"]
Nargs = Whole | Literal["?", "*", "+", "..."]
NonEmpty = Annotated[str, Strict(), StringConstraints(min_length=1)]
Choice = Text | Annotated[int, Strict()] | Annotated[float, Strict()]
# Another spelling of a command: its words from the program on, at least one of them.
Alias = Annotated[list[NonEmpty], Field(min_length=1)]


def empty_list() -> list[Any]:
    """A new empty list: the ``default_factory`` of list fields.

    Not ``list`` itself: for a builtin, pydantic reads the signature from its text, which costs
    a start-up a few milliseconds more.
    """
    return []


def empty_dict() -> dict[str, Any]:
    """A new empty dict: the ``default_factory`` of mapping fields (see :func:`empty_list`)."""
    return {}


class StrictModel(BaseModel):
    """Base of every format model: strict types, unknown keys rejected, immutable."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


RECORD = ConfigDict(extra="forbid")
"""The configuration of format records; their field types carry the strictness."""


class StrictRecord:
    """Base of format records that exist by the hundred thousand (parameters, examples).

    They are frozen pydantic dataclasses with slots rather than models: a large catalog holds
    one per parameter, and a model's per-instance dictionary costs several times the memory.
    ``model_validate`` and ``model_dump`` behave as on a model.
    """

    __slots__ = ()

    @classmethod
    def model_validate(cls, data: Any) -> Self:
        """Validate ``data`` into an instance (strict, unknown keys rejected)."""
        return cast(Self, _adapter(cls).validate_python(data))

    def model_dump(self, **options: Any) -> dict[str, Any]:
        """The instance as plain data; takes the options of ``BaseModel.model_dump``."""
        return cast(dict[str, Any], _adapter(type(self)).dump_python(self, **options))


_ADAPTERS: dict[type, TypeAdapter[Any]] = {}


def _adapter(cls: type) -> TypeAdapter[Any]:
    adapter = _ADAPTERS.get(cls)
    if adapter is None:
        adapter = _ADAPTERS[cls] = TypeAdapter(cls)
    return adapter


@pydantic_dataclass(frozen=True, slots=True, config=RECORD)
class Parameter(StrictRecord):
    """One option or positional parameter of a command.

    An instance is immutable; derive a changed parameter with :meth:`with_changes`, which
    validates the result.

    An option has ``flags``; a positional has ``positional = true`` and no flags. ``nargs`` is the
    number of values per occurrence: absent means 0 for a boolean or ``count`` option and 1
    otherwise; ``-1`` (or ``"*"``/``"+"``) is a variadic positional; ``"?"`` is an optional value
    (an option that may be given bare, or an optional positional); ``"..."`` takes every remaining
    word (argparse ``REMAINDER``).
    """

    name: NonEmpty
    flags: list[NonEmpty] = Field(default_factory=empty_list)
    positional: Flag = False
    type: ParamType | list[ParamType] = "string"
    choices: list[Choice] | None = None
    required: Flag | None = None
    multiple: Flag = False
    nargs: Nargs | None = None
    negation_flags: list[NonEmpty] = Field(default_factory=empty_list)
    count: Flag = False
    persistent: Flag = False
    description: Text | None = None
    default: JsonValue = None
    hidden: Flag = False
    eager: Flag = False
    prompt: Flag = False
    confirmation: Flag = False
    """A yes/no prompt the command always asks unless the flag is given, whose value the command
    never sees (Click's ``confirmation_option``): giving the flag only skips a confirmation."""
    destination: NonEmpty | None = None
    """Where the framework stores the value, recorded only when other parameters of the command
    store into it too (Click's ``--upper``/``--lower`` both setting ``transform``, argparse's
    shared ``dest``): each keeps a ``name`` of its own, and giving one overwrites the others."""
    flag_value: Flag | None = None
    """The boolean a switch stores when given, recorded only where it is not "not its default"
    (Click's ``--reload`` with ``default=True, flag_value=True``, argparse's ``store_const``
    of ``False``); absent, a switch stores ``True``, or ``False`` for a default of ``True``."""
    case_sensitive: Flag = True
    own_convert: Flag = False
    """Click: the parameter's type derives from a framework type (a ``click.Choice`` subclass)
    and converts with its own ``convert``, which the framework's parser runs. ``choices`` and
    ``case_sensitive`` are what that ``convert`` accepted when the tree was read (no
    ``choices``: it accepts any word); the value is the word as written, since what the
    application's ``convert`` makes of it is known only to the framework's parser."""
    min: Number | None = None
    max: Number | None = None
    min_open: Flag = False
    max_open: Flag = False
    formats: list[Text] | None = None
    item_choices: list[list[Choice] | None] | None = None
    pflag_type: NonEmpty | None = None
    """cobra: the flag's pflag value type (``Value.Type()``: ``stringSlice``, ``count``,
    ``uint8``...), which decides how its words convert and accumulate; absent, it follows from
    ``type``, ``count`` and ``multiple``."""
    no_opt_default: Text | None = None
    """cobra: pflag's ``NoOptDefVal``, the value a flag given without one takes (``--color``
    as ``--color=auto``; ``true`` for a switch, ``+1`` for a counter); absent, the flag needs
    its value, unless it is a switch or a counter."""

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.positional and (self.flags or self.negation_flags):
            raise ValueError("a positional parameter has no flags")
        if not self.positional and not self.flags:
            raise ValueError("an option needs at least one flag (or set positional = true)")
        if self.positional and (self.count or self.persistent):
            raise ValueError("count and persistent apply to options only")
        if self.positional and self.nargs == 0:
            raise ValueError("a positional parameter takes at least one value")
        if isinstance(self.nargs, int) and self.nargs < -1:
            raise ValueError("nargs is -1 (variadic) or a number of values of at least 0")
        if self.count and self.values_per_occurrence != 0:
            raise ValueError("a count parameter takes no value")
        if isinstance(self.type, list) and len(self.type) != self.values_per_occurrence:
            raise ValueError("a list of types needs one type per value (nargs)")
        if self.item_choices is not None and len(self.item_choices) != self.values_per_occurrence:
            raise ValueError("item_choices needs one entry (or null) per value (nargs)")
        if self.flag_value is not None and (
            not self.is_flag or self.count or self.negation_flags or self.type != "boolean"
        ):
            raise ValueError(
                "flag_value applies to a boolean switch without negation_flags or count"
            )
        if self.confirmation and not (self.prompt and self.is_flag):
            raise ValueError("confirmation is a flag that prompts (prompt = true, no value)")
        if self.positional and (self.pflag_type is not None or self.no_opt_default is not None):
            raise ValueError("pflag_type and no_opt_default apply to options only")
        return self

    @property
    def is_flag(self) -> bool:
        """Whether this is an option that takes no value (a boolean switch or a counter)."""
        return not self.positional and self.values_per_occurrence == 0

    @property
    def values_per_occurrence(self) -> int | str:
        """The effective ``nargs``: the declared one, or the default for the type."""
        if self.nargs is not None:
            return self.nargs
        if self.positional:
            return 1
        return 0 if self.count or self.type == "boolean" else 1

    @property
    def variadic(self) -> bool:
        """Whether a positional takes any number of values."""
        return self.nargs in (-1, "*", "+", "...")

    @property
    def is_required(self) -> bool:
        """Whether the parameter must be given: explicit ``required``, else SPEC's defaults.

        Options are optional unless marked; positionals are required unless variadic (``-1``,
        ``"*"``, ``"..."``) or optional (``"?"``); ``"+"`` needs at least one value.
        """
        if self.required is not None:
            return self.required
        if not self.positional:
            return False
        return self.nargs not in (-1, "*", "?", "...")

    @property
    def all_flags(self) -> list[str]:
        """Every option string that gives this parameter, negations included."""
        return [*self.flags, *self.negation_flags]

    def with_changes(self, **changes: object) -> "Parameter":
        """A new, validated parameter with ``changes`` applied."""
        return Parameter.model_validate({**self.model_dump(exclude_defaults=True), **changes})

    def value_type(self, position: int) -> ParamType:
        """The type of the ``position``-th value of one occurrence."""
        if isinstance(self.type, list):
            return self.type[position] if position < len(self.type) else "string"
        return self.type

    def display(self) -> str:
        """How people refer to the parameter: its first long flag, or its name in capitals."""
        if self.positional:
            return self.name.upper()
        longs = [flag for flag in self.flags if len(flag) > 2]
        return (longs or self.flags)[0]


@pydantic_dataclass(frozen=True, slots=True, config=RECORD)
class Constraints(StrictRecord):
    """Cross-parameter rules of one command, by parameter ``name``."""

    require_one_of: list[list[NonEmpty]] = Field(default_factory=empty_list)
    require_together: list[list[NonEmpty]] = Field(default_factory=empty_list)
    mutually_exclusive: list[list[NonEmpty]] = Field(default_factory=empty_list)

    def merged(self, other: "Constraints") -> "Constraints":
        """Return these constraints with ``other``'s groups added (duplicates kept once)."""

        def union(mine: list[list[str]], theirs: list[list[str]]) -> list[list[str]]:
            result = [list(group) for group in mine]
            for group in theirs:
                if group not in result:
                    result.append(list(group))
            return result

        return Constraints(
            require_one_of=union(self.require_one_of, other.require_one_of),
            require_together=union(self.require_together, other.require_together),
            mutually_exclusive=union(self.mutually_exclusive, other.mutually_exclusive),
        )


NO_CONSTRAINTS = Constraints()
"""The constraints of a command that has none (shared: records are immutable)."""


class ParserSettings(StrictModel):
    """How one command's parser treats words, where it departs from its dialect's defaults.

    Click reads these from the context settings (``allow_interspersed_args`` is false for every
    group); argparse from the parser (``allow_abbrev``, ``prefix_chars``,
    ``fromfile_prefix_chars``: the characters that make a word an ``@file`` argument) and, for
    the root, from the configuration (``intermixed``: the program parses with
    ``parse_intermixed_args``). cobra from the
    command: ``allow_interspersed_args`` (pflag's ``SetInterspersed``), ``ignore_unknown_options``
    (``FParseErrWhitelist.UnknownFlags``), ``disable_flag_parsing``, ``traverse_children`` (the
    root's), and its argument validator: ``legacy_args`` (no validator: at the root of a program
    with subcommands a word is a command), ``custom_args`` (a validator exampleguard cannot
    read: its verdict is the program's), else ``min_args`` to ``max_args`` (``None``: no most)
    arguments, which the positional parameter's ``choices`` restrict (``OnlyValidArgs``).
    """

    allow_interspersed_args: bool = True
    ignore_unknown_options: bool = False
    allow_extra_args: bool = False
    no_args_is_help: bool = False
    allow_abbrev: bool = True
    prefix_chars: NonEmpty = "-"
    fromfile_prefix_chars: NonEmpty | None = None
    intermixed: bool = False
    min_args: Annotated[int, Strict(), Field(ge=0)] = 0
    max_args: Annotated[int, Strict(), Field(ge=0)] | None = None
    legacy_args: bool = False
    custom_args: bool = False
    traverse_children: bool = False
    disable_flag_parsing: bool = False


@dataclass(frozen=True, slots=True)
class DialectFacts:
    """What the contract needs to know of a dialect's framework, as plain data.

    ``catalog_group`` and ``catalog_command`` are the parser settings of a catalog-only command
    tree's nodes (with no tree, the catalog's command paths form the routing tree): how a node
    with subcommands, and one without, treats its words. ``enforces_constraints`` says whether
    the framework's parser itself rejects what a tree snapshot's constraints forbid (argparse's
    mutually exclusive and required groups); if not, the rules stage checks them like the
    catalog's own.
    """

    catalog_group: ParserSettings
    catalog_command: ParserSettings
    enforces_constraints: bool


DIALECTS: dict[str, DialectFacts] = {
    # A Click group keeps its options before the subcommand and passes the rest on. Click has
    # no constraints of its own: those a Click tree records are cloup's, which its commands
    # check as they parse (a catalog's own constraints stay the rules stage's).
    "click": DialectFacts(
        catalog_group=ParserSettings(allow_interspersed_args=False, allow_extra_args=True),
        catalog_command=ParserSettings(),
        enforces_constraints=True,
    ),
    # Every argparse parser, with subparsers or without, reads its words the same way, and
    # parse_args itself rejects what a mutually exclusive or required group forbids.
    "argparse": DialectFacts(
        catalog_group=ParserSettings(),
        catalog_command=ParserSettings(),
        enforces_constraints=True,
    ),
    # A cobra command without a validator takes any words; its flag groups (mutually
    # exclusive, required together, one required) are checked by cobra before the command runs.
    "cobra": DialectFacts(
        catalog_group=ParserSettings(),
        catalog_command=ParserSettings(),
        enforces_constraints=True,
    ),
}
"""Each dialect's facts, by name, in :data:`DIALECT_NAMES` order."""


def spoken_dialects() -> str:
    """The dialect names as a sentence lists them: ``click or argparse``."""
    if len(DIALECT_NAMES) == 1:
        return DIALECT_NAMES[0]
    return f"{', '.join(DIALECT_NAMES[:-1])} or {DIALECT_NAMES[-1]}"
