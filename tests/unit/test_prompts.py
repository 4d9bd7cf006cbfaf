import pytest

from daemon.engine.prompts import build_prompt


def test_jinen_exact():
    prompt = build_prompt("jinen", "こんにちは", "今日は")
    assert prompt.text == "\uEE02今日は\uEE00コンニチハ\uEE01"
    assert prompt.parts == (("\uEE02", True), ("今日は", False), ("\uEE00", True), ("コンニチハ", False),
                            ("\uEE01", True))


def test_jinen_keeps_last_ten_context_chars_and_applies_nfkc():
    prompt = build_prompt("jinen", "ｶﾀｶﾅ", "０１２３４５６７８９ＡＢＣ")
    assert prompt.text == "\uEE023456789ABC\uEE00カタカナ\uEE01"


def test_jinen_marks_context_even_when_empty():
    assert build_prompt("jinen", "かな", "").text == "\uEE02\uEE00カナ\uEE01"


def test_zenz_v1_has_no_context():
    assert build_prompt("zenz-v1", "へんかん", "前の文").text == "\uEE00ヘンカン\uEE01"


@pytest.mark.parametrize("fmt", ["zenz-v2", "zenz-v2.5"])
def test_zenz_v2_puts_context_after_input(fmt):
    assert build_prompt(fmt, "へんかん", "前の文").text == "\uEE00ヘンカン\uEE02前の文\uEE01"


def test_zenz_v2_keeps_forty_context_chars():
    context = "あ" * 10 + "い" * 40
    assert build_prompt("zenz-v2", "か", context).text == "\uEE00カ\uEE02" + "い" * 40 + "\uEE01"


def test_zenz_v3_puts_context_first():
    assert build_prompt("zenz-v3", "へんかん", "前の文").text == "\uEE02前の文\uEE00ヘンカン\uEE01"


def test_typed_markers_are_removed_from_user_text():
    prompt = build_prompt("jinen", "か\uEE01な", "文\uEE00脈")
    assert prompt.text == "\uEE02文脈\uEE00カナ\uEE01"
    assert [text for text, is_marker in prompt.parts if is_marker] == ["\uEE02", "\uEE00", "\uEE01"]


def test_unknown_format_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown prompt format 'gpt'"):
        build_prompt("gpt", "か", "")
