"""Merging a conversion path's morphemes into bunsetsu-like segments (pure functions)."""

from __future__ import annotations

from collections.abc import Sequence

from daemon.dictionary.candidates import Bunsetsu, Morpheme
from daemon.dictionary.word_class import WordClass, class_of_id, class_of_unknown


def starts_bunsetsu(previous: WordClass, current: WordClass) -> bool:
    """Whether a word whose left side is of class `current` opens a new bunsetsu after a word whose right
    side is of class `previous`."""
    if current is WordClass.ATTACHED or previous is WordClass.PREFIX:
        return False
    # Compound nouns (自然言語) and サ変 verbs (勉強する) stay one segment.
    return not (previous is WordClass.NOUN and current in (WordClass.NOUN, WordClass.SURU))


def split_bunsetsu(morphemes: Sequence[Morpheme]) -> tuple[Bunsetsu, ...]:
    """Cut a path before every morpheme that opens a bunsetsu; the first always does."""
    groups: list[list[Morpheme]] = []
    for morpheme in morphemes:
        if not groups or starts_bunsetsu(_right_class(groups[-1][-1]), _left_class(morpheme)):
            groups.append([morpheme])
        else:
            groups[-1].append(morpheme)
    return tuple(Bunsetsu.of(group) for group in groups)


def _left_class(morpheme: Morpheme) -> WordClass:
    return class_of_unknown(morpheme.surface) if morpheme.unknown else class_of_id(morpheme.left_id)


def _right_class(morpheme: Morpheme) -> WordClass:
    return class_of_unknown(morpheme.surface) if morpheme.unknown else class_of_id(morpheme.right_id)
