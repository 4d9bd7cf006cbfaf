"""Spelling policies: which auxiliary words a conversion writes in kana (`conversion.spelling`).

`Spelling.RANKED` keeps what the ranking chose, which follows the text the language model learned from: て下さい
in one conversion, てください in the next. `Spelling.OFFICIAL` writes in kana what the Agency for Cultural
Affairs' rules for official documents (公用文における漢字使用等について, 平成22年内閣訓令第1号, 1(2)) ask to be
written in kana: auxiliary verbs after て (…てください, …ていただく, …ていく, …てくる, …てみる, …ておく, …てしまう,
…てあげる, …てよい) and お/ご…ください, いただく, いたす; formal nouns (こと, とき, ところ, もの, ほか, ため, わけ,
ゆえ, よう); ある, いる, できる, なる, ない; particles written with kanji (など, まで, ほど, くらい, だけ); the
conjunctions かつ, ただし, したがって, なお, また, ゆえに (及び, 並びに, 又は, 若しくは stay in kanji, as the rules
say); the suffixes たち and ども; やはり, よほど; …にすぎない, …について, …かもしれない, …とともに.

Each rule names a kanji stem, what must come before it, and its kana. A stem is rewritten only where the result
still spells the reading (so 行う is never いう, 平等 never 平など, 3時 never 3とき), it is not followed by a kanji
(事件, 物語), and no dictionary word takes it together with a kanji beside it (一致, 食べ物, 友達): those are other
words, not the auxiliary one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum

from daemon.kana import spells


class Spelling(StrEnum):
    RANKED = "ranked"
    OFFICIAL = "official"


# (text, its reading, start, end) → whether a dictionary word spells text[start:end] together with a kanji beside
# it, read as the reading allows (TextReader.in_longer_word).
InLongerWord = Callable[[str, str, int, int], bool]

_KANJI = "\u3400-\u9fff々〆ヶ"
_NOT_AFTER_KANJI = f"(?:^|[^{_KANJI}])"
_AFTER_TE = "て|[んい]で"  # 読んで, 泳いで: not the particle で (テレビで見る)
# お待ち下さい, ご連絡下さい, お越し頂く: an honorific prefix and a verb or noun of kanji.
_AFTER_HONORIFIC = f"[ごお][{_KANJI}]{{1,4}}|お[{_KANJI}][ぁ-ゖ]"
_SENTENCE_START = "(?:^|[、。，．\n「『（(])"


@dataclass(frozen=True)
class KanaRule:
    written: str  # the kanji stem as conversions write it; its okurigana follows
    kana: tuple[str, ...]  # its kana, tried in order until one spells the reading
    after: str = ""  # a regular expression the text before it must end with ("" for anything)
    not_before: str = ""  # characters it may not be followed by (besides kanji)
    # Whether what comes before says enough (…て下さい, ご確認頂く) or the reading does (私達: 友達 reads だち) to
    # rewrite it even where a dictionary word takes it with a kanji beside it (確認頂け, 私達).
    inside_words: bool = False


OFFICIAL_RULES: tuple[KanaRule, ...] = (
    # Auxiliary verbs.
    KanaRule("下さ", ("くださ",), f"{_AFTER_TE}|{_AFTER_HONORIFIC}", inside_words=True),
    KanaRule("頂", ("いただ",), f"{_AFTER_TE}|{_AFTER_HONORIFIC}", inside_words=True),
    KanaRule("戴", ("いただ",), f"{_AFTER_TE}|{_AFTER_HONORIFIC}", inside_words=True),
    KanaRule("致", ("いた",)),
    KanaRule("行", ("い",), _AFTER_TE, inside_words=True),
    KanaRule("来", ("く", "き", "こ"), _AFTER_TE, inside_words=True),
    KanaRule("見", ("み",), _AFTER_TE, inside_words=True),
    KanaRule("置", ("お",), _AFTER_TE, inside_words=True),
    KanaRule("仕舞", ("しま",), _AFTER_TE, inside_words=True),
    KanaRule("上げ", ("あげ",), _AFTER_TE, inside_words=True),
    KanaRule("良", ("よ",), f"{_AFTER_TE}も?", inside_words=True),
    KanaRule("過ぎ", ("すぎ",), "に", inside_words=True),
    KanaRule("就い", ("つい",), "に", inside_words=True),
    KanaRule("知れ", ("しれ",), "かも", inside_words=True),
    KanaRule("共に", ("ともに",), "と", inside_words=True),
    # Verbs and an adjective.
    KanaRule("有", ("あ",), _NOT_AFTER_KANJI),
    KanaRule("在", ("あ",), _NOT_AFTER_KANJI),
    KanaRule("居", ("い",), _NOT_AFTER_KANJI),
    KanaRule("出来", ("でき",), _NOT_AFTER_KANJI),
    KanaRule("成", ("な",), _NOT_AFTER_KANJI),
    KanaRule("無", ("な",), _NOT_AFTER_KANJI),
    # Formal nouns.
    KanaRule("事", ("こと",), _NOT_AFTER_KANJI),
    KanaRule("時", ("とき",), _NOT_AFTER_KANJI),
    KanaRule("所", ("ところ",), _NOT_AFTER_KANJI),
    KanaRule("物", ("もの",), _NOT_AFTER_KANJI),
    KanaRule("外", ("ほか",), _NOT_AFTER_KANJI),
    KanaRule("為", ("ため",)),
    KanaRule("訳", ("わけ",), _NOT_AFTER_KANJI),
    KanaRule("故", ("ゆえ",), _NOT_AFTER_KANJI),
    KanaRule("様", ("よう",)),
    # Particles.
    KanaRule("等", ("など",)),
    KanaRule("迄", ("まで",)),
    KanaRule("程", ("ほど",)),
    KanaRule("位", ("ぐらい", "くらい")),
    KanaRule("丈", ("だけ",)),
    # Conjunctions and adverbs.
    KanaRule("且つ", ("かつ",), _SENTENCE_START),
    KanaRule("但し", ("ただし",), _SENTENCE_START),
    KanaRule("従って", ("したがって",), _SENTENCE_START),
    KanaRule("尚", ("なお",), _SENTENCE_START),
    KanaRule("故に", ("ゆえに",), _SENTENCE_START),
    KanaRule("又", ("また",), _SENTENCE_START, not_before="は"),
    KanaRule("矢張", ("やは",)),
    KanaRule("余程", ("よほど",)),
    # Suffixes.
    KanaRule("達", ("たち",), inside_words=True),
    KanaRule("共", ("ども",), inside_words=True),
)


def _matches(rule: KanaRule, text: str, before: str) -> Iterator[int]:
    start = text.find(rule.written)
    while start >= 0:
        end = start + len(rule.written)
        follows = text[end : end + 1]
        if (
            not re.fullmatch(f"[{_KANJI}]", follows)
            and not (follows and follows in rule.not_before)
            and (not rule.after or re.search(f"(?:{rule.after})$", before + text[:start]))
        ):
            yield start
        start = text.find(rule.written, start + 1)


def official_spelling(text: str, reading: str, before: str = "", in_longer_word: InLongerWord | None = None) -> str:
    """`text` (a conversion of `reading`, after `before`) with the official rules' kana."""
    if not spells(text, reading):
        return text  # not a conversion of this reading (a rewriter's, a symbol): nothing to go by
    for rule in OFFICIAL_RULES:
        # Each occurrence on its own, last first, so that the offsets of the earlier ones stay.
        for start in reversed(list(_matches(rule, text, before))):
            end = start + len(rule.written)
            if not rule.inside_words and in_longer_word is not None and in_longer_word(text, reading, start, end):
                continue
            for kana in rule.kana:
                rewritten = text[:start] + kana + text[end:]
                if spells(rewritten, reading):
                    text = rewritten
                    break
    return text


def spelled(
    spelling: Spelling, text: str, reading: str, before: str = "", in_longer_word: InLongerWord | None = None
) -> str:
    """`text` as `spelling` writes it."""
    if spelling is Spelling.OFFICIAL:
        return official_spelling(text, reading, before, in_longer_word)
    return text
