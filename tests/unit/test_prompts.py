import pytest

from daemon.engine.prompts import build_prompt


def test_jinen_exact():
    prompt = build_prompt("jinen", "こんにちは", "今日は")
    assert prompt.text == "\uee02今日は\uee00コンニチハ\uee01"
    assert prompt.parts == (
        ("\uee02", True),
        ("今日は", False),
        ("\uee00", True),
        ("コンニチハ", False),
        ("\uee01", True),
    )


def test_jinen_keeps_last_ten_context_chars_and_applies_nfkc():
    prompt = build_prompt("jinen", "ｶﾀｶﾅ", "０１２３４５６７８９ＡＢＣ")
    assert prompt.text == "\uee023456789ABC\uee00カタカナ\uee01"


def test_jinen_marks_context_even_when_empty():
    assert build_prompt("jinen", "かな", "").text == "\uee02\uee00カナ\uee01"


def test_zenz_v1_has_no_context():
    assert build_prompt("zenz-v1", "へんかん", "前の文").text == "\uee00ヘンカン\uee01"


@pytest.mark.parametrize("fmt", ["zenz-v2", "zenz-v2.5"])
def test_zenz_v2_puts_context_after_input(fmt):
    assert build_prompt(fmt, "へんかん", "前の文").text == "\uee00ヘンカン\uee02前の文\uee01"


def test_zenz_v2_keeps_forty_context_chars():
    context = "あ" * 10 + "い" * 40
    assert build_prompt("zenz-v2", "か", context).text == "\uee00カ\uee02" + "い" * 40 + "\uee01"


def test_zenz_v3_puts_context_first():
    assert build_prompt("zenz-v3", "へんかん", "前の文").text == "\uee02前の文\uee00ヘンカン\uee01"


def test_typed_markers_are_removed_from_user_text():
    prompt = build_prompt("jinen", "か\uee01な", "文\uee00脈")
    assert prompt.text == "\uee02文脈\uee00カナ\uee01"
    assert [text for text, is_marker in prompt.parts if is_marker] == ["\uee02", "\uee00", "\uee01"]


def test_unknown_format_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown prompt format 'gpt'"):
        build_prompt("gpt", "か", "")
