"""The session's side of conversion (as Mozc's SessionConverter): the calls to the `Conversion` interface that
make a Converting phase's segments and a Predicting phase's items, reshape segments (split, resize), convert the
live text and learn a commit. It keeps the input session's neural-model state; the session decides when each
call is made, and the phases (daemon/phases.py) hold what they return.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from daemon.conversion import CandidateSource, Conversion, ConversionCandidate, Effort, PersonalData, unique_texts
from daemon.phases import Composing, Converting, PendingImprovement, Predicting, Segment
from ime_protocol import MAX_CANDIDATES, MAX_SHORT_TEXT_CHARS

# Space answers with the neural model's ranking if it is done (mostly made in advance, while the user paused) or
# done within this wait; past it, at once with the ranking without the model, and the model's follows as an
# improvement (conversion_to_improve). On a busy machine the model's scoring is what keeps Space waiting.
SPACE_MODEL_WAIT_S = 0.005
UNKEPT_CHOICE_NOTICE = "学習した変換を保存できません"


@dataclass(frozen=True)
class Request:
    """What every conversion of a session's reading depends on besides the reading."""

    context: str  # the text left of the cursor
    n: int  # dictionary candidates
    personal: PersonalData


class SessionConverter:
    def __init__(self, conversion: Conversion):
        self.conversion = conversion
        self.model_session = conversion.model_session()

    def convert(self, reading: str, request: Request, composing: Composing) -> Converting:
        """Space: one segment for the whole reading, whole-sentence candidates (model, dictionary N-best), ranked
        with the neural model's say if it comes within SPACE_MODEL_WAIT_S, else improved later."""
        candidates, model_to_come = self.conversion.timely_candidates(
            SPACE_MODEL_WAIT_S, reading, request.context, request.n, self.model_session, request.personal
        )
        segment = Segment(reading, candidates[:MAX_CANDIDATES] or [ConversionCandidate(reading, CandidateSource.KANA)])
        pending = PendingImprovement(segment, self.whole_conversion(reading, request)) if model_to_come else None
        return Converting([segment], composing, pending_improvement=pending)

    def whole_conversion(self, reading: str, request: Request) -> Callable[[], list[ConversionCandidate]]:
        """The whole reading's conversion with the neural model's say, as a call: made in advance while the user
        pauses (Space then finds it done), or after Space answered without it."""
        return partial(
            self.conversion.candidates, reading, request.context, request.n, self.model_session, request.personal
        )

    def live(self, reading: str, request: Request) -> str | None:
        """A key's live conversion: the dictionary and the language model decide (about 2 ms); the neural
        model has its say in the conversion in advance and when the user converts."""
        candidates = self.conversion.candidates(
            reading, request.context, 1, personal=request.personal, effort=Effort.KEYSTROKE
        )
        return candidates[0].text if candidates else None

    def predict(self, prefix: str, page_size: int, composing: Composing) -> Predicting | None:
        predictions = self.conversion.predictions(prefix, page_size)
        return Predicting(Segment(prefix, predictions), composing) if predictions else None

    def split_whole(self, converting: Converting, request: Request) -> None:
        """Segment operations on a whole-sentence conversion first cut it into dictionary bunsetsu."""
        if len(converting.segments) != 1:
            return
        split = self.conversion.bunsetsu(converting.segments[0].reading)
        if len(split) > 1:
            converting.segments = [self._segment(reading, first, request) for reading, first in split]
            converting.focus = 0

    def move_focus(self, converting: Converting, step: int, resize: bool, request: Request) -> None:
        """Left/Right move the focus between segments, Shift+Left/Right resize the focused one; either first cuts
        a whole-sentence conversion into bunsetsu."""
        if resize:
            self.resize_focused(converting, step, request)
        else:
            self.split_whole(converting, request)
            converting.move_focus(step)

    def resize_focused(self, converting: Converting, step: int, request: Request) -> None:
        """Shift+Left/Right: the focused segment loses or gains one character; what follows re-converts."""
        self.split_whole(converting, request)
        segments, focus = converting.segments, converting.focus
        start = sum(len(s.reading) for s in segments[:focus])
        end = start + len(segments[focus].reading) + step
        reading = converting.reading
        if not start < end <= len(reading):
            return
        kept = segments[:focus]
        boundaries = [sum(len(s.reading) for s in kept[: i + 1]) for i in range(len(kept))] + [end]
        converted = self.conversion.bunsetsu(reading, boundaries)
        if not converted:
            return
        converting.segments = kept + [self._segment(span, first, request) for span, first in converted[len(kept) :]]
        converting.window_open = False

    def _segment(self, reading: str, first: str, request: Request) -> Segment:
        """A segment whose first candidate is the dictionary's choice in context."""
        candidates = [ConversionCandidate(first, CandidateSource.DICTIONARY)] + self.conversion.candidates(
            reading, request.context, request.n, personal=request.personal, effort=Effort.SEGMENT
        )
        return Segment(reading, unique_texts(candidates)[:MAX_CANDIDATES])

    def learn(self, converting: Converting) -> str:
        """The committed choices learned; what to tell the user, once, if they cannot be kept."""
        problem = self.conversion.learn([(s.reading, s.text) for s in converting.segments])
        return f"{UNKEPT_CHOICE_NOTICE}: {problem}"[:MAX_SHORT_TEXT_CHARS] if problem else ""  # the aux line's limit

    def close(self) -> None:
        if self.model_session is not None:
            self.model_session.close()
