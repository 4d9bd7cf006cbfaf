"""Lookahead decoding's guesses (pure, directly tested): an n-gram pool and the Jacobi window that fills it.

The window holds W columns of N-1 guessed tokens each (its levels), laid out after the token being decoded:
level 0 of column i sits i positions after that token, level j of column i at i + j; a column attends to
level 0 up to itself, then to its own levels. Decoded in the same batch as the token, each column's last
level predicts one more token: the column's levels plus that prediction are an n-gram of N tokens, and the
pool keeps the G most recent distinct ones per first token. The window then moves up a level, the predictions
becoming its last level (one Jacobi iteration), so the n-grams the model itself produces accumulate. When
the output reaches a token the pool has n-grams for, their N-1 following tokens are guessed and verified.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Sequence


@dataclass(frozen=True)
class LookaheadSettings:
    window: int = 4  # W: columns of the Jacobi window
    ngram: int = 4  # N: tokens per n-gram (the first one and N-1 guessed after it)
    per_token: int = 4  # G: n-grams kept, and guessed, per first token

    def __post_init__(self):
        if self.window < 1 or self.ngram < 3 or self.per_token < 1:
            raise ValueError(f"lookahead needs W >= 1, N >= 3 and G >= 1, not {self}")


class NgramPool:
    """Per first token, the G most recently seen distinct continuations of N-1 tokens (newest first)."""

    def __init__(self, settings: LookaheadSettings):
        self.ngram = settings.ngram
        self.per_token = settings.per_token
        self._following: dict[int, list[tuple[int, ...]]] = {}

    def add(self, ngram: Sequence[int]) -> None:
        if len(ngram) != self.ngram:
            raise ValueError(f"an n-gram of {len(ngram)} tokens in a pool of {self.ngram}-grams")
        entries = self._following.setdefault(ngram[0], [])
        rest = tuple(ngram[1:])
        if rest in entries:
            entries.remove(rest)
        entries.insert(0, rest)
        del entries[self.per_token :]

    def add_sequence(self, tokens: Sequence[int]) -> None:
        """Every n-gram of `tokens` (an output the model produced), the last ones newest."""
        for start in range(len(tokens) - self.ngram + 1):
            self.add(tokens[start : start + self.ngram])

    def following(self, token: int) -> list[tuple[int, ...]]:
        return list(self._following.get(token, ()))


@dataclass(frozen=True)
class WindowRow:
    token: int
    offset: int  # positions after the token being decoded
    columns: tuple[int, ...]  # the columns whose sequence holds this row
    predicts: bool  # a column's last level: its logits give the column's next token


class JacobiWindow:
    """W columns of N-1 levels; level 0 of column 0 is always the token being decoded."""

    def __init__(self, settings: LookaheadSettings, seed: Sequence[int]):
        if not seed:
            raise ValueError("the window needs seed tokens")
        width, depth = settings.window, settings.ngram - 1
        self.width = width
        # Deterministic start: the seed tokens in order, wrapping round (what is guessed changes no output).
        self.levels = [
            [seed[(level * width + column) % len(seed)] for column in range(width)] for level in range(depth)
        ]

    def rows(self) -> list[WindowRow]:
        """The window's batch rows, but for level 0 of column 0 (the decoded token's own row)."""
        last = len(self.levels) - 1
        return [
            WindowRow(
                token, column + level, tuple(range(column, self.width)) if level == 0 else (column,), level == last
            )
            for level, tokens in enumerate(self.levels)
            for column, token in enumerate(tokens)
            if (level, column) != (0, 0)
        ]

    def shift(self, token: int, predictions: Sequence[int]) -> list[tuple[int, ...]]:
        """After a batch that decoded `token` with rows(): the columns' n-grams, and the window moved up a level
        with `predictions` (each column's arg-max after its last level) as the new last level."""
        if len(predictions) != self.width:
            raise ValueError(f"{len(predictions)} predictions for {self.width} columns")
        self.levels[0][0] = token
        ngrams = [
            tuple(level[column] for level in self.levels) + (int(predictions[column]),) for column in range(self.width)
        ]
        self.levels = self.levels[1:] + [[int(p) for p in predictions]]
        return ngrams
