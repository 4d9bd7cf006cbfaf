"""Script and width variants of one text: ひらがな, カタカナ, ﾊﾝｶｸ, ｆｕｌｌ and half ASCII (daemon/forms.py, as
the F6–F10 keys write them)."""

from daemon.forms import (
    has_ascii_forms,
    to_fullwidth_ascii,
    to_fullwidth_katakana,
    to_halfwidth_ascii,
    to_halfwidth_katakana,
)
from daemon.kana import is_kana, to_hiragana, to_katakana
from daemon.rewriters.base import Rewrite, unique_by_text

SOURCE = "width"


def width_rewrites(text: str) -> list[Rewrite]:
    """The variants that apply to `text` (kana forms if it has kana, ASCII widths if it has ASCII)."""
    rewrites = []
    full = to_fullwidth_katakana(text)
    if any(is_kana(c) for c in full):
        rewrites += [
            Rewrite(to_hiragana(full), "ひらがな", SOURCE),
            Rewrite(to_katakana(full), "カタカナ", SOURCE),
            Rewrite(to_halfwidth_katakana(full), "[半]カタカナ", SOURCE),
        ]
    if has_ascii_forms(text):
        rewrites += [
            Rewrite(to_fullwidth_ascii(text), "[全]", SOURCE),
            Rewrite(to_halfwidth_ascii(text), "[半]", SOURCE),
        ]
    return unique_by_text(rewrites)
