"""pflag's flag values, as Go converts and accumulates them: strconv, encoding/csv and pflag.

A cobra program reads each flag through pflag's ``Value.Set``, which converts with Go's
``strconv`` (``ParseBool``, ``ParseInt(s, 0, bits)`` with its base prefixes and underscores,
``ParseFloat`` with its hexadecimal mantissas and special names, ``Atoi``) and, for
``stringSlice``, reads the word as one CSV record with Go's ``encoding/csv``. The first word
given replaces a slice's default; the next ones append. Each function here returns the value
Go would hold, or raises :class:`GoSyntaxError` where Go returns an error: the word is refused.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

__all__ = [
    "GoSyntaxError",
    "PflagValue",
    "parse_bool",
    "parse_float",
    "parse_int",
    "parse_uint",
    "read_csv_record",
    "value_kind",
]


class GoSyntaxError(ValueError):
    """Go refuses the word: a syntax error, or a number out of its type's range."""


_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def parse_bool(text: str) -> bool:
    """``strconv.ParseBool``."""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise GoSyntaxError(f"parsing {text!r}: invalid syntax")


def _lower(byte: int) -> int:
    return byte | 0x20


def _underscore_ok(text: bytes) -> bool:
    """``strconv.underscoreOK``: underscores only between digits or after a base prefix."""
    saw = "^"
    i = 0
    if text[:1] in (b"-", b"+"):
        text = text[1:]
    hexadecimal = False
    if len(text) >= 2 and text[0] == ord("0") and _lower(text[1]) in b"box":
        i = 2
        saw = "0"
        hexadecimal = _lower(text[1]) == ord("x")
    while i < len(text):
        byte = text[i]
        if ord("0") <= byte <= ord("9") or (hexadecimal and ord("a") <= _lower(byte) <= ord("f")):
            saw = "0"
        elif byte == ord("_"):
            if saw != "0":
                return False
            saw = "_"
        else:
            if saw == "_":
                return False
            saw = "!"
        i += 1
    return saw != "_"


def parse_uint(text: str, bits: int = 64, *, base0: bool = True) -> int:
    """``strconv.ParseUint(text, 0, bits)`` (``base0=False``: base 10, as ``Atoi`` asks)."""
    raw = text.encode("utf-8")
    if not raw:
        raise GoSyntaxError("empty")
    base = 10
    digits = raw
    if base0 and raw[0] == ord("0"):
        if len(raw) >= 3 and _lower(raw[1]) == ord("b"):
            base, digits = 2, raw[2:]
        elif len(raw) >= 3 and _lower(raw[1]) == ord("o"):
            base, digits = 8, raw[2:]
        elif len(raw) >= 3 and _lower(raw[1]) == ord("x"):
            base, digits = 16, raw[2:]
        else:
            base, digits = 8, raw[1:]
    value = 0
    underscores = False
    limit = (1 << bits) - 1
    too_big = False
    for byte in digits:
        if byte == ord("_") and base0:
            underscores = True
            continue
        if ord("0") <= byte <= ord("9"):
            digit = byte - ord("0")
        elif ord("a") <= _lower(byte) <= ord("z"):
            digit = _lower(byte) - ord("a") + 10
        else:
            raise GoSyntaxError(f"parsing {text!r}: invalid syntax")
        if digit >= base:
            raise GoSyntaxError(f"parsing {text!r}: invalid syntax")
        value = value * base + digit
        too_big = too_big or value > limit
    if underscores and not _underscore_ok(raw):
        raise GoSyntaxError(f"parsing {text!r}: invalid syntax")
    if too_big:
        raise GoSyntaxError(f"parsing {text!r}: value out of range")
    return value


def parse_int(text: str, bits: int = 64, *, base0: bool = True) -> int:
    """``strconv.ParseInt(text, 0, bits)`` (``base0=False``: base 10, as ``Atoi`` asks)."""
    if not text:
        raise GoSyntaxError("empty")
    negative = text[0] == "-"
    unsigned = text[1:] if text[0] in "+-" else text
    try:
        magnitude = parse_uint(unsigned, bits, base0=base0)
    except GoSyntaxError as error:
        if "out of range" not in str(error):
            raise GoSyntaxError(f"parsing {text!r}: invalid syntax") from None
        raise GoSyntaxError(f"parsing {text!r}: value out of range") from None
    cutoff = 1 << (bits - 1)
    if (not negative and magnitude >= cutoff) or (negative and magnitude > cutoff):
        raise GoSyntaxError(f"parsing {text!r}: value out of range")
    return -magnitude if negative else magnitude


def atoi(text: str) -> int:
    """``strconv.Atoi``: base 10, an optional sign, no underscores, 64 bits."""
    return parse_int(text, 64, base0=False)


_INFINITY = "infinity"


def _special(text: str) -> float | None:
    """``strconv.special``: ``inf``/``infinity`` (signed) and ``nan``, any case, as a whole."""
    sign = 1.0
    rest = text
    if text[:1] in ("+", "-"):
        sign = -1.0 if text[0] == "-" else 1.0
        rest = text[1:]
        names: tuple[str, ...] = ("inf", _INFINITY)
    else:
        names = ("inf", _INFINITY, "nan")
    if not rest.isascii():
        return None
    lowered = rest.lower()
    if lowered == "nan" and "nan" in names:
        return math.nan
    if lowered in ("inf", _INFINITY):
        return math.copysign(math.inf, sign)
    return None


def _read_float(text: bytes) -> Fraction | None:
    """``strconv.readFloat`` over the whole of ``text``: its exact value, or ``None``."""
    i = 0
    negative = False
    if i < len(text) and text[i] in b"+-":
        negative = text[i] == ord("-")
        i += 1
    base = 10
    exponent_char = ord("e")
    if i + 2 < len(text) and text[i] == ord("0") and _lower(text[i + 1]) == ord("x"):
        base = 16
        i += 2
        exponent_char = ord("p")
    mantissa = 0
    saw_dot = saw_digits = underscores = False
    fraction_digits = 0
    while i < len(text):
        byte = text[i]
        if byte == ord("_"):
            underscores = True
        elif byte == ord("."):
            if saw_dot:
                break
            saw_dot = True
        elif ord("0") <= byte <= ord("9"):
            saw_digits = True
            mantissa = mantissa * base + (byte - ord("0"))
            fraction_digits += saw_dot
        elif base == 16 and ord("a") <= _lower(byte) <= ord("f"):
            saw_digits = True
            mantissa = mantissa * base + (_lower(byte) - ord("a") + 10)
            fraction_digits += saw_dot
        else:
            break
        i += 1
    if not saw_digits:
        return None
    exponent = 0
    if i < len(text) and _lower(text[i]) == exponent_char:
        i += 1
        if i >= len(text):
            return None
        sign = 1
        if text[i] == ord("+"):
            i += 1
        elif text[i] == ord("-"):
            i += 1
            sign = -1
        if i >= len(text) or not ord("0") <= text[i] <= ord("9"):
            return None
        while i < len(text) and (ord("0") <= text[i] <= ord("9") or text[i] == ord("_")):
            if text[i] == ord("_"):
                underscores = True
            elif exponent < 10000:
                exponent = exponent * 10 + text[i] - ord("0")
            i += 1
        exponent *= sign
    elif base == 16:
        return None
    if i != len(text):
        return None
    if underscores and not _underscore_ok(text[:i]):
        return None
    if base == 16:
        value = Fraction(mantissa, 16**fraction_digits) * Fraction(2) ** exponent
    else:
        value = Fraction(mantissa, 10**fraction_digits) * Fraction(10) ** exponent
    return -value if negative else value


def _nearest_float32(value: Fraction) -> float:
    """``value`` rounded once, to the nearest float32 (ties to even); overflow raises."""
    if value == 0:
        return 0.0
    sign = -1.0 if value < 0 else 1.0
    magnitude = abs(value)
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if Fraction(2) ** exponent > magnitude:
        exponent -= 1
    # float32: 24 significant bits, smallest normal exponent -126 (subnormals below).
    shift = max(exponent, -126) - 23
    scaled = magnitude / Fraction(2) ** shift
    whole = scaled.numerator // scaled.denominator
    rest = scaled - whole
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and whole % 2 == 1):
        whole += 1
    result = float(Fraction(whole) * Fraction(2) ** shift)
    if result > _MAX_FLOAT32:
        raise OverflowError
    return math.copysign(result, sign)


_MAX_FLOAT32 = 3.4028234663852886e38


def parse_float(text: str, bits: int = 64) -> float:
    """``strconv.ParseFloat(text, bits)``: its value, correctly rounded to float32 or float64."""
    if not text:
        raise GoSyntaxError("empty")
    special = _special(text)
    if special is not None:
        return special
    exact = _read_float(text.encode("utf-8")) if text.isascii() else None
    if exact is None:
        raise GoSyntaxError(f"parsing {text!r}: invalid syntax")
    try:
        value = _nearest_float32(exact) if bits == 32 else float(exact)
    except OverflowError:
        raise GoSyntaxError(f"parsing {text!r}: value out of range") from None
    # A zero keeps its sign, which an exact fraction does not carry.
    return -abs(value) if text.startswith("-") else value


def read_csv_record(text: str) -> list[str]:
    """The first record of ``text`` as Go's ``encoding/csv`` reads it (pflag's ``readAsCSV``).

    Empty lines before it are skipped; a quoted field may hold commas, doubled quotes and line
    ends; a quote inside an unquoted field, or text after a closing quote, is an error.
    """
    if text == "":
        return []
    lines = text.split("\n")
    # encoding/csv skips empty lines (a lone "\r" is one too) before a record.
    index = 0
    while index < len(lines) and lines[index] in ("", "\r"):
        index += 1
    if index == len(lines) or (index == len(lines) - 1 and lines[index] == ""):
        raise GoSyntaxError("EOF")
    data = "\n".join(lines[index:])
    fields: list[str] = []
    position = 0
    while True:
        if data.startswith('"', position):
            field, position = _quoted(data, position + 1)
            fields.append(field)
        else:
            end = position
            while end < len(data) and data[end] not in ",\n":
                end += 1
            field = data[position:end]
            if '"' in field:
                raise GoSyntaxError('bare " in non-quoted-field')
            fields.append(_line_end(field, data, end))
            position = end
        if position < len(data) and data[position] == ",":
            position += 1
            continue
        return fields


def _line_end(field: str, data: str, end: int) -> str:
    # At the end of a line, "\r\n" reads as "\n"; at the end of the input a last "\r" goes.
    if field.endswith("\r") and (end == len(data) or data[end] == "\n"):
        return field[:-1]
    return field


def _quoted(data: str, position: int) -> tuple[str, int]:
    """A quoted field from just after its opening quote: its text, and where it ended."""
    pieces: list[str] = []
    while True:
        quote = data.find('"', position)
        if quote < 0:
            raise GoSyntaxError('extraneous or missing " in quoted-field')
        pieces.append(data[position:quote])
        after = quote + 1
        if data.startswith('"', after):
            pieces.append('"')
            position = after + 1
            continue
        if after == len(data) or data[after] in ",\n":
            return _crlf("".join(pieces)), after
        if data[after] == "\r" and (after + 1 == len(data) or data[after + 1] == "\n"):
            return _crlf("".join(pieces)), after + 1
        raise GoSyntaxError('extraneous or missing " in quoted-field')


def _crlf(text: str) -> str:
    # A line end inside a quoted field is read as "\n", "\r\n" included.
    return text.replace("\r\n", "\n")


# -- values --------------------------------------------------------------------------------------

_SIGNED_BITS = {"int": 64, "int8": 8, "int16": 16, "int32": 32, "int64": 64}
_UNSIGNED_BITS = {"uint": 64, "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}


def value_kind(pflag_type: str | None, *, type_: str, count: bool, multiple: bool) -> str:
    """The pflag type a parameter's words convert as: its own, else one its type implies."""
    if pflag_type is not None:
        return pflag_type
    if count:
        return "count"
    if multiple:
        return {"integer": "intSlice"}.get(type_, "stringSlice")
    return {"boolean": "bool", "integer": "int", "number": "float64"}.get(type_, "string")


def _scalar(kind: str) -> Callable[[str], Any] | None:
    if kind == "bool":
        return parse_bool
    if kind in _SIGNED_BITS:
        bits = _SIGNED_BITS[kind]
        return lambda text: parse_int(text, bits)
    if kind in _UNSIGNED_BITS:
        bits = _UNSIGNED_BITS[kind]
        return lambda text: parse_uint(text, bits)
    if kind == "float64":
        return parse_float
    if kind == "float32":
        return lambda text: parse_float(text, 32)
    if kind == "string":
        return str
    return None


@dataclass(slots=True)
class PflagValue:
    """One flag's ``Value`` while a command line is parsed: what ``Set`` makes of each word.

    ``modelled`` is false for a type exampleguard does not convert (``duration``, ``ip``, an
    application's own): its last word is kept as text, and any word is taken.
    """

    kind: str
    value: Any = None
    changed: bool = False

    @property
    def modelled(self) -> bool:
        """Whether words of this type are converted (and refused) as Go would."""
        return self.kind in ("count", "stringSlice", "stringArray", "intSlice") or (
            _scalar(self.kind) is not None
        )

    def set(self, text: str) -> None:
        """``Value.Set(text)``; raises :class:`GoSyntaxError` where Go returns an error."""
        kind = self.kind
        if kind == "count":
            if text == "+1":
                self.value = (self.value or 0) + 1
            else:
                self.value = parse_int(text, 64)
        elif kind in ("stringSlice", "stringArray", "intSlice"):
            if kind == "stringSlice":
                items: list[Any] = read_csv_record(text)
            elif kind == "stringArray":
                items = [text]
            else:
                items = [atoi(item) for item in text.split(",")]
            self.value = [*self.value, *items] if self.changed else items
        else:
            convert = _scalar(kind)
            self.value = text if convert is None else convert(text)
        self.changed = True
