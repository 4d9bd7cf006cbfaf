"""tests/wayland.py's translation of xdotool-style key names into one wtype run."""

from tests.wayland import wtype_arguments


def test_letters_in_a_row_are_one_text_and_named_keys_and_chords_are_options():
    assert wtype_arguments(tuple("kyou") + ("space",) + tuple("ha") + ("Return",)) == [
        "kyou",
        "-k",
        "space",
        "ha",
        "-k",
        "Return",
    ]
    assert wtype_arguments(("shift+Left", "ctrl+a", "x")) == [
        "-M",
        "shift",
        "-k",
        "Left",
        "-m",
        "shift",
        "-M",
        "ctrl",
        "a",
        "-m",
        "ctrl",
        "x",
    ]
    assert wtype_arguments(()) == []
