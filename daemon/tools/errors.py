"""What kind of error a wrong first candidate is, judged against the accepted output (tsuzuri-eval --errors).

Both strings spell the same reading, so where they differ the spellings of one stretch of it differ. The
differing stretches (a character diff) decide the class:
- a stretch in kana on one side is a spelling variant when, in the dictionary's most likely words of each
  string, it grows over shared characters to the same word boundaries on both sides and starts with a word of
  the same coarse class (下さい/ください, 私達/私たち, 取扱い/取り扱い), or is the same kana in the other script;
  otherwise kana took the place of another word there (史家/しか);
- kanji against kanji is a wrong kanji (the same split of the reading into words, another homophone);
- anything else moved kana against kanji: the reading was split into other words (segmentation).
An item whose every stretch is a variant is a variant, wherever the reference stands. Otherwise, when no
accepted output is among the candidates, the pool is to blame: an unknown word if a differing stretch of the
reference, widened to its run of kanji and katakana, is no dictionary entry, else not in the pool.
"""

from __future__ import annotations

import difflib
from collections import Counter
from enum import Enum
from typing import Protocol
from collections.abc import Callable, Iterable, Sequence

from daemon.dictionary.readings import WrittenWord
from daemon.dictionary.word_class import class_of_id
from daemon.kana import is_hiragana, is_kana, to_hiragana

_SHARED_CHARS_GROWN = 8  # how far a stretch grows over shared characters to the words it belongs to


class Lexicon(Protocol):
    def entries(self, text: str) -> frozenset[tuple[str, int]]:
        """(reading, word class id) of each dictionary entry written `text`."""
        ...

    def words_of(self, text: str) -> list[tuple[int, WrittenWord]]:
        """The most likely words of `text`, as (start, word)."""
        ...


class ErrorClass(Enum):
    VARIANT = "variant"
    WRONG_KANJI = "wrong_kanji"
    SEGMENTATION = "segmentation"
    UNKNOWN_WORD = "unknown_word"
    NOT_IN_POOL = "not_in_pool"


class _Stretch(Enum):
    VARIANT = "variant"
    KANJI = "kanji"
    SEGMENTATION = "segmentation"


def _all_kana(text: str) -> bool:
    return all(is_kana(ch) for ch in text)


def _shared_before(top: str, i: int, reference: str, j: int) -> int:
    count = 0
    while count < min(i, j, _SHARED_CHARS_GROWN) and top[i - count - 1] == reference[j - count - 1]:
        count += 1
    return count


def _shared_after(top: str, i: int, reference: str, j: int) -> int:
    count = 0
    while count < min(len(top) - i, len(reference) - j, _SHARED_CHARS_GROWN) and top[i + count] == reference[j + count]:
        count += 1
    return count


# A string's most likely words by their start (parsed once per classification, however many stretches ask).
WordsOf = Callable[[str], dict[int, WrittenWord]]


def _same_word(top: str, i1: int, i2: int, reference: str, j1: int, j2: int, words_of: WordsOf) -> bool:
    """Whether the stretch top[i1:i2] / reference[j1:j2] is the same words spelled two ways: grown over the
    characters both share to the nearest word boundaries common to both strings' words, it starts with a word of
    one coarse class on both sides."""
    top_words, reference_words = words_of(top), words_of(reference)
    top_ends = {start + word.length for start, word in top_words.items()}
    reference_ends = {start + word.length for start, word in reference_words.items()}
    before = next(
        (
            k
            for k in range(_shared_before(top, i1, reference, j1) + 1)
            if i1 - k in top_words and j1 - k in reference_words
        ),
        None,
    )
    after_fits = any(
        i2 + k in top_ends and j2 + k in reference_ends for k in range(_shared_after(top, i2, reference, j2) + 1)
    )
    if before is None or not after_fits:
        return False
    ours, theirs = top_words[i1 - before], reference_words[j1 - before]
    return class_of_id(ours.left_id) is class_of_id(theirs.left_id)


def _stretch_kind(top: str, i1: int, i2: int, reference: str, j1: int, j2: int, words_of: WordsOf) -> _Stretch:
    ours, theirs = top[i1:i2], reference[j1:j2]
    if ours and theirs and _all_kana(ours + theirs) and to_hiragana(ours) == to_hiragana(theirs):
        return _Stretch.VARIANT  # the same kana in the other script
    if _all_kana(ours) or _all_kana(theirs):
        return _Stretch.VARIANT if _same_word(top, i1, i2, reference, j1, j2, words_of) else _Stretch.SEGMENTATION
    if not any(is_hiragana(ch) for ch in ours + theirs):
        return _Stretch.KANJI
    return _Stretch.SEGMENTATION


def _widened(text: str, start: int, end: int) -> str:
    """text[start:end] grown over its neighbouring characters that are not hiragana (the rest of the word)."""
    while start > 0 and not is_hiragana(text[start - 1]):
        start -= 1
    while end < len(text) and not is_hiragana(text[end]):
        end += 1
    return text[start:end]


def classify_error(top: str, reference: str, reference_in_pool: bool, lexicon: Lexicon) -> ErrorClass:
    """The class of a first candidate `top` that is not `reference`."""
    stretches = [
        (i1, i2, j1, j2)
        for opcode, i1, i2, j1, j2 in difflib.SequenceMatcher(None, top, reference, autojunk=False).get_opcodes()
        if opcode != "equal"
    ]
    parsed: dict[str, dict[int, WrittenWord]] = {}

    def words_of(text: str) -> dict[int, WrittenWord]:
        if text not in parsed:
            parsed[text] = dict(lexicon.words_of(text))
        return parsed[text]

    kinds = [_stretch_kind(top, i1, i2, reference, j1, j2, words_of) for i1, i2, j1, j2 in stretches]
    if all(kind is _Stretch.VARIANT for kind in kinds):
        return ErrorClass.VARIANT
    if not reference_in_pool:
        unknown = any(
            kind is not _Stretch.VARIANT and j2 > j1 and not lexicon.entries(_widened(reference, j1, j2))
            for kind, (_, _, j1, j2) in zip(kinds, stretches)
        )
        return ErrorClass.UNKNOWN_WORD if unknown else ErrorClass.NOT_IN_POOL
    return ErrorClass.SEGMENTATION if _Stretch.SEGMENTATION in kinds else ErrorClass.WRONG_KANJI


def error_of(candidates: Sequence[str], accepted: Iterable[str], lexicon: Lexicon) -> ErrorClass | None:
    """None when the first candidate is accepted, else its class against the closest accepted output."""
    answers = list(accepted)
    if not candidates:
        return ErrorClass.NOT_IN_POOL
    if candidates[0] in answers:
        return None
    top = candidates[0]
    reference = max(answers, key=lambda answer: difflib.SequenceMatcher(None, top, answer, autojunk=False).ratio())
    return classify_error(top, reference, any(candidate in answers for candidate in candidates), lexicon)


def error_counts(errors: Iterable[ErrorClass | None]) -> dict[str, int]:
    """Items per class, every class listed (zero where none), in the enum's order."""
    counted = Counter(error for error in errors if error is not None)
    return {error.value: counted[error] for error in ErrorClass}
