"""Outputs that spell the reading (pure, directly tested).

A spelling constraint allows exactly the token sequences that are a chain of words covering the reading
from its first to its last character: each word is a span (start, end, tokens) — reading characters
[start, end) written as `tokens`. The spans come from whoever knows words (the dictionary's lattice plus
kana escapes for words it lacks); the engine only sees token ids.

A state is the set of places the output so far can have reached: (reading position, node of the token trie
of the words starting there). Node 0 is a trie's root, i.e. "between words at that position".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

State = frozenset[tuple[int, int]]


class SpellingConstraint:
    def __init__(self, length: int, spans: Iterable[tuple[int, int, Sequence[int]]]):
        """`length`: reading characters; spans outside [0, length] or empty ones are ignored."""
        self.length = length
        # Per start position, a trie over tokens: children[node] maps token -> node; ends[node] lists the
        # reading positions where a word spelled by the path to that node ends.
        self._children: dict[int, list[dict[int, int]]] = {}
        self._ends: dict[int, list[set[int]]] = {}
        for start, end, tokens in spans:
            if not 0 <= start < end <= length or not tokens:
                continue
            children = self._children.setdefault(start, [{}])
            ends = self._ends.setdefault(start, [set()])
            node = 0
            for token in tokens:
                if token not in children[node]:
                    children[node][token] = len(children)
                    children.append({})
                    ends.append(set())
                node = children[node][token]
            ends[node].add(end)
        self._allowed: dict[State, dict[int, State]] = {}

    def initial(self) -> State:
        return frozenset({(0, 0)})

    def accepts(self, state: State) -> bool:
        """Whether the output may end here: some path has covered the whole reading."""
        return (self.length, 0) in state

    def allowed(self, state: State) -> dict[int, State]:
        """Each token the output may continue with, and the state after it (memoised: beams share states)."""
        found = self._allowed.get(state)
        if found is None:
            moves: dict[int, set[tuple[int, int]]] = {}
            for start, node in state:
                for token, child in self._children.get(start, [{}])[node].items():
                    reached = moves.setdefault(token, set())
                    if self._children[start][child]:
                        reached.add((start, child))  # a longer word goes on
                    reached.update((end, 0) for end in self._ends[start][child])  # a word ends here
            found = {token: frozenset(reached) for token, reached in moves.items()}
            self._allowed[state] = found
        return found
