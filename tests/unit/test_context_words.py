"""The document's words: found in the context piece by piece, and put in place of the words of a path."""

from daemon.dictionary import ContextWord
from daemon.dictionary.context_words import MAX_WORD_CHARS, context_words, kanji_runs, katakana_words
from daemon.lm.lattice_search import LatticePath, PathWord, with_context_words

# Entries by surface, as a dictionary read backwards would give them.
ENTRIES = {
    "丹": ["たん", "に"],
    "霞": ["かすみ", "か"],
    "山": ["やま", "さん"],
    "銅山": ["どうざん"],
    "長": ["ちょう", "なが"],
}
ENTRIES |= {
    "登": ["と", "とう"],
    "単価": ["たんか"],
    "地形": ["ちけい"],
    "時間": ["じかん"],
    "時": ["じ"],
    "間": ["ま"],
}


def pieces(run: str, start: int) -> list[tuple[int, str]]:
    return [
        (length, reading)
        for length in range(1, len(run) - start + 1)
        for reading in ENTRIES.get(run[start : start + length], [])
    ]


def every_boundary(run: str) -> frozenset[int]:
    return frozenset(range(len(run) + 1))


def test_kanji_runs_are_distinct_and_the_latest_first():
    assert kanji_runs("丹霞山の丹霞地形、長登銅山と丹霞山。") == ["丹霞山", "長登銅山", "丹霞地形"]
    assert kanji_runs("ひらがなと字") == []  # one kanji is no run


def test_every_part_of_a_run_that_spells_a_stretch_of_the_reading_is_found():
    found = context_words("たんかのちけい", "丹霞地形が見られる", pieces, every_boundary)
    assert ContextWord(0, 3, "丹霞") in found
    assert ContextWord(0, 7, "丹霞地形") not in found  # の between: not this run's reading
    found = context_words("このたんかちけい", "丹霞地形", pieces, every_boundary)
    assert {ContextWord(2, 5, "丹霞"), ContextWord(2, 8, "丹霞地形")} <= set(found)


def test_a_part_that_is_an_entry_is_left_to_the_dictionary():
    # 時間 reads じかん as an entry: it never spells じま, whatever its kanji's readings would make of it.
    assert context_words("じまで", "時間まで", pieces, every_boundary) == []
    assert set(context_words("ちょうとどうざん", "長登銅山", pieces, every_boundary)) == {
        ContextWord(0, 4, "長登"),
        ContextWord(0, 8, "長登銅山"),
        ContextWord(3, 8, "登銅山"),
    }  # not 銅山, an entry


def test_no_context_no_words_and_parts_stay_within_the_longest_word():
    assert context_words("たんか", "", pieces, every_boundary) == []
    run = "丹" * (MAX_WORD_CHARS + 2)
    found = context_words("たん" * (MAX_WORD_CHARS + 2), run, pieces, every_boundary)
    assert found and max(len(word.surface) for word in found) == MAX_WORD_CHARS


def path(*words: tuple[int, int, str], cost: int = 5000) -> LatticePath:
    return LatticePath("".join(w[2] for w in words), cost, tuple(PathWord(*w) for w in words))


def test_katakana_words_of_the_context_are_found_wherever_the_reading_spells_them():
    context = "王ティハトゥの子ハトゥは、ミンラ・ゲを殺害・処刑した。ー"
    assert katakana_words("はとぅはそくいごに", context) == [ContextWord(0, 3, "ハトゥ")]
    assert katakana_words("はとぅととぅはとぅ", context) == [ContextWord(0, 3, "ハトゥ"), ContextWord(6, 9, "ハトゥ")]
    # ・ inside joins, and each part is a word too: a name written whole comes back as its surname alone
    assert katakana_words("さらにみんら・げを", context) == [
        ContextWord(3, 8, "ミンラ・ゲ"),
        ContextWord(3, 6, "ミンラ"),
    ]
    named = "宣教師ガスパール・コエリョは"
    assert katakana_words("こえりょは", named) == [ContextWord(0, 4, "コエリョ")]
    assert katakana_words("がすぱーる・こえりょ", named) == [
        ContextWord(0, 10, "ガスパール・コエリョ"),
        ContextWord(0, 5, "ガスパール"),
        ContextWord(6, 10, "コエリョ"),
    ]
    assert katakana_words("・しょけい", context) == []  # a ・ between words is no part of one
    assert katakana_words("てぃ", "テ") == [] and katakana_words("ー", "ー") == []
    assert katakana_words("はとぅ", "") == []


def test_a_word_of_the_document_takes_the_place_of_the_words_spelling_its_stretch():
    best = path((0, 3, "単価"), (3, 4, "の"), (4, 7, "地形"))
    found = with_context_words(best, [ContextWord(0, 3, "丹霞")])
    assert found == [path((0, 3, "丹霞"), (3, 4, "の"), (4, 7, "地形"))] and found[0].cost == best.cost
    best = path((0, 2, "長刀"), (2, 6, "銅山"), (6, 7, "で"))
    found = with_context_words(best, [ContextWord(0, 6, "長登銅山")])
    assert found == [path((0, 6, "長登銅山"), (6, 7, "で"))] and found[0].morphemes == 2


def test_a_word_needs_a_word_boundary_at_both_its_ends_and_a_new_text():
    best = path((0, 2, "長刀"), (2, 6, "銅山"))
    assert with_context_words(best, [ContextWord(1, 6, "登銅山")]) == []  # 長刀 goes across its start
    assert with_context_words(best, [ContextWord(0, 2, "長刀")]) == []  # the text the path has already
    # Two words giving the same text (the document's run read two ways): once.
    assert with_context_words(best, [ContextWord(0, 6, "長登銅山"), ContextWord(0, 6, "長登銅山")]) == [
        path((0, 6, "長登銅山"))
    ]


def test_a_part_begins_and_ends_where_the_runs_words_do():
    # 時代初期 reads 時代 + 初期: 代初 is no word of it, whatever its kanji's readings would spell.
    def readings(run: str, i: int) -> list[tuple[int, str]]:
        return {"代": [(1, "たい")], "初": [(1, "しょ")]}.get(run[i], [])

    found = context_words("たいしょ", "時代初期", readings, {"時代初期": frozenset({0, 2, 4})}.get)
    assert found == []
    found = context_words("たいしょ", "時代初期", readings, every_boundary)
    assert found == [ContextWord(0, 4, "代初")]


def test_the_kanji_readings_are_built_in_a_child_and_pykakasi_stays_out_of_the_daemon():
    from tests.conftest import run_isolated

    ran = run_isolated("""
        import sys
        from daemon.dictionary.kanji_readings import kanji_readings
        assert "か" in kanji_readings()["霞"] and "と" in kanji_readings()["登"]
        assert "pykakasi" not in sys.modules
    """)
    assert ran.returncode == 0, ran.stderr
