"""The fcitx5 addon's wire codec (frontends/fcitx5/src/protocol.cpp) against ime_protocol: every message the
addon sends is the bytes the Python codec writes for it, and every Output record, valid or not, decodes as
the Python codec decodes it (the same fields, or refused). The C++ side runs in the build's
tsuzuri-protocol-test program (frontends/fcitx5/test/protocol_test.cpp); the addon's constants are read
from its header. Needs what tests/fcitx5_build.py needs for the build; the header checks need nothing.
"""

import dataclasses
import re
import subprocess

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ime_protocol
from ime_protocol import (
    INPUT_MODES,
    MAX_CANDIDATES,
    MAX_MESSAGE_BYTES,
    MAX_PAGE_SIZE,
    MAX_SEGMENTS,
    MAX_SHORT_TEXT_CHARS,
    MAX_TEXT_CHARS,
    REQUEST_ID_MAX,
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
from tests.fcitx5_build import ADDON_SOURCE, build_addon
from tests.unit.test_protocol import (
    GARBAGE,
    LIMIT_CASES,
    OUTPUT,
    STRATEGIES,
    UINT32,
    REQUEST_IDS,
    WINDOW,
    locations,
    maps_in,
    patched,
    texts,
)

HEADER = (ADDON_SOURCE / "src" / "protocol.h").read_text(encoding="utf-8")
NON_BMP = "𠮷😀"  # four UTF-8 bytes each, one code point each (two UTF-16 units)


class Codec:
    """tsuzuri-protocol-test, one line out and one line back."""

    def __init__(self, program):
        self.process = subprocess.Popen([str(program)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(self, *words) -> str:
        self.process.stdin.write(" ".join(map(str, words)) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        assert answer, f"tsuzuri-protocol-test exited with {self.process.wait(10)}"
        return answer.strip()

    def request(self, *words) -> tuple[bytes, int, bool]:
        """The bytes, request id and secret flag of the Request a builder makes."""
        data, request_id, secret = self.ask(*words).split()
        return bytes.fromhex(data[1:]), int(request_id), secret == "1"

    def decode(self, data: bytes) -> str:
        return self.ask("decode", hexed(data))


@pytest.fixture(scope="module")
def codec(tmp_path_factory):
    codec = Codec(build_addon(tmp_path_factory) / "tsuzuri-protocol-test")
    yield codec
    codec.process.stdin.close()
    assert codec.process.wait(10) == 0


def hexed(value: str | bytes) -> str:
    return "x" + (value.encode() if isinstance(value, str) else value).hex()


def described(output: Output) -> str:
    """An Output in the words tsuzuri-protocol-test writes for one it decoded."""
    words = [
        "output",
        output.request_id,
        int(output.consumed),
        hexed(output.commit),
        hexed(output.aux),
        hexed(output.mode),
        output.preedit.cursor,
        len(output.preedit.segments),
    ]
    for segment in output.preedit.segments:
        words += [hexed(segment.text), segment.style.value]
    if (window := output.candidates) is None:
        words.append("-")
    else:
        words += [
            "window",
            window.cursor,
            window.page_size,
            len(window.labels),
            *map(hexed, window.labels),
            len(window.items),
        ]
        for item in window.items:
            words += [hexed(item.text), hexed(item.annotation)]
    deletion = output.delete_surrounding
    words += ["-"] if deletion is None else ["delete", deletion.before, deletion.after]
    return " ".join(map(str, words))


def python_decoded(data: bytes) -> str:
    try:
        return described(decode(data, Output))
    except ProtocolError:
        return "invalid"


def assert_decoded_alike(codec: Codec, data: bytes) -> None:
    assert codec.decode(data) == python_decoded(data), data[:200]


# --- What the addon sends -----------------------------------------------------------------------------


def cpp_enum(name: str) -> list[str]:
    found = re.search(rf"enum class {name} \{{([^}}]*)\}}", HEADER)
    assert found is not None, name
    body = found.group(1)
    return [word.strip() for word in body.split(",")]


def snake_case(camel: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", camel).lower()


# Integers at every msgpack size boundary: positive fixint, uint8, uint16, uint32, uint64.
BOUNDARIES = [0, 1, 127, 128, 255, 256, 65535, 65536, UINT32_MAX]


@pytest.mark.parametrize(
    "keyval, keycode, modifiers, request_id",
    [
        (0, 0, 0, 0),
        (ord("a"), 38, ime_protocol.SHIFT_MASK, 7),
        (UINT32_MAX, UINT32_MAX, UINT32_MAX, REQUEST_ID_MAX),
        *[(value, value, value, value) for value in BOUNDARIES],
        (0xFF0D, 36, 0, 2**32),
        (0x20, 65, 0, 2**63 - 2),
    ],
)
def test_key_events_encode_as_ime_protocol_does(codec, keyval, keycode, modifiers, request_id):
    assert codec.request("key_event", keyval, keycode, modifiers, request_id) == (
        encode(KeyEvent(keyval, keycode, modifiers, request_id)),
        request_id,
        False,
    )


@given(UINT32, UINT32, UINT32, REQUEST_IDS)
def test_random_key_events_encode_as_ime_protocol_does(codec, keyval, keycode, modifiers, request_id):
    assert codec.request("key_event", keyval, keycode, modifiers, request_id)[0] == encode(
        KeyEvent(keyval, keycode, modifiers, request_id)
    )


def test_every_purpose_the_addon_knows_encodes_as_ime_protocol_does(codec):
    for index, name in enumerate(cpp_enum("InputPurpose")):
        purpose = InputPurpose(snake_case(name))
        assert codec.request("focus_in", index) == (encode(FocusIn(purpose)), 0, purpose.is_secret), name


@pytest.mark.parametrize(
    "words, message",
    [
        (["focus_out"], FocusOut()),
        (["reset"], Reset()),
        (["discard"], Discard()),
        *[(["set_input_mode", hexed(mode)], SetInputMode(mode)) for mode in sorted(INPUT_MODES)],
    ],
)
def test_messages_without_a_request_id_encode_as_ime_protocol_does(codec, words, message):
    assert codec.request(*words) == (encode(message), 0, False)


@pytest.mark.parametrize(
    "index, request_id", [(0, 0), (MAX_CANDIDATES - 1, REQUEST_ID_MAX), *zip(BOUNDARIES[:6], BOUNDARIES)]
)
def test_candidate_selections_encode_as_ime_protocol_does(codec, index, request_id):
    assert codec.request("select_candidate", index, request_id) == (
        encode(SelectCandidate(index, request_id)),
        request_id,
        False,
    )


def long_text(length: int) -> str:
    return "".join(("あa" + NON_BMP)[i % 4] for i in range(length))


@pytest.mark.parametrize(
    "text, cursor, anchor",
    [
        ("", 0, 0),
        ("", 3, 5),
        ("今日は", 1, 3),
        ("今日は", 3, 0),
        ("今日は", 9, 1),
        ("今日は", 1, 9),
        (NON_BMP + "野家", 2, 4),
        (NON_BMP * 3, 5, 1),
        ("x" * 31, 31, 31),
        ("x" * 32, 0, 32),
        ("x" * 255, 1, 1),
        ("x" * 256, 2, 2),  # msgpack str size boundaries
        (long_text(MAX_TEXT_CHARS), MAX_TEXT_CHARS, 0),  # exactly the limit: sent whole
        (long_text(MAX_TEXT_CHARS + 1), 0, MAX_TEXT_CHARS + 1),  # cut after the limit
        (long_text(3 * MAX_TEXT_CHARS), 3 * MAX_TEXT_CHARS // 2, 0),  # cut around the cursor
        (long_text(3 * MAX_TEXT_CHARS), 3 * MAX_TEXT_CHARS, 3 * MAX_TEXT_CHARS - 10),  # at the end
        (NON_BMP * MAX_TEXT_CHARS, MAX_TEXT_CHARS + 7, MAX_TEXT_CHARS // 2),
        ("a\x00b", 1, 1),  # NUL: the protocol cannot carry it, and sends no text instead
    ],
)
def test_surrounding_text_is_cut_and_encoded_as_ime_protocol_does(codec, text, cursor, anchor):
    assert codec.request("surrounding_text", hexed(text), cursor, anchor) == (
        encode(SurroundingText.around_cursor(text, cursor, anchor)),
        0,
        False,
    )


@pytest.mark.parametrize("raw", [b"\xff", b"ab\xe3\x81", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"])
def test_surrounding_text_that_is_not_utf8_is_sent_as_none(codec, raw):
    # Invalid bytes, a truncated character, an overlong "/", an encoded surrogate, a code point past U+10FFFF.
    assert codec.request("surrounding_text", hexed(raw), 1, 1)[0] == encode(SurroundingText("", 0, 0))
    assert SurroundingText.around_cursor("\ud800", 0, 0) == SurroundingText("", 0, 0)  # what Python can hold of it


@settings(max_examples=300)
@given(texts(60) | st.text(max_size=5), st.integers(0, UINT32_MAX), st.integers(0, UINT32_MAX))
def test_random_surrounding_texts_encode_as_ime_protocol_does(codec, text, cursor, anchor):
    cursor, anchor = cursor % (len(text) + 3), anchor % (len(text) + 3)  # mostly inside the text, sometimes past it
    assert codec.request("surrounding_text", hexed(text), cursor, anchor)[0] == encode(
        SurroundingText.around_cursor(text, cursor, anchor)
    )


# --- What the daemon answers --------------------------------------------------------------------------


@settings(max_examples=300)
@given(STRATEGIES[Output])
def test_every_output_decodes_as_ime_protocol_decodes_it(codec, output):
    assert codec.decode(encode(output)) == described(output)


def biggest_output() -> Output:
    """Every field at its limit, with four-byte characters where the size limit allows."""
    segment = PreeditSegment(NON_BMP[0] * (MAX_TEXT_CHARS // MAX_SEGMENTS), SegmentStyle.UNDERLINE)
    segments = (PreeditSegment(segment.text, SegmentStyle.HIGHLIGHT),) + (segment,) * (MAX_SEGMENTS - 1)
    items = tuple(CandidateItem(f"候補{i}" + NON_BMP * 10, "注" * 20) for i in range(MAX_CANDIDATES))
    window = CandidateWindow(items, MAX_CANDIDATES - 1, MAX_PAGE_SIZE, (NON_BMP + "0123456789abcdef")[:MAX_PAGE_SIZE])
    return Output(
        REQUEST_ID_MAX,
        True,
        NON_BMP[1] * MAX_TEXT_CHARS,
        Preedit(segments, MAX_TEXT_CHARS),
        window,
        "a" * MAX_SHORT_TEXT_CHARS,
        "halfwidth_katakana",
        SurroundingDeletion(MAX_TEXT_CHARS, MAX_TEXT_CHARS),
    )


@pytest.mark.parametrize(
    "output",
    [
        Output(0, False, "", Preedit((), 0), None, "", "hiragana"),  # every string empty, nothing optional
        Output(
            1,
            True,
            "",
            Preedit((PreeditSegment("", SegmentStyle.NONE),), 0),
            CandidateWindow((CandidateItem("", ""),), 0, 1, "1"),
            "",
            "direct",
            SurroundingDeletion(0, 1),
        ),
        Output(
            2,
            True,
            NON_BMP,
            Preedit((PreeditSegment(NON_BMP, SegmentStyle.HIGHLIGHT),), 1),
            CandidateWindow((CandidateItem(NON_BMP, NON_BMP),) * 3, 2, 2, NON_BMP),
            NON_BMP,
            "katakana",
            None,
        ),
        biggest_output(),
    ],
    ids=["empty", "empty-strings", "non-bmp", "biggest"],
)
def test_edge_outputs_decode_as_ime_protocol_decodes_them(codec, output):
    data = encode(output)
    assert codec.decode(data) == described(output)
    if output.candidates is not None and len(output.candidates.items) == MAX_CANDIDATES:
        assert len(data) > MAX_MESSAGE_BYTES // 2  # near the size limit


def output_wire(**changes) -> bytes:
    wire = msgpack.unpackb(encode(OUTPUT))
    wire.update(changes)
    return msgpack.packb(wire)


def patched_output(path: tuple, value) -> bytes:
    return patched(OUTPUT, path, value)


# Outputs that ime_protocol refuses, each for one reason, and a few that it takes at a limit.
EDGE_BYTES = [
    b"",
    b"\xc1",
    b"\xc0",
    encode(OUTPUT) + b"\xc0",
    encode(OUTPUT) * 2,  # nothing, never-used byte, nil, trailing
    b"\x91" * 100_000 + b"\xc0",
    b"\x81\xa1x" * 50_000 + b"\xc0",  # depth bombs within the size limit
    b"\xdd\xff\xff\xff\xff",
    b"\xdf\xff\xff\xff\xff",
    b"\xdb\xff\xff\xff\xff",  # 4 billion items, entries, bytes
    encode(OUTPUT) + b"\xc0" * (MAX_MESSAGE_BYTES - len(encode(OUTPUT)) + 1),  # over the size limit
    output_wire(commit="x" * MAX_TEXT_CHARS, aux="a" * 100),
    msgpack.packb(
        {
            "v": 2,
            "t": "output",
            "request_id": 1,
            "consumed": True,
            "commit": "x" * MAX_TEXT_CHARS,
            "preedit": {"segments": [], "cursor": 0},
            "candidates": {
                "items": [{"text": "字" * 1024, "annotation": ""}] * MAX_CANDIDATES,
                "cursor": 0,
                "page_size": 1,
                "labels": "1",
            },
            "aux": "",
            "mode": "direct",
            "delete_surrounding": None,
        }
    ),  # valid fields, but over MAX_MESSAGE_BYTES
    encode(OUTPUT).replace(b"\xa1v\x02", b"\xa1v\x01"),
    encode(OUTPUT).replace(b"\xa1v\x02", b"\xa1v\x03"),
    encode(OUTPUT).replace(b"\xa1v\x02", b"\xa1v\xc3"),  # version 1, 3, true
    encode(OUTPUT).replace(b"\xa6output", b"\xa6status"),
    encode(OUTPUT).replace(b"\xa6output", b"\xa6Output"),
    encode(KeyEvent(1, 2, 3, 4)),  # another message
    output_wire(request_id=REQUEST_ID_MAX),
    output_wire(request_id=REQUEST_ID_MAX + 1),
    output_wire(request_id=-1),
    output_wire(request_id=2**64 - 1),
    output_wire(request_id=1.0),
    output_wire(consumed=1),
    output_wire(consumed=None),
    output_wire(mode="romaji"),
    output_wire(mode=""),
    output_wire(mode="hiragana\x00"),
    output_wire(mode=b"hiragana"),
    output_wire(commit="a\x00b"),
    output_wire(commit=b"bytes"),
    output_wire(aux="a" * (MAX_SHORT_TEXT_CHARS + 1)),
    output_wire(commit=NON_BMP[0] * MAX_TEXT_CHARS),
    output_wire(commit=NON_BMP[0] * (MAX_TEXT_CHARS + 1)),
    output_wire(extra=0),
    output_wire(**{"v": 2, "": 0}),
    output_wire(candidates=None, delete_surrounding=None),
    output_wire(candidates=[]),
    output_wire(preedit=None),
    output_wire(delete_surrounding={"before": 0, "after": 0}),
    output_wire(delete_surrounding={"before": MAX_TEXT_CHARS + 1, "after": 0}),
    output_wire(delete_surrounding={"before": 0, "after": MAX_TEXT_CHARS}),
    output_wire(delete_surrounding={"before": 1}),
    output_wire(delete_surrounding={"before": 1, "after": 0, "x": 0}),
    patched_output(("preedit", "cursor"), 4),
    patched_output(("preedit", "cursor"), 5),
    patched_output(("preedit", "segments", 1, "style"), "highlight"),  # two segments being converted
    patched_output(("preedit", "segments", 1, "style"), "bold"),
    patched_output(("preedit", "segments", 1), "は"),
    patched_output(
        ("preedit", "segments"), [{"text": "x" * MAX_TEXT_CHARS, "style": "none"}, {"text": "y", "style": "none"}]
    ),  # too much text in all
    patched_output(("preedit", "segments"), [{"text": "", "style": "none"}] * (MAX_SEGMENTS + 1)),
    patched_output(("candidates", "cursor"), 2),
    patched_output(("candidates", "cursor"), 3),
    patched_output(("candidates", "items"), []),
    patched_output(("candidates", "labels"), "123"),
    patched_output(("candidates", "labels"), "1"),
    patched_output(("candidates", "labels"), NON_BMP),
    patched_output(("candidates", "page_size"), 0),
    patched(
        dataclasses.replace(OUTPUT, candidates=CandidateWindow(WINDOW.items, 0, MAX_PAGE_SIZE, "x" * MAX_PAGE_SIZE)),
        ("candidates", "page_size"),
        MAX_PAGE_SIZE + 1,
    ),
    patched_output(("candidates", "items"), [{"text": "x", "annotation": ""}] * (MAX_CANDIDATES + 1)),
    patched_output(("candidates", "items", 0), {"text": "x"}),
    patched_output(("candidates", "items", 0, "annotation"), None),
]
# The same Output with bytes that are not UTF-8 (or not allowed in it) where its strings are.
BAD_UTF8 = [b"\xff", b"\xe3\x81", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe3\x81\x82\x80"]
STRING_SPOTS = [("commit", "COMMIT"), ("aux", "AUX"), ("mode", "hiragana")]


def with_raw_string(field: str, placeholder: str, raw: bytes) -> bytes:
    data = output_wire(**{field: placeholder}) if field != "mode" else encode(OUTPUT)
    marker = msgpack.packb(placeholder)
    return data.replace(marker, msgpack.packb(raw, use_bin_type=False), 1)


@pytest.mark.parametrize("data", EDGE_BYTES, ids=range(len(EDGE_BYTES)))
def test_edge_bytes_decode_or_are_refused_as_by_ime_protocol(codec, data):
    assert_decoded_alike(codec, data)


@pytest.mark.parametrize("raw", BAD_UTF8)
def test_strings_that_are_not_utf8_are_refused(codec, raw):
    for field, placeholder in STRING_SPOTS:
        data = with_raw_string(field, placeholder, raw)
        assert python_decoded(data) == "invalid"
        assert codec.decode(data) == "invalid", field
    labels = encode(OUTPUT).replace(b"\xa212", msgpack.packb(b"1" + raw, use_bin_type=False), 1)
    assert codec.decode(labels) == python_decoded(labels) == "invalid"  # the labels are split into characters


@pytest.mark.parametrize("name", [name for name, (message, *_) in LIMIT_CASES.items() if message is OUTPUT])
def test_limits_are_those_of_ime_protocol(codec, name):
    _, path, value_of_size, limit = LIMIT_CASES[name]
    for size in (0, limit, limit + 1):
        assert_decoded_alike(codec, patched_output(path, value_of_size(size)))


def test_garbage_anywhere_in_an_output_is_refused(codec):
    wire = msgpack.unpackb(encode(OUTPUT))
    for index in range(len(list(locations(wire)))):
        for garbage in GARBAGE + [True, None, "x", 0]:
            corrupted = msgpack.unpackb(encode(OUTPUT))
            target, target_key = list(locations(corrupted))[index]
            target[target_key] = garbage
            assert_decoded_alike(codec, msgpack.packb(corrupted))


def test_missing_and_extra_fields_are_refused(codec):
    for index in range(len(maps_in(msgpack.unpackb(encode(OUTPUT))))):
        for drop in (True, False):
            wire = msgpack.unpackb(encode(OUTPUT))
            target = maps_in(wire)[index]
            if drop:
                for key in list(target):
                    copy = msgpack.unpackb(msgpack.packb(wire))
                    del maps_in(copy)[index][key]
                    assert_decoded_alike(codec, msgpack.packb(copy))
            else:
                target["extra"] = 0
                assert_decoded_alike(codec, msgpack.packb(wire))


def test_every_truncation_is_refused(codec):
    data = encode(OUTPUT)
    for end in range(len(data)):
        assert codec.decode(data[:end]) == "invalid"


@settings(max_examples=300)
@given(STRATEGIES[Output], st.data())
def test_corrupted_bytes_decode_or_are_refused_as_by_ime_protocol(codec, output, data):
    encoded = bytearray(encode(output))
    for _ in range(data.draw(st.integers(1, 3))):
        position = data.draw(st.integers(0, len(encoded) - 1))
        action = data.draw(st.sampled_from(["flip", "insert", "delete"]))
        if action == "flip":
            encoded[position] ^= 1 << data.draw(st.integers(0, 7))
        elif action == "insert":
            encoded.insert(position, data.draw(st.integers(0, 255)))
        elif len(encoded) > 1:
            del encoded[position]
    assert_decoded_alike(codec, bytes(encoded))


@given(st.binary(max_size=64))
def test_random_bytes_are_refused_without_a_crash(codec, data):
    assert_decoded_alike(codec, data)


# --- The addon's constants ----------------------------------------------------------------------------


def cpp_constant(name: str) -> int:
    found = re.search(rf"constexpr \w+ {name} = ([^;]+);", HEADER)
    assert found is not None, name
    expression = found.group(1)
    return eval(re.sub(r"(\d+)u(ll)?\b", r"\1", expression))  # C integer literals, as Python reads them


@pytest.mark.parametrize(
    "name",
    [
        "REQUEST_ID_MAX",
        "MAX_MESSAGE_BYTES",
        "MAX_TEXT_CHARS",
        "MAX_CANDIDATE_CHARS",
        "MAX_ANNOTATION_CHARS",
        "MAX_SHORT_TEXT_CHARS",
        "MAX_CANDIDATES",
        "MAX_SEGMENTS",
        "MAX_PAGE_SIZE",
        "SHIFT_MASK",
        "LOCK_MASK",
        "CONTROL_MASK",
        "ALT_MASK",
        "NUM_LOCK_MASK",
        "SUPER_MASK",
        "HYPER_MASK",
        "META_MASK",
    ],
)
def test_the_addons_limits_and_masks_are_ime_protocols(name):
    assert cpp_constant(name) == getattr(ime_protocol, name)


def test_the_addons_enums_are_ime_protocols():
    modes = re.search(r"INPUT_MODES\[\] = \{([^}]*)\}", HEADER).group(1)
    assert set(re.findall(r'"(\w+)"', modes)) == INPUT_MODES
    assert [snake_case(name) for name in cpp_enum("SegmentStyle")] == [style.value for style in SegmentStyle]
    # fcitx has no PIN field: everything else it can tell, the addon sends.
    assert {snake_case(name) for name in cpp_enum("InputPurpose")} == {p.value for p in InputPurpose} - {"pin"}
    assert re.search(r"PROTOCOL_VERSION = (\d+);", (ADDON_SOURCE / "src" / "protocol.cpp").read_text()).group(1) == str(
        ime_protocol.PROTOCOL_VERSION
    )
