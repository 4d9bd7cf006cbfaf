"""How the dictionary's top candidates are rescored: a linear combination of what each source says.

The weights are fitted (tsuzuri-lm fit) on the whole evaluation suite with cross-validation; a source whose
weight did not improve the cross-validated accuracy is left at 0. See daemon/lm/README.md for the numbers.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass, fields
from typing import Sequence


@dataclass(frozen=True)
class Features:
    """What is known about one candidate of the dictionary's top list."""

    cost: float      # the dictionary's path cost, in thousands (lower is better)
    lm: float        # language-model log-probability (nats) after the left context
    chars: int       # length in characters
    morphemes: int   # dictionary words on its path
    rank: int        # place in the dictionary's list, 0 first
    context: int     # context hits: kanji and bigrams it shares with the left context
    model: float = 0.0  # the neural model's log-probability, when a model is ready

    def vector(self) -> tuple[float, ...]:
        return astuple(self)


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

    def vector(self) -> tuple[float, ...]:
        return astuple(self)

    def score(self, features: Features) -> float:
        return sum(w * x for w, x in zip(astuple(self), features.vector()))

    @classmethod
    def of(cls, values: Sequence[float]) -> Weights:
        return cls(*(round(float(v), 4) for v in values))


def rescored_order(candidates: Sequence[Features], weights: Weights) -> list[int]:
    """Candidate indices, best first (ties keep the dictionary's order)."""
    scores = [weights.score(features) for features in candidates]
    return sorted(range(len(candidates)), key=lambda i: (-scores[i], i))


# A candidate's model log-prob counts at most this many nats below the best one's: the model's dislike of
# words it never saw cannot bury them (the registry's rerank_floor for tsuzuri-base).
MODEL_FLOOR = 5.0


def floored_model_scores(scores: Sequence[float], floor: float = MODEL_FLOOR) -> list[float]:
    """Model log-probs relative to the best candidate's, clipped at −floor."""
    best = max(scores)
    return [max(score - best, -floor) for score in scores]


# Fitted by `tsuzuri-lm fit` (4-fold CV over items pooled from every set of ../shared/eval) for the shipped
# model build; daemon/lm/README.md has the cross-validated accuracies. The neural model's score counts only
# where there is left context (it is zero otherwise): without context it made every set but none better.
WEIGHTS_WITHOUT_MODEL = Weights(cost=-0.7958, lm=0.3413, chars=0.1346, morphemes=-0.3732, context=1.1224)
WEIGHTS_WITH_MODEL = Weights(cost=-0.7632, lm=0.3144, chars=0.0612, context=1.137, model=0.3753)


def model_can_change_the_choice(candidates: Sequence[Features], weights: Weights) -> bool:
    """Whether the model's scores could change which candidate comes first. `candidates` are scored without
    the model (model = 0). Floored, the model's term differs between candidates by at most
    |weight| · MODEL_FLOOR, so a larger lead over the runner-up stands whatever the model says."""
    if len(candidates) < 2 or weights.model == 0:
        return False
    scores = sorted((weights.score(features) for features in candidates), reverse=True)
    return scores[0] - scores[1] <= abs(weights.model) * MODEL_FLOOR
