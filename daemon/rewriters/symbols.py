"""Symbol candidates for readings such as やじるし, まる or ほし (a small curated table)."""

from daemon.rewriters.base import Rewrite

SOURCE = "symbol"

_BRACKET_PAIRS = ("「」", "『』", "（）", "【】", "［］", "｛｝", "〈〉", "《》", "〔〕", "〘〙")

# reading -> symbols, most common first: a string of one-character symbols, or a tuple when a
# candidate is longer (brackets are offered as pairs, the way they are typed).
_SYMBOLS: dict[str, str | tuple[str, ...]] = {
    "やじるし": "→←↑↓⇒⇔↔↗↘↙↖",
    "みぎ": "→⇒",
    "ひだり": "←",
    "うえ": "↑",
    "した": "↓",
    "まる": "○●◎◯",
    "しかく": "□■◇◆",
    "さんかく": "△▲▽▼",
    "ほし": "☆★",
    "こめ": "※",
    "てん": "・、，．…",
    "・": "・／…‥",  # the / key types ・
    "なかぐろ": "・",
    "なかてん": "・",
    "てんてん": "…‥",
    "から": "〜",
    "ばつ": "×✕",
    "おなじ": "々〃仝",
    "どう": "々〃",
    "ゆうびん": "〒",
    "でんわ": "☎℡",
    "おんぷ": "♪♫♬",
    "はーと": "♡♥",
    "たす": "＋±",
    "ぷらす": "＋±",
    "まいなす": "−∓",
    "かける": "×",
    "わる": "÷",
    "いこーる": "＝≠≒≡",
    "ふとうごう": "＜＞≦≧≪≫",
    "むげんだい": "∞",
    "ゆえに": "∴",
    "なぜなら": "∵",
    "ど": "°℃",
    "えん": "￥¥",
    "どる": "＄$",
    "ゆーろ": "€",
    "ぽんど": "£",
    "ぱーせんと": "％‰",
    "けいさん": "＋−×÷",
    "かっこ": _BRACKET_PAIRS,
    "かぎかっこ": ("「」", "『』"),
}


def symbol_rewrites(reading: str) -> list[Rewrite]:
    return [Rewrite(symbol, "記号", SOURCE) for symbol in _SYMBOLS.get(reading, ())]
