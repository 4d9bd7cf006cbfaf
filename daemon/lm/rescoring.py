"""How the dictionary's top candidates are rescored: a linear combination of what each source says.

The weights are fitted (tsuzuri-lm fit) on the whole evaluation suite with cross-validation; a source whose
weight did not improve the cross-validated accuracy is left at 0. See daemon/lm/README.md for the numbers.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, fields
from enum import Enum
from collections.abc import Sequence

from daemon.forms import to_fullwidth_ascii, to_halfwidth_ascii
from daemon.kana import KANJI_CLASS


# Words and topics the document already uses come back (a cache language model): a rescoring feature counts the
# distinct kanji, bigrams and trigrams a candidate shares with the left context — longer shared strings count more.
# An n-gram with two hiragana is function words (では, のの) and no evidence; katakana counts: names and loanwords
# come back as kanji words do (イタドリ after イタドリ, not 虎杖).
_HIRAGANA = re.compile(r"[\u3040-\u309f]")
_KANJI = re.compile(f"[{KANJI_CLASS}]")


def context_hits(text: str, context: str) -> int:
    """How many distinct kanji, and distinct bigrams and trigrams with at most one hiragana, of `text` occur in
    `context`."""
    if not context:  # nothing to share: the search and the rescoring skip the work
        return 0
    grams = {text[i : i + n] for n in (2, 3) for i in range(len(text) - n + 1)}
    return sum(1 for gram in grams if len(_HIRAGANA.findall(gram)) < 2 and gram in context) + sum(
        1 for ch in set(text) if _KANJI.match(ch) and ch in context
    )


_DIGITS = frozenset("0123456789" + to_fullwidth_ascii("0123456789"))


def digits_not_as_typed(text: str, reading: str) -> int:
    """How many digits `text` writes that `reading` does not hold, and `reading` holds that `text` does not
    write (as multisets, either width): いちにち as 1日 one, 4かげつ as 四ヶ月 one, 2024ねん as 2024年 none. A number
    the user wants in digits is typed in digits, and one typed in digits stays so: no reference of the evaluation
    sets or the held-out set writes other digits than its reading holds, and Mozc writes 一日, 二年, 第二期, 三枚
    and 4ヶ月 first."""
    if _DIGITS.isdisjoint(text) and _DIGITS.isdisjoint(reading):
        return 0  # most texts, in an eighth of the time: the lattice search asks for each of its words
    written, typed = Counter(_digits(text)), Counter(_digits(reading))
    return (written - typed).total() + (typed - written).total()


def _digits(text: str) -> list[str]:
    return [ch for ch in to_halfwidth_ascii(text) if "0" <= ch <= "9"]


@dataclass(frozen=True)
class Features:
    """What is known about one candidate of the dictionary's top list."""

    cost: float  # the dictionary's path cost, in thousands (lower is better)
    lm: float  # language-model log-probability (nats) after the left context
    chars: int  # length in characters
    morphemes: int  # dictionary words on its path
    rank: int  # place in the dictionary's list, 0 first
    context: int  # context hits: what it shares with the left context (context_hits)
    model: float = 0.0  # the neural model's log-probability, when a model is ready
    coherence: float = 0.0  # how well its words suit each other and the context's last words (word_vectors.py)
    digits_not_as_typed: int = 0  # digits written other than those typed (digits_not_as_typed)

    def vector(self) -> tuple[float, ...]:
        # not dataclasses.astuple, which deep-copies: it was half of the rescoring's time per keystroke
        return tuple(getattr(self, name) for name in FEATURE_NAMES)


FEATURE_NAMES = tuple(field.name for field in fields(Features))


@dataclass(frozen=True)
class Weights:
    cost: float = 0.0
    lm: float = 0.0
    chars: float = 0.0
    morphemes: float = 0.0
    rank: float = 0.0
    context: float = 0.0
    model: float = 0.0
    coherence: float = 0.0
    digits_not_as_typed: float = 0.0

    def vector(self) -> tuple[float, ...]:
        return tuple(getattr(self, name) for name in FEATURE_NAMES)  # a weight per feature, same names

    def score(self, features: Features) -> float:
        return sum(w * x for w, x in zip(self.vector(), features.vector()))

    @classmethod
    def of(cls, values: Sequence[float]) -> Weights:
        return cls(*(round(float(v), 4) for v in values))


def rescored_order(candidates: Sequence[Features], weights: Weights) -> list[int]:
    """Candidate indices, best first (ties keep the dictionary's order)."""
    return _best_first([weights.score(features) for features in candidates])


def _best_first(scores: Sequence[float]) -> list[int]:
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


# A candidate whose score lies this far below the best one's (a log-odds: e^5 ≈ 150 times less likely) is
# unlikely, and the list shows it only after the kana forms and rewriters, where paging on still reaches it:
# きょうはいいてんき keeps 今日はいい天気, 今日は良い天気, 今日は好い天気 ahead and sends 橋はいい天気 and
# 鏡はいい天気 back. Over the suite's pools (4,817 items, ~20 candidates each), gaps of 4 / 5 / 6 kept 4.8 / 6.5 /
# 8.4 candidates ahead and moved an answer out of the first five in 27 / 13 / 5 items.
UNLIKELY_SCORE_GAP = 5.0


def likely_and_unlikely(
    candidates: Sequence[Features], weights: Weights, gap: float = UNLIKELY_SCORE_GAP
) -> tuple[list[int], list[int]]:
    """rescored_order cut in two: the candidates within `gap` of the best score, then the others."""
    scores = [weights.score(features) for features in candidates]
    order = _best_first(scores)
    if not order:
        return [], []
    floor = scores[order[0]] - gap
    return [i for i in order if scores[i] >= floor], [i for i in order if scores[i] < floor]


# A candidate's model log-prob counts at most this many nats below the best one's: the model's dislike of
# words it never saw cannot bury them (names, rare kanji).
MODEL_FLOOR = 5.0


def floored_model_scores(scores: Sequence[float], floor: float = MODEL_FLOOR) -> list[float]:
    """Model log-probs relative to the best candidate's, clipped at −floor."""
    best = max(scores)
    return [max(score - best, -floor) for score in scores]


class ReadingLength(Enum):
    """Readings are weighed by their length: on a phrase the dictionary's own choice is usually right and
    style decides; on a sentence the LM has to rebuild paths. One set of weights for both cost the sentences
    3 points (wac_sentences 0.533 against 0.561, 4-fold CV) and every other set 0.2–0.7."""

    PHRASE = "phrase"
    SENTENCE = "sentence"

    @classmethod
    def of(cls, reading: str) -> ReadingLength:
        return cls.PHRASE if len(reading) <= PHRASE_MAX_CHARS else cls.SENTENCE


PHRASE_MAX_CHARS = 20


def model_has_a_say(reading: str, context: str) -> bool:
    """Whether the neural model's score counts: with left context (without it the model made no set better)
    and on phrases. Over the suite (4-fold CV), a say on readings up to 40 kana gave wac_dev 0.826 and
    wac_sentences 0.545; on phrases alone 0.823 and 0.561, as without the model: on whole sentences the model
    only hurts, as it does on the held-out sentences it was not trained for."""
    return bool(context) and ReadingLength.of(reading) is ReadingLength.PHRASE


# Fitted by `tsuzuri-lm fit --model default` (4-fold CV over the items of every set of ../shared/eval pooled,
# per reading length) for tsuzuri-base and the language models shipped until 2026-12-04, kept for the one
# model since (daemon/lm/README.md has the numbers and why).
# Their coherence weights were fitted after them, the others held (`tsuzuri-lm fit --model default --only
# coherence`, 2026-12-06), and then so were those of digits not as typed (`--only digits_not_as_typed`, 2026-12-06).
WEIGHTS_WITHOUT_MODEL = {
    ReadingLength.PHRASE: Weights(
        cost=-1.1038, lm=0.3538, chars=0.062, context=1.3489, coherence=1.5237, digits_not_as_typed=-6.7839
    ),
    ReadingLength.SENTENCE: Weights(
        cost=-0.8331, lm=0.4031, chars=0.3116, context=1.0195, coherence=1.6496, digits_not_as_typed=-5.5487
    ),
}
# Where the model has a say (fitted on every phrase, its score 0 where it has none). The model's own weight was
# then fitted on the tuning set, the others held (`tsuzuri-lm fit --suite build/tuning --model default --only
# model`, 2026-12-06): the suite is text the model was chosen on, and there it weighed 0.3365.
WEIGHTS_WITH_MODEL = Weights(
    cost=-1.0119,
    lm=0.3266,
    morphemes=-0.5261,
    context=1.3443,
    model=0.1997,
    coherence=1.4992,
    digits_not_as_typed=-6.263,
)


def weights_for(reading: str, context: str, model_ready: bool) -> Weights:
    """The weights of a conversion: with the model's where it is ready and has a say, else those of the
    reading's length without it."""
    if model_ready and model_has_a_say(reading, context):
        return WEIGHTS_WITH_MODEL
    return WEIGHTS_WITHOUT_MODEL[ReadingLength.of(reading)]


def model_can_change_the_choice(candidates: Sequence[Features], weights: Weights) -> bool:
    """Whether the model's scores could change which candidate comes first. `candidates` are scored without
    the model (model = 0). Floored, the model's term differs between candidates by at most
    |weight| · MODEL_FLOOR, so a larger lead over the runner-up stands whatever the model says."""
    if len(candidates) < 2 or weights.model == 0:
        return False
    scores = sorted((weights.score(features) for features in candidates), reverse=True)
    return scores[0] - scores[1] <= abs(weights.model) * MODEL_FLOOR
