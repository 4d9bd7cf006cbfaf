"""The conversion engine: a GGUF model loaded on a background thread, converting katakana readings
with left context into ranked candidates. It knows nothing of D-Bus or of input sessions' keys.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from contextlib import contextmanager
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from collections.abc import Callable, Iterator, Sequence

from daemon.engine.constraint import SpellingConstraint
from daemon.engine.decoder import SessionDecoder
from daemon.engine.native import LlamaError, Model
from daemon.engine.prompts import MARKERS, Prompt, build_prompt
from daemon.engine.registry import ModelEntry, RegistryError, resolve_model
from daemon.engine.beam import DEFAULT_BEAM_WIDTH, MAX_BEAM
from daemon.engine.search import Hypothesis

CHUNK_KANA = 30
# The longest reading the engine takes at all (its prompt must fit llama.cpp's batch); the converter gives it at
# most MODEL_MAX_READING_CHARS (daemon/converter.py).
ENGINE_MAX_READING_CHARS = 4096
MAX_NEW_CAP = 64
MAX_SCORED_TOKENS = 64
_CHUNK_END = re.compile(r"[^、。，．！？!?]*[、。，．！？!?]*")


class ModelState(StrEnum):
    NONE = "none"
    LOADING = "loading"
    READY = "ready"
    FAILED = "failed"


@dataclass(frozen=True)
class EngineStatus:
    state: ModelState
    model: str = ""
    reason: str = ""


@dataclass(frozen=True)
class ModelCandidate:
    text: str
    score: float  # log-probability under the model


class EngineUnavailable(RuntimeError):
    """No model is ready (none configured, still loading, or failed)."""


def clean_text(text: str) -> str:
    """Drop what cannot be part of a reading or context: control characters, lone surrogates, markers."""
    return "".join(ch for ch in text if ch not in MARKERS and unicodedata.category(ch) not in ("Cc", "Cs"))


def split_reading(reading: str, limit: int = CHUNK_KANA) -> list[str]:
    """Cut a long reading into chunks of at most `limit` characters, preferably after punctuation."""
    pieces = []
    for piece in _CHUNK_END.findall(reading):
        pieces += [piece[i : i + limit] for i in range(0, len(piece), limit)]
    chunks: list[str] = []
    for piece in pieces:
        if chunks and len(chunks[-1]) + len(piece) <= limit:
            chunks[-1] += piece
        elif piece:
            chunks.append(piece)
    return chunks


def prompt_tokens(model: Model, prompt: Prompt) -> list[int]:
    """Markers as control tokens; user text with parse_special off (its markers were already removed)."""
    ids: list[int] = []
    for text, is_marker in prompt.parts:
        ids += model.tokenize(text, special=is_marker)
    return ids


def conversion_prompt(model: Model, entry: ModelEntry, reading: str, context: str) -> list[int]:
    """The prompt's tokens for converting `reading` after `context`, in the model's registered format."""
    return prompt_tokens(model, build_prompt(entry.format, reading, context, entry.context_chars))


def max_new_tokens(model: Model, reading: str) -> int:
    """How many tokens a conversion of `reading` may produce."""
    return min(len(model.tokenize(reading, special=False)) + 8, MAX_NEW_CAP)


def stop_tokens(model: Model) -> frozenset[int]:
    """End-of-generation tokens, and the markers: a model starting a new prompt section is done."""
    stops = {t for t in range(model.n_vocab) if model.is_end_of_generation(t)}
    for marker in MARKERS:
        ids = model.tokenize(marker, special=True)
        if len(ids) == 1:
            stops.add(ids[0])
    return frozenset(stops)


@dataclass
class _LoadedModel:
    model: Model
    entry: ModelEntry
    stop_tokens: frozenset[int]

    def prompt(self, reading: str, context: str) -> list[int]:
        return conversion_prompt(self.model, self.entry, reading, context)


@dataclass(frozen=True)
class ModelInfo:
    """The loaded model: its registry name, prompt format, size and file."""

    name: str
    format: str
    params: int
    path: Path


class LiveDecoders:
    """The model sessions that hold a live decoder, least recently used first. Each live decoder holds a llama
    context (its KV cache): only the `capacity` most recently used sessions keep one; an evicted session
    re-prefills its prompt on its next conversion. Used with the engine's lock held."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._sessions: list[ModelSession] = []

    def make_room(self) -> None:
        """Closes the least recently used decoders until one more fits."""
        while len(self._sessions) >= self.capacity:
            self._sessions[0].close_decoder()

    def touch(self, session: ModelSession) -> None:
        """`session`, which holds a decoder, is now the most recently used."""
        if session in self._sessions:
            self._sessions.remove(session)
        self._sessions.append(session)

    def evict(self, session: ModelSession) -> None:
        """Forgets `session`, whose decoder has been closed."""
        self._sessions.remove(session)

    def close_all(self) -> None:
        """Closes every live decoder (before the model they use goes, or for another thread count)."""
        for session in list(self._sessions):
            session.close_decoder()


class Engine:
    """Owns the model. All llama.cpp work is serialised by one lock: contexts share the CPU anyway."""

    def __init__(
        self,
        n_threads: int = 2,
        exact: bool = False,
        beam_width: int = DEFAULT_BEAM_WIDTH,
        on_status: Callable[[EngineStatus], None] | None = None,
        max_live_decoders: int = 4,
    ):
        self.n_threads = n_threads
        self.exact = exact
        # The width of the model's beam search when it offers several conversions (at least as many);
        # one conversion is greedy.
        self.beam_width = beam_width
        # Told of every status change (from the loading thread); set it before the first load.
        self.on_status = on_status
        self._lock = threading.Lock()
        self._load_requests = 0  # loads asked for: only the latest one's model is kept
        self._loaded: _LoadedModel | None = None
        self._status = EngineStatus(ModelState.NONE)
        self._ready = threading.Event()
        self._default_session: ModelSession | None = None
        self.live_decoders = LiveDecoders(max_live_decoders)

    # -- loading --------------------------------------------------------------------------------

    @property
    def status(self) -> EngineStatus:
        return self._status

    def _set_status(self, status: EngineStatus) -> None:
        self._status = status
        if status.state in (ModelState.READY, ModelState.FAILED):
            self._ready.set()
        else:
            self._ready.clear()
        if self.on_status is not None:
            self.on_status(status)

    def load(self, model: str | Path, prompt_format: str | None = None) -> threading.Thread:
        """Start loading a registered model name or a GGUF path on a background thread. A load asked for
        while another is under way wins: the earlier one's model is dropped when it arrives."""
        name = str(model)
        with self._lock:  # the status follows the requests in order
            self._load_requests += 1
            request = self._load_requests
            self._set_status(EngineStatus(ModelState.LOADING, name))
        thread = threading.Thread(
            target=self._load, args=(name, prompt_format, request), name="tsuzuri-model-load", daemon=True
        )
        thread.start()
        return thread

    def unload(self, reason: str) -> None:
        """Free the model (a load under way is dropped when it arrives); the status says `reason`."""
        with self._lock:
            self._load_requests += 1
            self._drop_model()
            self._set_status(EngineStatus(ModelState.NONE, "", reason))

    def _load(self, name: str, prompt_format: str | None, request: int) -> None:
        loaded, failure = None, None
        try:
            path, entry = resolve_model(name)
            model = Model(path)
            fmt = prompt_format or (model.prompt_format if entry.source == "local" else None)
            if fmt:
                build_prompt(fmt, "", "")  # raises on an unknown format
                entry = replace(entry, format=fmt)
            loaded = _LoadedModel(model, entry, stop_tokens(model))
        except (LlamaError, RegistryError, ValueError, OSError) as exc:
            failure = str(exc)
        with self._lock:
            if request != self._load_requests:  # outdated by a later load
                if loaded is not None:
                    loaded.model.close()
                return
            self._drop_model()
            self._loaded = loaded
            self._set_status(
                EngineStatus(ModelState.FAILED, name, failure)
                if failure is not None
                else EngineStatus(ModelState.READY, name)
            )

    def _drop_model(self) -> None:
        """Free the model; called with the lock held. Contexts must go before the weights they use."""
        if self._loaded is not None:
            self.live_decoders.close_all()
            self._loaded.model.close()
            self._loaded = None

    def _ready_model(self) -> _LoadedModel:
        """The loaded model (call with the lock held), or a clear error saying why there is none."""
        if self._loaded is None:
            status = self._status
            raise EngineUnavailable(
                f"no model ready ({status.state.value}{': ' + status.reason if status.reason else ''})"
            )
        return self._loaded

    @contextmanager
    def model_in_use(self) -> Iterator[_LoadedModel]:
        """The loaded model, for the block's llama.cpp work: the engine's lock is held throughout. Raises
        EngineUnavailable where no model is ready."""
        with self._lock:
            yield self._ready_model()

    def release_decoder(self, session: ModelSession) -> None:
        """Closes the session's decoder now (under the engine's lock)."""
        with self._lock:
            session.close_decoder()

    def wait(self, timeout: float | None = None) -> EngineStatus:
        self._ready.wait(timeout)
        return self._status

    @property
    def model_info(self) -> ModelInfo | None:
        """What the loaded model is, or None while none is."""
        loaded = self._loaded
        if loaded is None:
            return None
        return ModelInfo(loaded.entry.name, loaded.entry.format, loaded.model.n_params, loaded.model.path)

    def configure(self, n_threads: int, beam_width: int) -> None:
        """Another thread count or beam width from now on. Decoders made for other threads are closed; their
        sessions make new ones at their next conversion."""
        self.beam_width = beam_width  # read once per conversion
        if n_threads != self.n_threads:
            with self._lock:
                self.n_threads = n_threads
                self.live_decoders.close_all()

    def close(self) -> None:
        with self._lock:
            self._drop_model()

    # -- conversion -----------------------------------------------------------------------------

    def session(self) -> ModelSession:
        """A model session: its own KV state, so its next keystroke reuses its prompt prefix."""
        return ModelSession(self)

    def convert(
        self,
        reading: str,
        context: str = "",
        n: int = 1,
        session: ModelSession | None = None,
        draft: str | None = None,
        spellings: Sequence[tuple[int, int, str]] | None = None,
    ) -> list[ModelCandidate]:
        """Ranked candidates for a katakana/hiragana reading: up to n from the model (greedy for n = 1, else
        a beam search at least `beam_width` wide), then the reading itself in hiragana and katakana."""
        return (session or self._default()).convert(reading, context, n, draft, spellings)

    def score(self, reading: str, context: str, texts: list[str], session: ModelSession | None = None) -> list[float]:
        """log P(text | reading, context) for each text (see ModelSession.score)."""
        return (session or self._default()).score(reading, context, texts)

    def _default(self) -> ModelSession:
        """The session for stateless calls (tools, the D-Bus Convert method)."""
        if self._default_session is None:
            self._default_session = self.session()
        return self._default_session


class ModelSession:
    """The model's side of one input session: its own decoder and KV cache, lent by the engine."""

    def __init__(self, engine: Engine):
        self._engine = engine
        self._decoder: SessionDecoder | None = None
        self._decoder_model: Model | None = None

    def _decoder_for(self, loaded: _LoadedModel) -> SessionDecoder:
        engine = self._engine
        if self._decoder is None or self._decoder_model is not loaded.model:
            self.close_decoder()
            engine.live_decoders.make_room()
            self._decoder = SessionDecoder(
                loaded.model, n_threads=engine.n_threads, exact=engine.exact, beam_capacity=engine.beam_width
            )
            self._decoder_model = loaded.model
        engine.live_decoders.touch(self)
        return self._decoder

    def convert(
        self,
        reading: str,
        context: str = "",
        n: int = 1,
        draft: str | None = None,
        spellings: Sequence[tuple[int, int, str]] | None = None,
    ) -> list[ModelCandidate]:
        """`draft`: a likely output (the dictionary's best path) that greedy decoding verifies in one
        batch; it changes no result, only how many steps the model takes.

        `spellings`: words (start, end, surface) over the reading's characters, e.g. the dictionary's
        lattice plus kana; when given, the model searches only outputs that are a chain of these words
        covering the whole reading (a beam search, also for n = 1). A reading that loses characters to
        cleaning (control characters, markers) no longer matches its offsets and converts unconstrained."""
        if not isinstance(reading, str) or not isinstance(context, str):
            raise TypeError("reading and context must be strings")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"n must be a positive integer, not {n!r}")
        cleaned = clean_text(reading)
        if cleaned != reading:
            spellings = None  # their offsets were for the uncleaned reading
        reading, context = cleaned, clean_text(context)
        if len(reading) > ENGINE_MAX_READING_CHARS:
            raise ValueError(f"reading of {len(reading)} characters exceeds {ENGINE_MAX_READING_CHARS}")
        if not reading:
            return []
        engine = self._engine
        with engine.model_in_use() as loaded:
            decoder = self._decoder_for(loaded)
            chunks = split_reading(reading)
            constraints = self._chunk_constraints(loaded, chunks, spellings)
            prefix, prefix_score = "", 0.0
            for chunk, constraint in zip(chunks[:-1], constraints):
                found = self._search(loaded, decoder, chunk, context + prefix, 1, constraint=constraint)
                prefix += (loaded.model.detokenize(list(found[0].tokens)).strip() if found else "") or chunk
                prefix_score += found[0].score if found else 0.0
            draft_tokens = None
            if draft and len(chunks) == 1:
                draft_tokens = loaded.model.tokenize(clean_text(draft), special=False)
            width = 1 if n == 1 else min(max(n, engine.beam_width), MAX_BEAM)
            hypotheses = self._search(
                loaded, decoder, chunks[-1], context + prefix, width, draft_tokens, constraints[-1]
            )
        return self._candidates(loaded, hypotheses[:n], prefix, prefix_score, reading)

    @staticmethod
    def _chunk_constraints(
        loaded: _LoadedModel, chunks: list[str], spellings: Sequence[tuple[int, int, str]] | None
    ) -> list[SpellingConstraint | None]:
        """One constraint per chunk from the words lying wholly inside it (None everywhere without words)."""
        if spellings is None:
            return [None] * len(chunks)
        tokens: dict[str, list[int]] = {}
        constraints: list[SpellingConstraint | None] = []
        offset = 0
        for chunk in chunks:
            end = offset + len(chunk)
            spans = []
            for start, stop, surface in spellings:
                if offset <= start and stop <= end:
                    if surface not in tokens:
                        tokens[surface] = loaded.model.tokenize(clean_text(surface), special=False)
                    spans.append((start - offset, stop - offset, tokens[surface]))
            constraints.append(SpellingConstraint(len(chunk), spans))
            offset = end
        return constraints

    def score(self, reading: str, context: str, texts: list[str]) -> list[float]:
        """log P(text | reading, context) under the model for each text (for reranking others'
        candidates); texts too long to score in one batch get -inf."""
        reading, context = clean_text(reading), clean_text(context)
        if not reading or len(reading) > ENGINE_MAX_READING_CHARS:
            raise ValueError(f"reading must have 1..{ENGINE_MAX_READING_CHARS} characters")
        with self._engine.model_in_use() as loaded:
            decoder = self._decoder_for(loaded)
            prompt = loaded.prompt(reading, context)
            tokenized = [loaded.model.tokenize(clean_text(t), special=False) for t in texts]
            scorable = [i for i, ids in enumerate(tokenized) if len(ids) <= MAX_SCORED_TOKENS]
            found = decoder.score(prompt, [tokenized[i] for i in scorable], loaded.model.eos)
        scores = [float("-inf")] * len(texts)
        for i, value in zip(scorable, found):
            scores[i] = value
        return scores

    def _search(
        self,
        loaded: _LoadedModel,
        decoder: SessionDecoder,
        reading: str,
        context: str,
        width: int,
        draft: list[int] | None = None,
        constraint: SpellingConstraint | None = None,
    ) -> list[Hypothesis]:
        prompt = loaded.prompt(reading, context)
        max_new = max_new_tokens(loaded.model, reading)
        if width == 1 and constraint is None:
            return [decoder.greedy(prompt, max_new, loaded.stop_tokens, draft=draft)]
        return decoder.beam(prompt, width, max_new, loaded.stop_tokens, constraint)

    @staticmethod
    def _candidates(
        loaded: _LoadedModel, hypotheses: list[Hypothesis], prefix: str, prefix_score: float, reading: str
    ) -> list[ModelCandidate]:
        candidates: list[ModelCandidate] = []
        seen = set()
        for hyp in hypotheses:
            text = prefix + loaded.model.detokenize(list(hyp.tokens)).strip()
            if text and text not in seen:
                seen.add(text)
                candidates.append(ModelCandidate(text, prefix_score + hyp.score))
        return candidates

    def close_decoder(self) -> None:
        """Frees this session's decoder (its llama context), if it has one; call with the engine's lock held.
        Its next conversion makes a new one."""
        if self._decoder is not None:
            self._decoder.close()
            self._decoder = None
            self._decoder_model = None
            self._engine.live_decoders.evict(self)

    def close(self) -> None:
        self._engine.release_decoder(self)
