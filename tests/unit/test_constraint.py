"""The spelling constraint against brute force: the automaton accepts exactly the chains of words that
cover the reading."""

from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.engine.constraint import SpellingConstraint

LENGTH = 5


def chains(length: int, spans) -> set[tuple[int, ...]]:
    """Every concatenation of spans' tokens along a chain of spans from 0 to `length` (brute force)."""
    found: set[tuple[int, ...]] = set()
    frontier: list[tuple[int, tuple[int, ...]]] = [(0, ())]
    while frontier:
        position, tokens = frontier.pop()
        if position == length:
            found.add(tokens)
            continue
        frontier += [
            (end, tokens + tuple(word)) for start, end, word in spans if start == position and end > start and word
        ]
    return found


def accepted(constraint: SpellingConstraint, max_tokens: int) -> set[tuple[int, ...]]:
    """Every token sequence of at most `max_tokens` the automaton walks to an accepting state."""
    found: set[tuple[int, ...]] = set()
    frontier: list[tuple[tuple[int, ...], frozenset[tuple[int, int]]]] = [((), constraint.initial())]
    while frontier:
        tokens, state = frontier.pop()
        if constraint.accepts(state):
            found.add(tokens)
        if len(tokens) < max_tokens:
            frontier += [(tokens + (t,), nxt) for t, nxt in constraint.allowed(state).items()]
    return found


span = st.tuples(st.integers(0, LENGTH - 1), st.integers(1, 3), st.lists(st.integers(1, 4), min_size=1, max_size=3))


@settings(max_examples=300, deadline=None)
@given(st.lists(span, max_size=12))
def test_accepts_exactly_the_chains_of_words(raw):
    spans = [(start, min(start + width, LENGTH), tuple(tokens)) for start, width, tokens in raw]
    constraint = SpellingConstraint(LENGTH, spans)
    assert accepted(constraint, max_tokens=3 * LENGTH) == chains(LENGTH, spans)


def test_shared_prefixes_and_several_ends():
    # 日 read ひ (one character) or にち (two); 日本 read にほん: one trie, three places to be after 日.
    constraint = SpellingConstraint(3, [(0, 1, (10,)), (0, 2, (10,)), (0, 3, (10, 11)), (1, 3, (12,)), (2, 3, (13,))])
    after = constraint.allowed(constraint.initial())[10]
    assert after == {(0, 1), (1, 0), (2, 0)}
    assert set(constraint.allowed(after)) == {11, 12, 13}
    assert constraint.accepts(constraint.allowed(after)[11])
    assert not constraint.accepts(after)


def test_spans_outside_the_reading_or_empty_are_ignored():
    constraint = SpellingConstraint(2, [(0, 3, (1,)), (-1, 1, (2,)), (0, 2, ()), (1, 1, (3,)), (0, 2, (4,))])
    assert set(constraint.allowed(constraint.initial())) == {4}


def test_no_words_means_no_output():
    constraint = SpellingConstraint(2, [])
    assert constraint.allowed(constraint.initial()) == {}
    assert not constraint.accepts(constraint.initial())
