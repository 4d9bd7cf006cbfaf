"""One generic field-validation mechanism for every protocol record.

A record is a frozen dataclass whose field annotations carry their bounds, e.g.
``keyval: Annotated[int, IntRange(0, UINT32_MAX)]``. When the class is defined, each annotation
compiles into a `_Kind` that knows how to check a Python value, turn it into its msgpack form
and turn a msgpack value back. Records only add their cross-field rules (`_check_invariants`).

Validation runs when a record is constructed (so an invalid message cannot exist), again on
encode (so a record tampered with through ``object.__setattr__`` is still refused) and on decode
(decoding constructs the records).
"""

import dataclasses
import re
import types
from enum import Enum
from collections.abc import Callable
from typing import Annotated, Any, ClassVar, TypeVar, Union, cast, dataclass_transform, get_args, get_origin

from .errors import ProtocolError
from .limits import MAX_MAP_ENTRIES


@dataclasses.dataclass(frozen=True)
class IntRange:
    """Bound of an int field, inclusive at both ends."""

    low: int
    high: int


@dataclasses.dataclass(frozen=True)
class MaxLen:
    """Most code points of a str field, or most items of a tuple field."""

    limit: int


@dataclasses.dataclass(frozen=True)
class OneOf:
    """The only values a str field may take."""

    choices: frozenset[str]


ENVELOPE_KEYS = frozenset({"v", "t"})
MESSAGE_TYPES: dict[str, type["WireRecord"]] = {}  # type tag -> message class

# NUL cannot cross D-Bus or GLib strings; lone surrogates are not Unicode and cannot be UTF-8 encoded.
_FORBIDDEN_CHARS = re.compile("[\x00\ud800-\udfff]")
_PREVIEW_CHARS = 40


def is_wire_text(text: str) -> bool:
    """Whether a str can cross the wire: no NUL, no lone surrogate. The ASCII test is a fast path: only
    non-ASCII text can hold a surrogate."""
    return "\x00" not in text and (text.isascii() or not _FORBIDDEN_CHARS.search(text))


def invalid_field(label: str, problem: str) -> ProtocolError:
    """The error for a bad field; `label` names it as "Class.field"."""
    return ProtocolError("invalid_field", f"{label}: {problem}")


def _describe(value: Any) -> str:
    """A short description of a bad value; never echoes a huge string back."""
    text = repr(value)
    if len(text) > _PREVIEW_CHARS:
        text = text[:_PREVIEW_CHARS] + "..."
    return f"{type(value).__name__} {text}"


class _Kind:
    """How the values of one field are checked and carried over the wire."""

    def check(self, value: Any, label: str) -> None:
        raise NotImplementedError

    def to_wire(self, value: Any, label: str) -> Any:
        self.check(value, label)
        return value

    def from_wire(self, raw: Any, label: str) -> Any:
        return raw  # plain values pass through; constructing the record checks them


class _IntKind(_Kind):
    def __init__(self, bounds: IntRange) -> None:
        self.low, self.high = bounds.low, bounds.high

    def check(self, value: Any, label: str) -> None:
        # type(), not isinstance(): bool and IntEnum are ints to Python but not integers on the wire.
        if type(value) is not int:
            raise invalid_field(label, f"expected int, got {_describe(value)}")
        if not self.low <= value <= self.high:
            raise invalid_field(label, f"{value} is outside {self.low}..{self.high}")


class _BoolKind(_Kind):
    def check(self, value: Any, label: str) -> None:
        if type(value) is not bool:
            raise invalid_field(label, f"expected bool, got {_describe(value)}")


class _StrKind(_Kind):
    def __init__(self, bound: MaxLen) -> None:
        self.max_chars = bound.limit

    def check(self, value: Any, label: str) -> None:
        if type(value) is not str:
            raise invalid_field(label, f"expected str, got {_describe(value)}")
        if len(value) > self.max_chars:
            raise invalid_field(label, f"{len(value)} characters, limit {self.max_chars}")
        if not is_wire_text(value):
            raise invalid_field(label, "contains NUL or a lone surrogate")


class _ChoiceKind(_Kind):
    def __init__(self, allowed: OneOf) -> None:
        self.choices = allowed.choices

    def check(self, value: Any, label: str) -> None:
        if type(value) is not str or value not in self.choices:
            raise invalid_field(label, f"expected one of {sorted(self.choices)}, got {_describe(value)}")


class _EnumKind(_Kind):
    """An Enum with str values, carried as its value."""

    def __init__(self, enum: type[Enum]) -> None:
        self.enum = enum
        self.by_value = {member.value: member for member in enum}

    def check(self, value: Any, label: str) -> None:
        if type(value) is not self.enum:
            raise invalid_field(label, f"expected {self.enum.__name__}, got {_describe(value)}")

    def to_wire(self, value: Any, label: str) -> str:
        self.check(value, label)
        return value.value

    def from_wire(self, raw: Any, label: str) -> Enum:
        member = self.by_value.get(raw) if type(raw) is str else None  # a tuple raw could be unhashable
        if member is None:
            raise invalid_field(label, f"expected one of {sorted(self.by_value)}, got {_describe(raw)}")
        return member


class _RecordKind(_Kind):
    """A nested record, carried as a map of its fields."""

    def __init__(self, record_type: type["WireRecord"]) -> None:
        self.record_type = record_type

    def check(self, value: Any, label: str) -> None:
        # The nested record validated itself when it was constructed.
        if type(value) is not self.record_type:
            raise invalid_field(label, f"expected {self.record_type.__name__}, got {_describe(value)}")

    def to_wire(self, value: Any, label: str) -> dict[str, Any]:
        self.check(value, label)
        return self.record_type._schema.to_wire(value)

    def from_wire(self, raw: Any, label: str) -> "WireRecord":
        return self.record_type._schema.from_wire(raw, label)


class _TupleKind(_Kind):
    """A tuple, carried as an array."""

    def __init__(self, item_kind: _Kind, bound: MaxLen) -> None:
        self.item_kind = item_kind
        self.max_items = bound.limit

    def _check_container(self, value: Any, label: str) -> None:
        # Decoding yields tuples too (use_list=False), so a list is wrong on either side.
        if type(value) is not tuple:
            raise invalid_field(label, f"expected a sequence, got {_describe(value)}")
        if len(value) > self.max_items:
            raise invalid_field(label, f"{len(value)} items, limit {self.max_items}")

    def check(self, value: Any, label: str) -> None:
        self._check_container(value, label)
        for item in value:
            self.item_kind.check(item, label)

    def to_wire(self, value: Any, label: str) -> list[Any]:
        self._check_container(value, label)
        return [self.item_kind.to_wire(item, label) for item in value]

    def from_wire(self, raw: Any, label: str) -> tuple[Any, ...]:
        self._check_container(raw, label)
        return tuple(self.item_kind.from_wire(item, label) for item in raw)


class _OptionalKind(_Kind):
    def __init__(self, inner: _Kind) -> None:
        self.inner = inner

    def check(self, value: Any, label: str) -> None:
        if value is not None:
            self.inner.check(value, label)

    def to_wire(self, value: Any, label: str) -> Any:
        return None if value is None else self.inner.to_wire(value, label)

    def from_wire(self, raw: Any, label: str) -> Any:
        return None if raw is None else self.inner.from_wire(raw, label)


def _compile(annotation: Any) -> _Kind:
    """The kind for a field annotation; every int, str and tuple must say how it is bounded."""
    bounds: tuple[Any, ...] = ()
    if get_origin(annotation) is Annotated:
        annotation, *extras = get_args(annotation)
        bounds = tuple(extras)

    def bound(bound_type: type) -> Any:
        found = [b for b in bounds if isinstance(b, bound_type)]
        if len(found) != 1:
            raise TypeError(f"{annotation!r} needs exactly one {bound_type.__name__} in Annotated[...]")
        return found[0]

    origin, args = get_origin(annotation), get_args(annotation)
    if annotation is bool:
        return _BoolKind()
    if annotation is int:
        return _IntKind(bound(IntRange))
    if annotation is str:
        return _ChoiceKind(bound(OneOf)) if any(isinstance(b, OneOf) for b in bounds) else _StrKind(bound(MaxLen))
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return _EnumKind(annotation)
    if isinstance(annotation, type) and issubclass(annotation, WireRecord):
        return _RecordKind(annotation)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return _TupleKind(_compile(args[0]), bound(MaxLen))
    if origin in (Union, types.UnionType) and len(args) == 2 and type(None) in args:
        return _OptionalKind(_compile(next(arg for arg in args if arg is not type(None))))
    raise TypeError(f"no wire form for {annotation!r}")


@dataclasses.dataclass(frozen=True)
class _Field:
    name: str
    label: str  # "Class.field", for error messages
    kind: _Kind


class _RecordSchema:
    def __init__(self, record_type: type["WireRecord"], tag: str | None) -> None:
        self.record_type = record_type
        self.tag = tag
        self.fields = tuple(
            _Field(f.name, f"{record_type.__name__}.{f.name}", _compile(f.type))
            for f in dataclasses.fields(cast(Any, record_type))
        )
        self.names = frozenset(field.name for field in self.fields)
        if len(self.names) + len(ENVELOPE_KEYS) > MAX_MAP_ENTRIES or self.names & ENVELOPE_KEYS:
            raise TypeError(f"{record_type.__name__}: too many fields, or a field named like an envelope key")

    def check(self, record: "WireRecord") -> None:
        for field in self.fields:
            field.kind.check(getattr(record, field.name), field.label)
        record._check_invariants()

    def to_wire(self, record: "WireRecord") -> dict[str, Any]:
        wire = {field.name: field.kind.to_wire(getattr(record, field.name), field.label) for field in self.fields}
        record._check_invariants()
        return wire

    def from_wire(self, raw: Any, label: str) -> "WireRecord":
        if type(raw) is not dict:
            raise invalid_field(label, f"expected a map, got {_describe(raw)}")
        if raw.keys() != self.names:
            missing = sorted(self.names - raw.keys())
            extra = sorted(map(repr, raw.keys() - self.names))
            raise invalid_field(label, f"missing fields {missing}, unknown fields {extra}")
        return self.record_type(
            **{field.name: field.kind.from_wire(raw[field.name], field.label) for field in self.fields}
        )


class WireRecord:
    """Base of every protocol dataclass: checks its fields whenever an instance is made."""

    __slots__ = ()
    _schema: ClassVar[_RecordSchema]

    def __post_init__(self) -> None:
        self._schema.check(self)

    def _check_invariants(self) -> None:
        """Cross-field rules, raising ProtocolError; each field is already known valid."""


R = TypeVar("R", bound=type)


def _define(cls: R, tag: str | None) -> R:
    defined: Any = dataclasses.dataclass(frozen=True, slots=True)(cls)
    defined._schema = _RecordSchema(defined, tag)
    return cast(R, defined)


# dataclass_transform: type checkers see the fields, the constructor and the frozenness the decorators make.
@dataclass_transform(frozen_default=True)
def record(cls: R) -> R:
    """Class decorator for a record nested inside messages (no envelope, no type tag)."""
    return _define(cls, None)


@dataclass_transform(frozen_default=True)
def message(tag: str) -> Callable[[R], R]:
    """Class decorator for a top-level message, sent in an envelope under type tag `tag`."""

    def register(cls: R) -> R:
        if tag in MESSAGE_TYPES:
            raise TypeError(f"type tag {tag!r} is already used by {MESSAGE_TYPES[tag].__name__}")
        defined = MESSAGE_TYPES[tag] = _define(cls, tag)
        return defined

    return register
