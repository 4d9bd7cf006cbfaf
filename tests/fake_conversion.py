"""An in-memory conversion for the session's state-machine tests (the Conversion interface of
daemon/converter.py): a table of readings and their candidates; a reading is cut into bunsetsu as `cuts`
says, else by the longest readings of the table. FakeReader does the same for reconversion's readings."""

from __future__ import annotations

from collections.abc import Sequence

from daemon.conversion import CandidateSource, ConversionCandidate, Effort, PersonalData
from daemon.kana import to_katakana


class FakeConversion:
    def __init__(
        self,
        words: dict[str, list[str]],
        cuts: dict[str, list[str]] | None = None,
        model_ranked: dict[str, list[str]] | None = None,
    ):
        self.words = words
        self.cuts = cuts or {}
        # Readings the neural model ranks otherwise, and how: a call gets that, unless it is timely_candidates and
        # the model is late.
        self.model_ranked = model_ranked or {}
        self.model_late = False
        self.learned: list[list[tuple[str, str]]] = []
        self.keeping_problem = ""  # what learn answers: why the choices may not be kept
        self.asked: list[tuple[str, Effort]] = []  # (reading, effort) of every candidates() call
        self.calls: list[tuple] = []  # every candidates() call's arguments, in order

    def candidates(
        self,
        reading: str,
        context: str = "",
        n: int = 10,
        session=None,
        personal: PersonalData = PersonalData.ALL,
        effort: Effort = Effort.SENTENCE,
    ):
        return self._candidates(reading, context, n, session, personal, effort, with_model=effort.uses_model)

    def timely_candidates(
        self,
        model_wait_s: float,
        reading: str,
        context: str = "",
        n: int = 10,
        session=None,
        personal: PersonalData = PersonalData.ALL,
    ):
        model_to_come = self.model_late and reading in self.model_ranked
        return (
            self._candidates(reading, context, n, session, personal, Effort.SENTENCE, with_model=not model_to_come),
            model_to_come,
        )

    def _candidates(
        self, reading: str, context: str, n: int, session, personal: PersonalData, effort: Effort, with_model: bool
    ):
        self.asked.append((reading, effort))
        self.calls.append((reading, context, n, session, personal, effort))
        words = (self.model_ranked.get(reading) if with_model else None) or self.words.get(reading, [])
        words = words[:n]
        found = [ConversionCandidate(text, CandidateSource.DICTIONARY) for text in words]
        return found + [
            ConversionCandidate(kana, CandidateSource.KANA)
            for kana in (reading, to_katakana(reading))
            if kana not in words
        ]

    def bunsetsu(self, reading: str, boundaries: Sequence[int] = ()) -> list[tuple[str, str]]:
        spans, start = [], 0
        for end in boundaries:
            spans.append(reading[start:end])
            start = end
        if reading[start:] in self.cuts:
            return self._first([*spans, *self.cuts[reading[start:]]])
        while start < len(reading):  # the longest known reading at each point, else one character
            end = next((e for e in range(len(reading), start, -1) if reading[start:e] in self.words), start + 1)
            spans.append(reading[start:end])
            start = end
        return self._first(spans)

    def _first(self, spans: list[str]) -> list[tuple[str, str]]:
        return [(span, (self.words.get(span) or [span])[0]) for span in spans]

    def predictions(self, prefix: str, n: int = 9):
        return [
            ConversionCandidate(texts[0], CandidateSource.DICTIONARY, reading)
            for reading, texts in self.words.items()
            if reading.startswith(prefix) and reading != prefix
        ][:n]

    def learn(self, choices: list[tuple[str, str]]) -> str:
        self.learned.append(choices)
        return self.keeping_problem

    def model_session(self):
        return None

    def text_reader(self):
        return None


class FakeReader:
    """Readings of written text from a table (reconversion's reverse dictionary), once `loaded`; text the table
    does not know reads as itself."""

    def __init__(self, readings: dict[str, str], loaded: bool = True):
        self.readings, self.loaded = readings, loaded

    def reading_of(self, text: str) -> str:
        return self.readings.get(text, text)
