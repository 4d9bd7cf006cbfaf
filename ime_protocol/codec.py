"""msgpack codec for protocol messages.

Wire format (PROTOCOL_VERSION 2): every message is one msgpack map

    {"v": 2, "t": "<type tag>", <field>: <value>, ...}

with exactly the message's fields, by their dataclass names. Nested records (Preedit,
PreeditSegment, CandidateWindow, CandidateItem, SurroundingDeletion) are maps of exactly their fields,
without "v"/"t"; tuples are arrays; enums are their string values; an optional record (CandidateWindow | None,
SurroundingDeletion | None) is the map or nil.
Strings are msgpack str (UTF-8); there is no bin, ext or float anywhere in the protocol.

Why a map rather than a positional array: the bytes say what they mean (any msgpack dump of a
captured message is readable); field order stops mattering; and a peer whose fields differ fails
with an error naming the missing or unknown field, where an array of the same length would
silently shift keycode into keyval. The price, field names on the wire, is a few dozen bytes per
message over a local socket: a KeyEvent is 56 to 76 bytes.

Decoding checks the byte size first, then unpacks with msgpack's own limits set from limits.py
(so a hostile length prefix fails before anything is allocated), then checks the envelope, then
builds the message, whose constructor checks every field.

Any change to a message's fields is a new PROTOCOL_VERSION: unknown and missing fields are
refused, never ignored or defaulted.
"""

from typing import Any, TypeVar, overload

import msgpack

from .errors import ProtocolError
from .limits import (
    MAX_CANDIDATES,
    MAX_MAP_ENTRIES,
    MAX_MESSAGE_BYTES,
    MAX_SEGMENTS,
    MAX_TEXT_CHARS,
    MAX_UTF8_BYTES_PER_CHAR,
)
from .schema import MESSAGE_TYPES, WireRecord

PROTOCOL_VERSION = 2  # 2: Output.delete_surrounding, for reconversion

M = TypeVar("M", bound=WireRecord)


def _map_without_duplicate_keys(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    # msgpack lets a later duplicate silently win; peers that disagree on which one wins is a bug.
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        raise ValueError("duplicate map key")
    return mapping


# A string or array longer than any field may hold is refused here, as malformed.
_UNPACK_OPTIONS: dict[str, Any] = dict(
    raw=False,  # str as strict UTF-8: invalid bytes and encoded surrogates fail to decode
    use_list=False,  # arrays become tuples, the type the messages hold
    strict_map_key=True,  # map keys must be strings
    object_pairs_hook=_map_without_duplicate_keys,
    max_str_len=MAX_TEXT_CHARS * MAX_UTF8_BYTES_PER_CHAR,
    max_bin_len=0,
    max_ext_len=0,
    max_array_len=max(MAX_CANDIDATES, MAX_SEGMENTS),
    max_map_len=MAX_MAP_ENTRIES,
)


def encode(message: WireRecord) -> bytes:
    """The wire bytes of `message`, validated again on the way out."""
    schema = getattr(type(message), "_schema", None)
    if schema is None or schema.tag is None:
        raise ProtocolError("unknown_type", f"{type(message).__name__} is not a protocol message")
    wire = {"v": PROTOCOL_VERSION, "t": schema.tag}
    wire.update(schema.to_wire(message))
    data = msgpack.packb(wire)
    if len(data) > MAX_MESSAGE_BYTES:
        raise ProtocolError(
            "too_large", f"{type(message).__name__} encodes to {len(data)} bytes, limit {MAX_MESSAGE_BYTES}"
        )
    return data


@overload
def decode(data: bytes, expected: type[M]) -> M: ...
@overload
def decode(data: bytes, expected: tuple[type[WireRecord], ...] | None = None) -> WireRecord: ...


def decode(data, expected=None):
    """The message in `data`; ProtocolError, and nothing else, if there is none.

    `expected`: the message class, or tuple of classes, the caller accepts (e.g. FRONTEND_MESSAGES);
    any other type tag is refused as unknown_type before its fields are looked at.
    """
    if not isinstance(data, (bytes, bytearray)):
        raise ProtocolError("malformed", f"expected bytes, got {type(data).__name__}")
    if len(data) > MAX_MESSAGE_BYTES:
        raise ProtocolError("too_large", f"{len(data)} bytes, limit {MAX_MESSAGE_BYTES}")
    try:
        wire = msgpack.unpackb(data, **_UNPACK_OPTIONS)
    # msgpack reports bad input with many exception types (ValueError subclasses, UnicodeDecodeError,
    # StackError for depth bombs, TypeError from hooks); each one means the same thing here.
    except Exception as error:
        raise ProtocolError(
            "malformed", f"not one msgpack value within limits: {type(error).__name__} {error}".rstrip()
        ) from error
    if type(wire) is not dict:
        raise ProtocolError("malformed", f"expected a map, got {type(wire).__name__}")
    version = wire.pop("v", None)
    tag = wire.pop("t", None)
    if type(version) is not int:
        raise ProtocolError("malformed", f'missing or non-integer version "v": {version!r:.40}')
    if version != PROTOCOL_VERSION:
        raise ProtocolError("unknown_version", f"version {version}, this side speaks {PROTOCOL_VERSION}")
    if type(tag) is not str:
        raise ProtocolError("malformed", f'missing or non-string type tag "t": {tag!r:.40}')
    message_type = MESSAGE_TYPES.get(tag)
    if message_type is None:
        raise ProtocolError("unknown_type", f"no message has type tag {tag!r:.40}")
    if isinstance(expected, type):
        expected = (expected,)
    if expected is not None and message_type not in expected:
        raise ProtocolError("unknown_type", f"{message_type.__name__} is not accepted here")
    return message_type._schema.from_wire(wire, message_type.__name__)
