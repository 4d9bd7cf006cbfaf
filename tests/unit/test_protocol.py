"""ime_protocol: round trips, strict validation, and decoding hostile bytes into ProtocolError only."""

import copy
import dataclasses
import math
import pickle
import subprocess
import sys
from typing import Any, cast

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ime_protocol import (
    ALT_MASK,
    CONTROL_MASK,
    DAEMON_MESSAGES,
    ERROR_CODES,
    FRONTEND_MESSAGES,
    INPUT_MODES,
    LOCK_MASK,
    MAX_ANNOTATION_CHARS,
    MAX_CANDIDATE_CHARS,
    MAX_CANDIDATES,
    MAX_MESSAGE_BYTES,
    MAX_PAGE_SIZE,
    MAX_SEGMENTS,
    MAX_SHORT_TEXT_CHARS,
    MAX_TEXT_CHARS,
    PROTOCOL_VERSION,
    RELEASE_MASK,
    REQUEST_ID_MAX,
    SHIFT_MASK,
    SUPER_MASK,
    UINT32_MAX,
    CandidateItem,
    CandidateWindow,
    Discard,
    FocusIn,
    FocusOut,
    InputPurpose,
    KeyEvent,
    Output,
    Preedit,
    PreeditSegment,
    ProtocolError,
    Reset,
    SegmentStyle,
    SelectCandidate,
    SetInputMode,
    SurroundingDeletion,
    SurroundingText,
    decode,
    encode,
)
from tests.conftest import REPO

ALL_MESSAGES = FRONTEND_MESSAGES + DAEMON_MESSAGES

# --- Strategies for valid messages ----------------------------------------------------------------

CHARS = st.characters(exclude_categories=["Cs"], exclude_characters="\x00")


def texts(max_size: int, min_size: int = 0) -> st.SearchStrategy[str]:
    return st.text(CHARS, min_size=min_size, max_size=max_size)


UINT32 = st.integers(0, UINT32_MAX)
REQUEST_IDS = st.integers(0, REQUEST_ID_MAX)


@st.composite
def surrounding_texts(draw) -> SurroundingText:
    text = draw(texts(40))
    position = st.integers(0, len(text))
    return SurroundingText(text, draw(position), draw(position))


@st.composite
def preedits(draw) -> Preedit:
    segments = draw(
        st.lists(
            st.builds(PreeditSegment, texts(8), st.sampled_from([SegmentStyle.NONE, SegmentStyle.UNDERLINE])),
            max_size=6,
        )
    )
    if segments and draw(st.booleans()):  # at most one segment is being converted
        focused = draw(st.integers(0, len(segments) - 1))
        segments[focused] = PreeditSegment(segments[focused].text, SegmentStyle.HIGHLIGHT)
    text_length = sum(len(segment.text) for segment in segments)
    return Preedit(tuple(segments), draw(st.integers(0, text_length)))


@st.composite
def candidate_windows(draw) -> CandidateWindow:
    items = draw(st.lists(st.builds(CandidateItem, texts(8), texts(4)), min_size=1, max_size=30))
    page_size = draw(st.integers(1, MAX_PAGE_SIZE))
    return CandidateWindow(
        tuple(items), draw(st.integers(0, len(items) - 1)), page_size, draw(texts(page_size, min_size=page_size))
    )


STRATEGIES = {
    KeyEvent: st.builds(KeyEvent, UINT32, UINT32, UINT32, REQUEST_IDS),
    SurroundingText: surrounding_texts(),
    FocusIn: st.builds(FocusIn, st.sampled_from(InputPurpose)),
    FocusOut: st.just(FocusOut()),
    Reset: st.just(Reset()),
    Discard: st.just(Discard()),
    SelectCandidate: st.builds(SelectCandidate, st.integers(0, MAX_CANDIDATES - 1), REQUEST_IDS),
    SetInputMode: st.builds(SetInputMode, st.sampled_from(sorted(INPUT_MODES))),
    Output: st.builds(
        Output,
        REQUEST_IDS,
        st.booleans(),
        texts(20),
        preedits(),
        st.none() | candidate_windows(),
        texts(20),
        st.sampled_from(sorted(INPUT_MODES)),
        st.none() | st.builds(SurroundingDeletion, st.integers(1, 50), st.integers(0, 50)),
    ),
}
MESSAGES = st.one_of(*STRATEGIES.values())

# Samples with every nested record present, for hand-made corruptions of their wire form.
KEY = KeyEvent(ord("a"), 38, SHIFT_MASK, 7)
SURROUNDING = SurroundingText("今日は", 1, 3)
SELECT = SelectCandidate(2, 8)
WINDOW = CandidateWindow((CandidateItem("今日", ""), CandidateItem("京", "都"), CandidateItem("強", "")), 1, 2, "12")
OUTPUT = Output(
    7,
    True,
    "",
    Preedit((PreeditSegment("きょう", SegmentStyle.HIGHLIGHT), PreeditSegment("は", SegmentStyle.UNDERLINE)), 4),
    WINDOW,
    "きょう",
    "hiragana",
    SurroundingDeletion(3, 0),
)


def wire_of(message) -> dict:
    """The message's wire map as plain, mutable Python data."""
    return msgpack.unpackb(encode(message))


def patched(message, path: tuple, value) -> bytes:
    """The message's encoding with the value at `path` (map keys and array indices) replaced."""
    wire = wire_of(message)
    container = wire
    for key in path[:-1]:
        container = container[key]
    container[path[-1]] = value
    return msgpack.packb(wire)


def assert_rejected(data, code: str) -> ProtocolError:
    with pytest.raises(ProtocolError) as caught:
        decode(data)
    assert caught.value.code == code, caught.value
    return caught.value


def locations(wire, skip_envelope: bool = True):
    """(container, key) of every value in a wire structure, nested ones included."""
    items = wire.items() if isinstance(wire, dict) else enumerate(wire)
    for key, value in list(items):
        if skip_envelope and key in ("v", "t"):
            continue
        yield wire, key
        if isinstance(value, (dict, list)):
            yield from locations(value, skip_envelope=False)


def maps_in(wire):
    """Every map in a wire structure, the envelope included."""
    return [wire] + [container[key] for container, key in locations(wire) if isinstance(container[key], dict)]


# --- Round trips ----------------------------------------------------------------------------------


def test_strategies_cover_every_message_type():
    assert set(STRATEGIES) == set(ALL_MESSAGES)


@given(MESSAGES)
def test_every_message_round_trips(message):
    data = encode(message)
    assert decode(data) == message
    assert type(decode(bytearray(data), expected=type(message))) is type(message)


@given(MESSAGES)
def test_envelope_is_a_versioned_tagged_map_of_exactly_the_fields(message):
    wire = wire_of(message)
    assert wire["v"] == PROTOCOL_VERSION
    assert isinstance(wire.pop("t"), str)
    wire.pop("v")
    assert set(wire) == {field.name for field in dataclasses.fields(message)}


def test_output_wire_form_is_readable():
    wire = wire_of(OUTPUT)
    assert wire["t"] == "output"
    assert wire["preedit"]["segments"][0] == {"text": "きょう", "style": "highlight"}
    assert wire["candidates"]["items"][1] == {"text": "京", "annotation": "都"}
    assert wire["delete_surrounding"] == {"before": 3, "after": 0}
    assert wire_of(FocusIn(InputPurpose.PASSWORD)) == {"v": PROTOCOL_VERSION, "t": "focus_in", "purpose": "password"}


def test_decode_accepts_only_the_expected_types():
    data = encode(KEY)
    assert decode(data, expected=FRONTEND_MESSAGES) == KEY
    for expected in (Output, DAEMON_MESSAGES):
        with pytest.raises(ProtocolError) as caught:
            decode(data, expected=expected)
        assert caught.value.code == "unknown_type"


# --- Hostile bytes: ProtocolError and nothing else ------------------------------------------------


@given(st.binary(max_size=200))
def test_random_bytes_raise_only_protocol_error(data):
    try:
        decode(data)
    except ProtocolError as error:
        assert error.code in ERROR_CODES


MSGPACK_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats()
    | st.text(max_size=10)
    | st.binary(max_size=4),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=6,
)
FIELD_NAMES = sorted(
    {field.name for message_type in ALL_MESSAGES for field in dataclasses.fields(cast(Any, message_type))}
)
TAGS = sorted(
    wire_of(message)["t"]
    for message in (
        KEY,
        SURROUNDING,
        SELECT,
        OUTPUT,
        FocusOut(),
        Reset(),
        Discard(),
        FocusIn(InputPurpose.URL),
        SetInputMode("direct"),
    )
)


def test_tag_samples_cover_every_message_type():
    assert len(TAGS) == len(ALL_MESSAGES)


@given(
    st.sampled_from(TAGS + ["bogus"]),
    st.dictionaries(st.sampled_from(FIELD_NAMES + ["extra"]), MSGPACK_VALUES, max_size=5),
)
def test_random_envelopes_decode_to_a_valid_message_or_protocol_error(tag, fields):
    try:
        message = decode(msgpack.packb({"v": PROTOCOL_VERSION, "t": tag, **fields}))
    except ProtocolError as error:
        assert error.code in ERROR_CODES
    else:
        assert encode(message)  # whatever got through is a valid message


@given(MESSAGES, st.data())
def test_every_truncation_is_malformed(message, data):
    encoded = encode(message)
    assert_rejected(encoded[: data.draw(st.integers(0, len(encoded) - 1))], "malformed")


# Values that are wrong for every field of every record (True and None are right for some).
GARBAGE = [1.5, math.nan, math.inf, -1, 2**64 - 1, b"", {}, {"x": 1}, [{}], "\x00", "x" * 5000]


@given(MESSAGES, st.data())
def test_garbage_anywhere_in_a_message_is_an_invalid_field(message, data):
    wire = wire_of(message)
    spots = list(locations(wire))
    if not spots:
        return  # FocusOut, Reset and Discard have no fields
    container, key = data.draw(st.sampled_from(spots))
    container[key] = data.draw(st.sampled_from(GARBAGE))
    assert_rejected(msgpack.packb(wire), "invalid_field")


@given(MESSAGES, st.data())
def test_bool_float_or_nil_in_place_of_an_int_is_an_invalid_field(message, data):
    wire = wire_of(message)
    int_spots = [(c, k) for c, k in locations(wire) if type(c[k]) is int]
    if not int_spots:
        return
    container, key = data.draw(st.sampled_from(int_spots))
    container[key] = data.draw(st.sampled_from([True, False, float(container[key]), None, str(container[key])]))
    assert_rejected(msgpack.packb(wire), "invalid_field")


@given(MESSAGES, st.data())
def test_missing_and_extra_fields_are_invalid_fields(message, data):
    wire = wire_of(message)
    target = data.draw(st.sampled_from(maps_in(wire)))
    fields = [key for key in target if key not in ("v", "t") or target is not wire]
    if fields and data.draw(st.booleans()):
        del target[data.draw(st.sampled_from(fields))]
    else:
        target[data.draw(st.sampled_from(["extra", "V", "keyval ", "text"]).filter(lambda k: k not in target))] = 0
    assert_rejected(msgpack.packb(wire), "invalid_field")


def test_ints_and_nil_where_a_bool_or_record_belongs_are_invalid_fields():
    assert_rejected(patched(OUTPUT, ("consumed",), 1), "invalid_field")
    assert_rejected(patched(OUTPUT, ("preedit",), None), "invalid_field")
    assert_rejected(patched(OUTPUT, ("preedit", "segments"), None), "invalid_field")
    assert decode(patched(OUTPUT, ("candidates",), None)).candidates is None
    assert decode(patched(OUTPUT, ("delete_surrounding",), None)).delete_surrounding is None


@pytest.mark.parametrize(
    "wire, code",
    [
        ({"t": "reset"}, "malformed"),
        ({"v": None, "t": "reset"}, "malformed"),
        ({"v": True, "t": "reset"}, "malformed"),
        ({"v": float(PROTOCOL_VERSION), "t": "reset"}, "malformed"),
        ({"v": "1", "t": "reset"}, "malformed"),
        ({"v": PROTOCOL_VERSION + 1, "t": "reset"}, "unknown_version"),
        ({"v": 0, "t": "reset"}, "unknown_version"),
        ({"v": -1, "t": "reset"}, "unknown_version"),
        # the version is checked first
        ({"v": PROTOCOL_VERSION + 1, "t": "from_the_future", "new_field": 1}, "unknown_version"),
        ({"v": PROTOCOL_VERSION}, "malformed"),
        ({"v": PROTOCOL_VERSION, "t": 5}, "malformed"),
        ({"v": PROTOCOL_VERSION, "t": b"reset"}, "malformed"),
        ({"v": PROTOCOL_VERSION, "t": "bogus"}, "unknown_type"),
        ({"v": PROTOCOL_VERSION, "t": "Reset"}, "unknown_type"),
        # nested records have no tag
        ({"v": PROTOCOL_VERSION, "t": "preedit", "segments": [], "cursor": 0}, "unknown_type"),
        ({"v": PROTOCOL_VERSION, "t": "reset", "extra": 0}, "invalid_field"),
        ({"v": PROTOCOL_VERSION, "t": "reset", 5: 0}, "malformed"),  # non-str map key
        ({"v": PROTOCOL_VERSION, "t": "reset", b"": 0}, "invalid_field"),  # bin key: an unknown field
        ([1, "reset"], "malformed"),
        (1, "malformed"),
        (None, "malformed"),
    ],
)
def test_envelope_errors(wire, code):
    assert_rejected(msgpack.packb(wire), code)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\xc1",  # never-used msgpack byte
        encode(KEY) + b"\xc0",  # trailing data
        encode(KEY) * 2,
        b"\x83\xa1v\x01\xa1t\xa5reset\xa1v\x01",  # duplicate key "v"
        b"\x82\xa1v\x01\xa1t\xc7\x01\x05x",  # ext type
        b"\x82\xa1v\x01\xa1t\xd6\xff\x00\x00\x00\x00",  # timestamp ext
        b"\x82\xa1v\x01\xa1t\xc4\x01x",  # bin
        b"\x91" * 100_000 + b"\xc0",  # depth bomb, within the size limit
        b"\x81\xa1x" * 50_000 + b"\xc0",  # depth bomb of maps
        b"\xdd\xff\xff\xff\xff",  # array claiming 4 billion items
        b"\xdf\xff\xff\xff\xff",  # map claiming 4 billion entries
        b"\xdb\xff\xff\xff\xff",  # str claiming 4 GiB
        b"\x82\xa1v\x01\xa1t\xa3\xff\xfe\xfd",  # invalid UTF-8
        patched(SURROUNDING, ("text",), "XYZ").replace(b"XYZ", b"\xed\xa0\x80"),  # UTF-8 encoded lone surrogate
        patched(SURROUNDING, ("text",), "x" * MAX_TEXT_CHARS * 5),  # str longer than any field may be
        patched(OUTPUT, ("candidates", "items"), [{}] * (MAX_CANDIDATES + 1)),  # array past the unpack limit
    ],
)
def test_malformed_bytes(data):
    assert_rejected(data, "malformed")


@pytest.mark.parametrize("data", ["a string", None, 42, memoryview(b"\x80"), [encode(KEY)]])
def test_non_bytes_input_is_malformed(data):
    assert_rejected(data, "malformed")


def test_size_limit_is_checked_before_unpacking():
    # Unpacking these bytes would fail as trailing data; too_large proves nothing was unpacked.
    assert_rejected(b"\xc0" * (MAX_MESSAGE_BYTES + 1), "too_large")
    assert_rejected(b"\xc0" * MAX_MESSAGE_BYTES, "malformed")
    padded = msgpack.packb({"v": PROTOCOL_VERSION, "t": "surrounding_text", "text": "", "cursor": 0, "anchor": 0})
    assert_rejected(padded + b"\xc0" * (MAX_MESSAGE_BYTES - len(padded) + 1), "too_large")


def test_encode_refuses_a_message_over_the_size_limit():
    item = CandidateItem("字" * MAX_CANDIDATE_CHARS, "")
    window = CandidateWindow((item,) * MAX_CANDIDATES, 0, 9, "123456789")
    with pytest.raises(ProtocolError) as caught:
        encode(dataclasses.replace(OUTPUT, candidates=window))
    assert caught.value.code == "too_large"


# --- Limits, exactly at and one past ----------------------------------------------------------------


def segments_totalling(chars: int) -> list[dict]:
    return [{"text": "x" * (chars // 2), "style": "none"}, {"text": "x" * (chars - chars // 2), "style": "none"}]


LIMIT_CASES = {  # name: (sample message, path to a field, value of size n, largest valid n)
    "keyval": (KEY, ("keyval",), lambda n: n, UINT32_MAX),
    "keycode": (KEY, ("keycode",), lambda n: n, UINT32_MAX),
    "modifiers": (KEY, ("modifiers",), lambda n: n, UINT32_MAX),
    "request_id": (KEY, ("request_id",), lambda n: n, REQUEST_ID_MAX),
    "output_request_id": (OUTPUT, ("request_id",), lambda n: n, REQUEST_ID_MAX),
    "select_index": (SELECT, ("index",), lambda n: n, MAX_CANDIDATES - 1),
    "surrounding_text": (SURROUNDING, ("text",), lambda n: "あ" * n, MAX_TEXT_CHARS),
    "commit": (OUTPUT, ("commit",), lambda n: "字" * n, MAX_TEXT_CHARS),
    "aux": (OUTPUT, ("aux",), lambda n: "x" * n, MAX_SHORT_TEXT_CHARS),
    "segment_count": (OUTPUT, ("preedit", "segments"), lambda n: [{"text": "x", "style": "none"}] * n, MAX_SEGMENTS),
    "preedit_text": (OUTPUT, ("preedit", "segments"), segments_totalling, MAX_TEXT_CHARS),
    "candidate_text": (OUTPUT, ("candidates", "items", 0, "text"), lambda n: "x" * n, MAX_CANDIDATE_CHARS),
    "annotation": (OUTPUT, ("candidates", "items", 0, "annotation"), lambda n: "x" * n, MAX_ANNOTATION_CHARS),
}


@pytest.mark.parametrize("name", LIMIT_CASES)
def test_limits_are_inclusive_and_one_more_is_an_invalid_field(name):
    message, path, value_of_size, limit = LIMIT_CASES[name]
    assert decode(patched(message, path, value_of_size(limit)))
    assert_rejected(patched(message, path, value_of_size(limit + 1)), "invalid_field")


def test_candidate_count_limit():
    # Decoding never gets this far: the unpacker's array limit is MAX_CANDIDATES (see test_malformed_bytes).
    items = OUTPUT.candidates.items[:1] * MAX_CANDIDATES
    assert (
        len(decode(encode(dataclasses.replace(OUTPUT, candidates=CandidateWindow(items, 0, 1, "1")))).candidates.items)
        == MAX_CANDIDATES
    )
    with pytest.raises(ProtocolError, match="invalid_field"):
        CandidateWindow(items + items[:1], 0, 1, "1")


def test_page_size_limit():
    def with_page_size(size):
        return CandidateWindow(OUTPUT.candidates.items, 0, size, "a" * size)

    assert with_page_size(MAX_PAGE_SIZE).page_size == MAX_PAGE_SIZE
    for size in (0, MAX_PAGE_SIZE + 1):
        with pytest.raises(ProtocolError, match="invalid_field"):
            with_page_size(size)


# --- Cursors, indices and other cross-field rules -------------------------------------------------


@pytest.mark.parametrize(
    "message, path, value",
    [
        (SURROUNDING, ("cursor",), 4),
        (SURROUNDING, ("anchor",), 4),
        (SURROUNDING, ("cursor",), -1),
        (OUTPUT, ("preedit", "cursor"), 5),
        (OUTPUT, ("preedit", "segments", 1, "style"), "highlight"),  # two segments being converted
        (OUTPUT, ("preedit", "segments", 1, "style"), "bold"),
        (OUTPUT, ("candidates", "cursor"), 3),
        (OUTPUT, ("candidates", "items"), []),
        (OUTPUT, ("candidates", "labels"), "123"),
        (OUTPUT, ("candidates", "page_size"), 0),
        (OUTPUT, ("mode",), "romaji"),
        (SELECT, ("index",), -1),
    ],
)
def test_cross_field_and_enum_violations_are_invalid_fields(message, path, value):
    assert_rejected(patched(message, path, value), "invalid_field")


def test_surrounding_text_around_the_cursor_is_cut_to_the_limit():
    text = "".join(chr(0x4E00 + i % 500) for i in range(3 * MAX_TEXT_CHARS))
    start = 2 * MAX_TEXT_CHARS - MAX_TEXT_CHARS // 2
    assert SurroundingText.around_cursor(text, 2 * MAX_TEXT_CHARS, 2 * MAX_TEXT_CHARS + 5) == SurroundingText(
        text[start : start + MAX_TEXT_CHARS], MAX_TEXT_CHARS // 2, MAX_TEXT_CHARS // 2 + 5
    )
    assert SurroundingText.around_cursor(text, 0, 10**6) == SurroundingText(text[:MAX_TEXT_CHARS], 0, MAX_TEXT_CHARS)
    assert SurroundingText.around_cursor("𠮷野", 9, 1) == SurroundingText("𠮷野", 2, 1)  # clamped, in code points
    for unsendable in ("a\x00b", "\ud800", "x" * MAX_TEXT_CHARS * 2 + "\x00"):  # anywhere in the text
        assert SurroundingText.around_cursor(unsendable, 1, 1) == SurroundingText("", 0, 0)


def test_positions_at_the_end_of_the_text_are_valid():
    assert SurroundingText("abc", 3, 0).cursor == 3
    assert SurroundingText("", 0, 0).anchor == 0
    assert Preedit((PreeditSegment("𠮷野", SegmentStyle.NONE),), 2).cursor == 2  # code points, not UTF-16


# Wrong types on purpose (type: ignore for mypy): the constructors refuse them at run time.
@pytest.mark.parametrize(
    "construct",
    [
        lambda: KeyEvent(True, 0, 0, 0),
        lambda: KeyEvent(97.0, 0, 0, 0),  # type: ignore[arg-type]
        lambda: KeyEvent(97, 0, 0, -1),
        lambda: KeyEvent(97, 0, RELEASE_MASK * 4, 0),
        lambda: SurroundingText("ab", 3, 0),
        lambda: SurroundingText("\ud800", 0, 0),
        lambda: SurroundingText("a\x00b", 0, 0),
        lambda: SurroundingText(b"ab", 0, 0),  # type: ignore[arg-type]
        lambda: FocusIn("password"),  # type: ignore[arg-type]
        lambda: SetInputMode("romaji"),
        lambda: SelectCandidate(MAX_CANDIDATES, 0),
        lambda: PreeditSegment("x", "none"),  # type: ignore[arg-type]
        lambda: Preedit([PreeditSegment("x", SegmentStyle.NONE)], 0),  # type: ignore[arg-type]
        lambda: Preedit((PreeditSegment("x", SegmentStyle.NONE),), 2),
        lambda: Preedit(("x",), 0),  # type: ignore[arg-type]
        lambda: CandidateWindow((), 0, 1, "1"),
        lambda: CandidateWindow((CandidateItem("a", ""),), 1, 1, "1"),
        lambda: CandidateWindow((CandidateItem("a", ""),), 0, 2, "1"),
        lambda: Output(0, 1, "", Preedit((), 0), None, "", "hiragana"),  # type: ignore[arg-type]
        lambda: Output(0, True, "", None, None, "", "hiragana"),  # type: ignore[arg-type]
        lambda: Output(0, True, "", Preedit((), 0), CandidateItem("a", ""), "", "hiragana"),  # type: ignore[arg-type]
        lambda: Output(0, True, "", Preedit((), 0), None, "", "hiragana", (3, 0)),  # type: ignore[arg-type]
        lambda: SurroundingDeletion(0, 0),
        lambda: SurroundingDeletion(-1, 2),
    ],
)
def test_invalid_messages_cannot_be_constructed(construct):
    with pytest.raises(ProtocolError) as caught:
        construct()
    assert caught.value.code == "invalid_field"


@pytest.mark.parametrize(
    "message, path", [(KEY, ("keyval",)), (OUTPUT, ("preedit", "cursor")), (OUTPUT, ("candidates", "items", 0, "text"))]
)
def test_encode_revalidates_a_tampered_message(message, path):
    message = copy.deepcopy(message)
    tampered = message
    for step in path[:-1]:
        tampered = tampered[step] if isinstance(step, int) else getattr(tampered, step)
    object.__setattr__(tampered, path[-1], -1)  # frozen dataclasses can still be forced
    with pytest.raises(ProtocolError) as caught:
        encode(message)
    assert caught.value.code == "invalid_field"


def test_encode_refuses_what_is_not_a_message():
    for not_a_message in (OUTPUT.preedit, {"v": PROTOCOL_VERSION, "t": "reset"}, None):
        with pytest.raises(ProtocolError) as caught:
            encode(not_a_message)
        assert caught.value.code == "unknown_type"


# --- Helpers --------------------------------------------------------------------------------------


def test_key_event_modifier_helpers():
    key = KeyEvent(ord("c"), 54, CONTROL_MASK | SHIFT_MASK | RELEASE_MASK, 1)
    assert key.is_release and key.has_command_modifier
    assert key.has_modifiers(CONTROL_MASK | SHIFT_MASK) and not key.has_modifiers(CONTROL_MASK | ALT_MASK)
    plain = KeyEvent(ord("a"), 38, SHIFT_MASK | LOCK_MASK, 2)
    assert not plain.is_release and not plain.has_command_modifier
    assert KeyEvent(ord("a"), 38, SUPER_MASK, 3).has_command_modifier


def test_secret_purposes_are_password_and_pin():
    assert {purpose for purpose in InputPurpose if purpose.is_secret} == {InputPurpose.PASSWORD, InputPurpose.PIN}


def test_preedit_text_joins_segments():
    assert OUTPUT.preedit.text == "きょうは"


def test_candidate_window_paging():
    items = tuple(CandidateItem(str(i), "") for i in range(10))
    window = CandidateWindow(items, 9, 4, "asdf")
    assert (window.page_index, window.page_count, window.page_start, window.cursor_in_page) == (2, 3, 8, 1)
    assert window.page_items == items[8:]
    assert window.page_labels == "as"


@given(candidate_windows())
def test_paging_is_consistent(window):
    assert window.page_items[window.cursor_in_page] == window.items[window.cursor]
    assert window.page_index < window.page_count
    assert len(window.page_labels) == len(window.page_items) <= window.page_size


def test_protocol_error_carries_its_code_and_pickles():
    error = assert_rejected(msgpack.packb({"v": 9, "t": "reset"}), "unknown_version")
    assert isinstance(error, ValueError) and "version 9" in str(error)
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.code, copy.message) == (error.code, error.message)


# --- Package boundaries -----------------------------------------------------------------------


def test_package_imports_nothing_from_daemon_or_frontends():
    code = (
        "import sys, ime_protocol; print(sorted(m for m in sys.modules if m.split('.')[0] in ('daemon', 'frontends')))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_the_protocols_input_modes_are_the_daemons_enum():
    """ime_protocol imports no daemon (ARCHITECTURE.md), so its name set is tied to the enum here."""
    from daemon.composer import InputMode

    assert {mode.value for mode in InputMode} == INPUT_MODES
