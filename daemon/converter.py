"""The converter: every candidate source for one reading, merged into the list the user sees.

Order: learning history → user dictionary → model → system dictionary → kana forms → rewriters.
Duplicates keep their first (highest) place; every candidate says where it came from and carries the
annotation the candidate window shows beside it.
"""

from __future__ import annotations

import dataclasses
import threading
from itertools import repeat
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar
from collections.abc import Callable, Hashable, Sequence

from daemon.allocator import release_free_memory
from daemon.computed_once import ComputedOnce
from daemon.conversion import CandidateSource, ConversionCandidate, Effort, PersonalData, clean_reading, unique_texts
from daemon.dictionary import ContextWord, DictionaryUnavailable, SystemDictionary, TextReader, system_reader
from daemon.engine import Engine, EngineUnavailable, ModelSession, ModelState
from daemon.kana import to_hiragana, to_katakana
from daemon.lm import (
    CharNgramLM,
    Features,
    context_hits,
    digits_not_as_typed,
    floored_model_scores,
    likely_and_unlikely,
    model_can_change_the_choice,
    model_has_a_say,
    weights_for,
)
from daemon.lm.lattice_search import WORDS_PER_READING, best_paths, with_context_words
from daemon.lm.word_vectors import WordVectors
from daemon.rewriters import rewrite_candidates
from daemon.spelling import Spelling, spelled
from daemon.userdata.learning import LearningHistory
from daemon.userdata.storage import LineFileStore
from daemon.userdata.user_dictionary import UserDictionary


# Longer readings are converted by the dictionary alone: the model's whole-reading scoring grows with the
# length (2.9 s for 1,000 kana on 2 threads, 0.2 s for 200), and every other session would wait for it.
MODEL_MAX_READING_CHARS = 200
# The dictionary's candidates the rescoring chooses from (4-fold CV over the suite, pooled acc@1, with the
# phrase model: 10 → 0.7326, 20 → 0.7345; their answer is in the top 20 for 96 % of anthy_dev, 94.5 % of
# wac_dev). The list shown keeps at most `n` of them besides the dictionary's own first `n`.
RESCORED_TOP = 20
# Per keystroke (live conversion) the top 10: half the time of 20 (wac_dev 8.1 → 4.1 ms a full reading) for
# 0.7 points of live-text acc@1 there (0.814 → 0.808; wac_sentences 0.540 → 0.521, anthy_dev 0.681 → 0.680),
# won back when the user pauses: the conversion in advance then shows Space's first candidate (0.826 there).
KEYSTROKE_RESCORED_TOP = 10
# Rankings kept for readings converted again or in advance: a few per typing session are enough (the one
# converted while the user paused, then the one Space asks for).
RANKINGS_KEPT = 64
# Paths of the lattice search added to the dictionary's top 10 for the rescoring. Fitted on the suite (4-fold
# CV, pooled acc@1): 0 → 0.7208, 1 → 0.7264, 3 → 0.7270, 5 → 0.7266, 10 → 0.7262; more paths lift the
# sentences (wac_sentences 0.513 → 0.540) and cost the short everyday phrases a little (anthy_dev 0.679 → 0.671).
LATTICE_PATHS = 5
# The lattice search costs about 1 ms a character (one LM grid per offset): past this, MeCab's N-best alone.
LATTICE_MAX_READING_CHARS = 200
# After ranking a reading this long, the free heap is given back (daemon/allocator.py): MeCab's N-best over a long
# reading frees hundreds of MiB that glibc would otherwise keep.
RELEASE_MEMORY_READING_CHARS = 200
# Below this, too: short readings' answers are in the dictionary's top 10 already. Without paths up to 15 kana
# the suite lost 0.08 points (4-fold CV pooled, 0.7353 → 0.7345; up to 20 kana: 0.25, wac_dev 0.823 → 0.818),
# and phrases convert in a few milliseconds instead of 15–35.
LATTICE_MIN_READING_CHARS = 16


def candidate_features(
    candidates: list[ConversionCandidate],
    lm_scores: list[float],
    reading: str,
    context: str,
    model_scores: list[float] | None = None,
    coherence: Sequence[float] | None = None,
) -> list[Features]:
    """What the rescoring weighs for each candidate of the pool, in the pool's order (the model's scores
    only where it has a say; coherence where there are word vectors)."""
    model = (
        [0.0] * len(candidates)
        if not model_scores or not model_has_a_say(reading, context)
        else floored_model_scores(model_scores)
    )
    return [
        Features(
            cost=(c.cost or 0) / 1000,
            lm=lm_score,
            chars=len(c.text),
            morphemes=c.morphemes,
            rank=rank,
            context=context_hits(c.text, context),
            model=m,
            coherence=fits,
            digits_not_as_typed=digits_not_as_typed(c.text, reading),
        )
        for rank, (c, lm_score, m, fits) in enumerate(zip(candidates, lm_scores, model, coherence or repeat(0.0)))
    ]


def spellings(dictionary: SystemDictionary | None, reading: str) -> list[tuple[int, int, str]]:
    """Words the model may write the reading with: the dictionary's lattice, plus every character in
    hiragana and katakana as the escape for words the dictionary lacks (names, new loanwords)."""
    words = []
    if dictionary is not None:
        try:
            words = dictionary.spellings(reading)
        except DictionaryUnavailable:
            pass
    for i, char in enumerate(reading):
        words += [(i, i + 1, kana) for kana in dict.fromkeys((to_hiragana(char), to_katakana(char)))]
    return words


Store = TypeVar("Store", bound=LineFileStore)
T = TypeVar("T")


class Converter:
    """Merges the sources; each one is optional (a missing model means dictionary-only service)."""

    def __init__(
        self,
        dictionary: SystemDictionary | None = None,
        engine: Engine | None = None,
        user_dictionary: UserDictionary | None = None,
        learning: LearningHistory | None = None,
        model_candidates: int = 0,
        clock: Callable[[], datetime] = datetime.now,
        constrain_model: bool = False,
        language_model: CharNgramLM | None = None,
        spelling: Spelling = Spelling.RANKED,
        word_vectors: WordVectors | None = None,
    ):
        self.dictionary = dictionary
        self.engine = engine
        self.user_dictionary = user_dictionary
        self.learning = learning
        # The model's own conversions besides the ones it rescores; 0 by default, as in the config.
        self.model_candidates = model_candidates
        # The model's own candidates only as chains of dictionary words (or kana) spelling the reading.
        self.constrain_model = constrain_model
        self.clock = clock
        # The ranker: the dictionary's top candidates and the lattice search's paths rescored by the fitted
        # combination of dictionary cost, LM log-prob, length, context hits and, where it has a say, the neural
        # model's score (daemon/lm/rescoring.py). Without one (tests, `tsuzuri-eval --no-lm`), the model's own
        # candidates and then the dictionary's, in its order.
        self.language_model = language_model
        # Which words go together (daemon/lm/word_vectors.py), a feature of the rescoring; without them it is 0.
        self.word_vectors = word_vectors
        # Which auxiliary words the shared sources' candidates write in kana (daemon/spelling.py).
        self.spelling = spelling
        # Rankings of recent readings: a conversion started in advance (while the user pauses) serves Space,
        # and one reading converted again (Space, Escape, Space) costs nothing.
        self._ranked: ComputedOnce[Hashable, Ranking] = ComputedOnce(RANKINGS_KEPT)
        # What a whole reading's rankings with and without the neural model rescore, shared: Space's ranking
        # without the model costs nothing more once the one with it is under way. Keyed (reading, context, n).
        self._sentence_pools: ComputedOnce[Hashable, RescoringPool] = ComputedOnce(RANKINGS_KEPT)
        self._problems_told: set[str] = set()  # why choices may not be kept, each said once in a panel (learn)
        # Sessions convert on several worker threads; the user's files are plain dicts saved meanwhile.
        self._userdata_lock = threading.Lock()

    def model_ready(self) -> bool:
        return self._ready_engine() is not None

    def _ready_engine(self) -> Engine | None:
        """The engine, if its model is loaded."""
        if self.engine is not None and self.engine.status.state is ModelState.READY:
            return self.engine
        return None

    def candidates(
        self,
        reading: str,
        context: str = "",
        n: int = 10,
        session: ModelSession | None = None,
        personal: PersonalData = PersonalData.ALL,
        effort: Effort = Effort.SENTENCE,
    ) -> list[ConversionCandidate]:
        """Candidates for a kana reading, best first. `personal` says which of the user's data may be
        read; `effort` says which sources are worth their time.
        At most `n` come from the system dictionary; the other sources add theirs. Raises ReadingTooLong."""
        return self._candidates(reading, context, n, session, personal, effort, None)[0]

    def timely_candidates(
        self,
        model_wait_s: float,
        reading: str,
        context: str = "",
        n: int = 10,
        session: ModelSession | None = None,
        personal: PersonalData = PersonalData.ALL,
    ) -> tuple[list[ConversionCandidate], bool]:
        """A whole reading's candidates (Effort.SENTENCE) without waiting long for the neural model: ranked with
        it if its ranking is done (made in advance) or under way and done within `model_wait_s` seconds, else
        without it, and the model's is not started; and whether the model's ranking is still to come (a
        `candidates` call gives it)."""
        return self._candidates(reading, context, n, session, personal, Effort.SENTENCE, model_wait_s)

    def _candidates(
        self,
        reading: str,
        context: str,
        n: int,
        session: ModelSession | None,
        personal: PersonalData,
        effort: Effort,
        model_wait_s: float | None,
    ) -> tuple[list[ConversionCandidate], bool]:
        reading = to_hiragana(clean_reading(reading))
        if not reading:
            return [], False
        use_model = effort.uses_model and len(reading) <= MODEL_MAX_READING_CHARS and self.model_ready()
        merged: list[ConversionCandidate] = []
        suppressed: set[str] = set()
        with self._userdata_lock:
            if self.learning is not None and personal is PersonalData.ALL:
                merged += [
                    ConversionCandidate(text, CandidateSource.LEARNING) for text in self.learning.ranked(reading)
                ]
            if self.user_dictionary is not None and personal is not PersonalData.NONE:
                for entry in self.user_dictionary.lookup(reading):
                    if entry.suppresses:
                        suppressed.add(entry.surface)
                    else:
                        merged.append(ConversionCandidate(entry.surface, CandidateSource.USER, entry.comment))
        ranked = None
        model_to_come = False
        if use_model and model_wait_s is not None:
            ranked = self._ranked.ready(self._ranking_key(reading, context, n, effort, True), model_wait_s)
            model_to_come = ranked is None
            use_model = not model_to_come
        if ranked is None:
            ranked = self._ranked.get(
                self._ranking_key(reading, context, n, effort, use_model),
                lambda: self._rank(reading, context, n, session, effort, use_model),
            )
        return self._finished(merged + list(ranked.ahead), reading, suppressed, ranked.behind), model_to_come

    def _ranking_key(self, reading: str, context: str, n: int, effort: Effort, use_model: bool) -> Hashable:
        """Everything the ranking of the shared sources depends on: the user's data is merged afresh each time
        (it changes with every commit), the rest only with the model's state or the settings."""
        status = self.engine.status if self.engine is not None else None
        return (
            reading,
            context,
            n,
            effort,
            use_model,
            status,
            self.model_candidates,
            self.constrain_model,
            self.spelling,
        )

    def _rank(
        self, reading: str, context: str, n: int, session: ModelSession | None, effort: Effort, use_model: bool
    ) -> Ranking:
        """The model's, the dictionary's and the lattice search's candidates, ranked (no user data), spelled as
        the spelling policy says."""
        try:
            ranking = self._ranking(reading, context, n, session, effort, use_model)
            return Ranking(
                self._spelled(ranking.ahead, reading, context), self._spelled(ranking.behind, reading, context)
            )
        finally:
            if len(reading) >= RELEASE_MEMORY_READING_CHARS:
                release_free_memory()

    def _ranking(
        self, reading: str, context: str, n: int, session: ModelSession | None, effort: Effort, use_model: bool
    ) -> Ranking:
        model = self._model(reading, context, session) if use_model else []
        if self.language_model is not None:
            language_model = self.language_model

            def rescoring_pool() -> RescoringPool:
                return self._pool_to_rescore(language_model, reading, context, n, effort)

            # Only the effort the model has a say in ranks one pool twice; a keystroke's pool is used once.
            pool = (
                self._sentence_pools.get((reading, context, n), rescoring_pool)
                if effort.uses_model
                else rescoring_pool()
            )
            likely, unlikely = self._rescored(reading, context, pool, session, use_model)
            # The list holds the n best rescored and the dictionary's own first n; the model's conversions (if
            # asked for) come right after the best one, the unlikely ones only after the kana forms and rewriters.
            shown = unique_texts((likely + unlikely)[:n] + list(pool.dictionary[:n]))
            further_back = {c.text for c in unlikely}
            return Ranking(
                tuple(shown[:1] + model + [c for c in shown[1:] if c.text not in further_back]),
                tuple(c for c in shown if c.text in further_back),
            )
        return Ranking(tuple(model + self._dictionary(reading, n)), ())

    def _spelled(
        self, candidates: Sequence[ConversionCandidate], reading: str, context: str
    ) -> tuple[ConversionCandidate, ...]:
        """Each candidate as the spelling policy writes it, followed by its own spelling where that differs: the
        policy cannot tell 物 (a thing) from もの, so the user still can."""
        if self.spelling is Spelling.RANKED:
            return tuple(candidates)
        respelled: list[ConversionCandidate] = []
        for candidate in candidates:
            text = self._respelled(candidate.text, reading, context)
            if text != candidate.text:
                respelled.append(dataclasses.replace(candidate, text=text))
            respelled.append(candidate)
        return tuple(unique_texts(respelled))

    def _respelled(self, text: str, reading: str, before: str) -> str:
        """`text`, a conversion of `reading` after `before`, as the spelling policy writes it."""
        reader = self.text_reader()
        return spelled(self.spelling, text, reading, before, reader.in_longer_word if reader is not None else None)

    def _finished(
        self,
        merged: list[ConversionCandidate],
        reading: str,
        suppressed: set[str],
        last: Sequence[ConversionCandidate] = (),
    ) -> list[ConversionCandidate]:
        """The merged sources, then kana and rewriters, then `last`, without duplicates or suppressed words."""
        merged = merged + [
            ConversionCandidate(reading, CandidateSource.KANA, "ひらがな"),
            ConversionCandidate(to_katakana(reading), CandidateSource.KANA, "カタカナ"),
        ]
        merged += [
            ConversionCandidate(r.text, CandidateSource.REWRITER, r.annotation)
            for r in rewrite_candidates(reading, now=self.clock())
        ]
        return unique_texts(c for c in merged + list(last) if c.text not in suppressed)

    def bunsetsu(self, reading: str, boundaries: Sequence[int] = ()) -> list[tuple[str, str]]:
        """The reading cut into bunsetsu, each as (reading, its conversion in context): the spans ending at
        `boundaries` (increasing end offsets) are fixed, the rest is cut by the dictionary. Empty without one."""
        if self.dictionary is None:
            return []
        try:
            segments = self.dictionary.convert_segments(reading, boundaries, 1)
        except DictionaryUnavailable:
            return []
        converted: list[tuple[str, str]] = []
        for segment in segments:
            before = "".join(text for _, text in converted)
            converted.append((segment.reading, self._respelled(segment.candidates[0].text, segment.reading, before)))
        return converted

    def model_session(self) -> ModelSession | None:
        """A session of the neural model (its own KV state), if there is a model."""
        return self.engine.session() if self.engine is not None else None

    def text_reader(self) -> TextReader | None:
        """Readings of written text, for reconversion: the system dictionary read backwards."""
        return system_reader() if self.dictionary is not None else None

    def predictions(self, prefix: str, n: int = 9) -> list[ConversionCandidate]:
        """Words whose reading starts with `prefix`: the user's own first, then the system dictionary's."""
        prefix = to_hiragana(prefix)
        if not prefix:
            return []
        found: list[ConversionCandidate] = []
        if self.user_dictionary is not None:
            with self._userdata_lock:
                found += [
                    ConversionCandidate(e.surface, CandidateSource.USER, e.reading)
                    for e in self.user_dictionary.lookup_prefix(prefix)
                    if not e.suppresses
                ]
        if self.dictionary is not None:
            try:
                found += [
                    ConversionCandidate(w.surface, CandidateSource.DICTIONARY, w.reading)
                    for w in self.dictionary.predict(prefix, n)
                ]
            except DictionaryUnavailable:
                pass
        return unique_texts(found)[:n]

    def learn(self, choices: list[tuple[str, str]]) -> str:
        """Remember what the user chose for each reading (never called for secret fields). Returns why the
        choices may not be kept (the history's file unreadable, or its last save failed) the first time that
        reason comes up, for the panel to say once; "" otherwise (GetStatus's reason says it as long as it holds)."""
        if self.learning is None:
            return ""
        with self._userdata_lock:
            for reading, surface in choices:
                self.learning.record(to_hiragana(reading), surface)
            problem = self.learning.keeping_problem
            if not problem or problem in self._problems_told:
                return ""
            self._problems_told.add(problem)
            return problem

    def save_userdata(self) -> None:
        """Write the learning history and user dictionary if they changed (atomically)."""
        with self._userdata_lock:
            for store in (self.learning, self.user_dictionary):
                if store is not None:
                    store.save()

    def read_userdata(self, store: Store, read: Callable[[Store], T]) -> T:
        """`read(store)` (the user dictionary or the learning history) while no conversion changes it."""
        with self._userdata_lock:
            return read(store)

    def change_userdata(self, store: Store, change: Callable[[Store], T]) -> T:
        """`change(store)` while no conversion reads it, saved at once: the next conversion sees the change and
        a restart keeps it. Raises UnwritableStore, changing nothing, if the store's file could not be read;
        OSError if it cannot be saved (the change stands, and the next periodic save tries again)."""
        with self._userdata_lock:
            store.check_writable()
            result = change(store)
            store.save()
        return result

    def _model(self, reading: str, context: str, session: ModelSession | None) -> list[ConversionCandidate]:
        engine = self._ready_engine()
        if engine is None or self.model_candidates < 1:
            return []
        try:
            words = spellings(self.dictionary, reading) if self.constrain_model else None
            found = engine.convert(to_katakana(reading), context, self.model_candidates, session, spellings=words)
        except EngineUnavailable:  # unloaded between the check and the call
            return []
        return [ConversionCandidate(c.text, CandidateSource.MODEL) for c in found]

    def _pool_to_rescore(
        self, language_model: CharNgramLM, reading: str, context: str, n: int, effort: Effort
    ) -> RescoringPool:
        """The candidates `effort` rescores and their language model scores."""
        top = KEYSTROKE_RESCORED_TOP if effort is Effort.KEYSTROKE else RESCORED_TOP
        dictionary = self._dictionary(reading, max(n, top))
        pool = self._pool(dictionary, reading, context) if effort.searches_lattice else dictionary[:top]
        texts = [c.text for c in pool]
        lm_scores = language_model.score(texts, context) if pool else []
        coherence = tuple(self.word_vectors.coherence(texts, context)) if self.word_vectors is not None else None
        return RescoringPool(tuple(dictionary), tuple(pool), tuple(lm_scores), coherence)

    def _rescored(
        self, reading: str, context: str, rescoring: RescoringPool, session: ModelSession | None, use_model: bool
    ) -> tuple[list[ConversionCandidate], list[ConversionCandidate]]:
        """The pool best first, cut into the likely candidates and the unlikely ones
        (rescoring.likely_and_unlikely)."""
        top, lm_scores, coherence = list(rescoring.pool), list(rescoring.lm_scores), rescoring.coherence
        texts = [c.text for c in top]
        if not texts:
            return [], []
        with_model = use_model and self.model_ready()
        weights = weights_for(reading, context, with_model)
        features = candidate_features(top, lm_scores, reading, context, coherence=coherence)
        # The model is asked only where it has a say and could change the first candidate: the same first
        # choice as always asking it, for about half the model calls.
        if model_can_change_the_choice(features, weights):
            model_scores = self._model_scores(reading, context, session, texts)
            features = candidate_features(top, lm_scores, reading, context, model_scores, coherence)
        likely, unlikely = likely_and_unlikely(features, weights)
        return [top[i] for i in likely], [top[i] for i in unlikely]

    def rescoring_pool(self, reading: str, context: str = "") -> list[ConversionCandidate]:
        """What the rescoring chooses the first candidate from (tsuzuri-lm fit fits on the same lists)."""
        reading = to_hiragana(clean_reading(reading))
        return self._pool(self._dictionary(reading, RESCORED_TOP), reading, context)

    def _pool(self, dictionary: list[ConversionCandidate], reading: str, context: str) -> list[ConversionCandidate]:
        """The dictionary's top `RESCORED_TOP` and the lattice search's best paths, without duplicates."""
        return unique_texts(dictionary[:RESCORED_TOP] + self._lattice_paths(reading, context))

    def _lattice_paths(self, reading: str, context: str) -> list[ConversionCandidate]:
        """The best paths of a search over the dictionary's lattice with the language model in its score (the
        combinations MeCab's N-best, by dictionary cost alone, leaves out of long readings), and the best one with
        the words of the document in place (lattice_search.with_context_words): for a short reading, only those."""
        if self.dictionary is None or self.language_model is None or len(reading) > LATTICE_MAX_READING_CHARS:
            return []
        found = self._context_words(reading, context)
        searched = LATTICE_MIN_READING_CHARS <= len(reading)
        if not searched and not found:
            return []
        try:
            lattice = self.dictionary.lattice(reading, WORDS_PER_READING)
        except DictionaryUnavailable:
            return []
        paths = best_paths(lattice, self.language_model, weights_for(reading, context, False), context, LATTICE_PATHS)
        offered = paths if searched else []
        if paths and found:
            # Only into the best path: the others differ from it elsewhere too, and that would come along.
            offered = offered + with_context_words(paths[0], found)
        return [
            ConversionCandidate(path.text, CandidateSource.DICTIONARY, cost=path.cost, morphemes=path.morphemes)
            for path in offered
        ]

    def _context_words(self, reading: str, context: str) -> list[ContextWord]:
        """The words of the document that spell a stretch of `reading`, once the readings of written text are
        at hand (the daemon's warm-up builds them; a conversion does not wait for that)."""
        reader = self.text_reader()
        if not context or reader is None or not reader.loaded:
            return []
        return reader.context_words(reading, context)

    def _model_scores(self, reading: str, context: str, session: ModelSession | None, texts: list[str]) -> list[float]:
        if self.engine is None:
            return []
        try:
            return self.engine.score(to_katakana(reading), context, texts, session)
        except EngineUnavailable:
            return []

    def _dictionary(self, reading: str, n: int) -> list[ConversionCandidate]:
        if self.dictionary is None:
            return []
        try:
            return [
                ConversionCandidate(
                    c.text, CandidateSource.DICTIONARY, cost=c.cost, morphemes=sum(len(b.morphemes) for b in c.segments)
                )
                for c in self.dictionary.convert(reading, n)
            ]
        except DictionaryUnavailable:
            return []


@dataclass(frozen=True)
class RescoringPool:
    """What a ranking rescores: the dictionary's own N-best, the pool (its top and the lattice search's best
    paths), the pool's language model scores and its words' coherence."""

    dictionary: tuple[ConversionCandidate, ...]
    pool: tuple[ConversionCandidate, ...]
    lm_scores: tuple[float, ...]
    coherence: tuple[float, ...] | None  # None without word vectors


@dataclass(frozen=True)
class Ranking:
    """The shared sources' candidates for one reading: those ahead of the kana forms and rewriters, and the
    unlikely ones behind them."""

    ahead: tuple[ConversionCandidate, ...]
    behind: tuple[ConversionCandidate, ...]
