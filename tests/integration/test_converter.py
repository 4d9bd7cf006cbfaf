"""The merged candidate list: sources in order, deduplicated, annotated."""

import threading
from datetime import datetime

import pytest

from daemon.conversion import MAX_READING_CHARS, Effort, PersonalData, ReadingTooLong, clean_reading
from daemon.converter import Converter, spellings
from daemon.dictionary import system_dictionary, system_reader
from daemon.engine import Engine, EngineStatus, ModelState
from daemon.lm import load_language_model, load_word_vectors
from daemon.spelling import Spelling
from daemon.userdata.learning import LearningHistory
from daemon.userdata.user_dictionary import UserDictionary

NOW = datetime(2026, 11, 29, 19, 48)


@pytest.fixture
def userdata(tmp_path):
    user = UserDictionary(tmp_path / "user.tsv")
    learning = LearningHistory(tmp_path / "learning.tsv")
    return user, learning


def converter(userdata, engine=None, model_candidates=0):
    user, learning = userdata
    return Converter(
        dictionary=system_dictionary(),
        engine=engine,
        user_dictionary=user,
        learning=learning,
        clock=lambda: NOW,
        model_candidates=model_candidates,
    )


def test_dictionary_only_conversion(userdata):
    found = converter(userdata).candidates("きょうはいいてんきですね")
    assert found[0].text == "今日はいい天気ですね" and found[0].source == "dictionary"
    texts = [c.text for c in found]
    assert len(texts) == len(set(texts))
    assert ("きょうはいいてんきですね", "kana") in [(c.text, c.source) for c in found]


def test_sources_in_order_learning_user_dictionary_kana_rewriter(userdata):
    user, learning = userdata
    user.add("きょう", "京", "名詞", "みやこ")
    learning.record("きょう", "強")
    found = converter(userdata).candidates("きょう")
    sources = [c.source for c in found]
    assert found[0].text == "強" and sources[0] == "learning"
    assert (found[1].text, found[1].source, found[1].annotation) == ("京", "user", "みやこ")
    order = ["learning", "user", "dictionary", "kana", "rewriter"]
    ranks = [order.index(s) for s in sources]
    assert ranks == sorted(ranks)
    assert "2026年11月29日" in [c.text for c in found]  # the date rewriter, from the injected clock


def test_duplicates_keep_their_first_place(userdata):
    user, _ = userdata
    user.add("きょう", "今日", "名詞")
    found = converter(userdata).candidates("きょう")
    assert [c.text for c in found].count("今日") == 1
    assert next(c for c in found if c.text == "今日").source == "user"


def test_suppressed_words_disappear_from_every_source(userdata):
    user, _ = userdata
    user.add("きょう", "今日", "抑制単語")
    assert "今日" not in [c.text for c in converter(userdata).candidates("きょう")]


def test_secret_fields_skip_learning(userdata):
    _, learning = userdata
    learning.record("きょう", "強")
    assert converter(userdata).candidates("きょう", personal=PersonalData.NO_HISTORY)[0].text != "強"


def test_callers_other_than_the_users_sessions_see_none_of_the_users_words(userdata):
    user, learning = userdata
    learning.record("きょう", "強")
    user.add("きょう", "京", "名詞")
    found = converter(userdata).candidates("きょう", personal=PersonalData.NONE)
    assert {c.source for c in found}.isdisjoint({"learning", "user"})


def test_model_candidates_come_after_personal_ones_and_before_the_dictionary(userdata, model_path):
    engine = Engine()
    engine.load(model_path)
    assert engine.wait(60).state is ModelState.READY
    user, _ = userdata
    user.add("きょう", "京", "名詞")
    found = converter(userdata, engine, model_candidates=3).candidates("きょう", "", 5, session=engine.session())
    sources = [c.source for c in found]
    assert sources[0] == "user" and "model" in sources
    assert sources.index("model") < sources.index("dictionary")
    engine.close()


def test_a_failed_model_means_dictionary_service(userdata, tmp_path):
    engine = Engine()
    engine.load(tmp_path / "missing.gguf")
    engine.wait(30)
    found = converter(userdata, engine).candidates("きょうはいいてんきですね")
    assert found[0].text == "今日はいい天気ですね"


def test_empty_reading_gives_nothing(userdata):
    assert converter(userdata).candidates("") == []


def test_the_context_chooses_among_the_pool_even_when_one_candidate_is_asked_for():
    converter = Converter(dictionary=system_dictionary(), clock=lambda: NOW, language_model=load_language_model())
    assert "故障" in converter.candidates("にばんめのこしょう", "", 1)[0].text
    assert "呼称" in converter.candidates("にばんめのこしょう", "一人目の呼称、", 1)[0].text


def test_the_models_own_candidates_join_every_dictionary_candidate(userdata, model_path):
    engine = Engine()
    engine.load(model_path)
    engine.wait(60)
    plain = Converter(dictionary=system_dictionary(), clock=lambda: NOW, language_model=load_language_model())
    with_model = Converter(
        dictionary=system_dictionary(),
        engine=engine,
        clock=lambda: NOW,
        model_candidates=3,
        language_model=load_language_model(),
    )
    before = {c.text for c in plain.candidates("きょうはいいてんきですね", n=10)}
    after = with_model.candidates("きょうはいいてんきですね", n=10)
    assert before <= {c.text for c in after}
    assert "model" in [c.source for c in after]
    engine.close()


def test_spellings_add_kana_escapes_to_the_dictionary_lattice():
    words = spellings(system_dictionary(), "てぃーゔぃ")
    assert {(0, 1, "て"), (0, 1, "テ"), (2, 3, "ー"), (4, 5, "ぃ"), (4, 5, "ィ")} <= set(words)
    assert (0, 2, "ティ") in words or (0, 3, "ティー") in words  # and dictionary words
    assert spellings(None, "あ") == [(0, 1, "あ"), (0, 1, "ア")]


def test_constrained_model_candidates_spell_the_reading(userdata, model_path):
    engine = Engine()
    engine.load(model_path)
    engine.wait(60)
    constrained = Converter(
        dictionary=system_dictionary(), engine=engine, model_candidates=3, constrain_model=True, clock=lambda: NOW
    )
    reading = "きょうはいいてんき"
    model = [c.text for c in constrained.candidates(reading) if c.source == "model"]
    direct = engine.convert("キョウハイイテンキ", n=3, spellings=spellings(system_dictionary(), reading))
    assert model == [c.text for c in direct]
    engine.close()


@pytest.mark.parametrize(
    "reading, expected",
    [
        ("か\ud800な\udfff", "かな"),  # lone surrogates: MeCab cannot take them
        ("か\x00\x07な\x7f", "かな"),  # control characters
        ("\uee00\uee01\uee02かな", "かな"),  # private use, the model's prompt markers among them
        ("ｶﾅ（！）", "ｶﾅ（！）"),  # everything else as typed
    ],
)
def test_clean_reading_drops_what_no_reading_holds(reading, expected):
    assert clean_reading(reading) == expected


def test_a_reading_is_measured_after_nfkc():
    clean_reading("あ" * MAX_READING_CHARS)
    with pytest.raises(ReadingTooLong, match="after NFKC"):
        clean_reading("\ufdfa" * 60)  # 60 characters, 1,080 after NFKC


def test_hostile_readings_convert_or_give_nothing(userdata):
    found = converter(userdata).candidates("か\ud800な", n=3)
    assert found and all("\ud800" not in c.text for c in found)
    assert converter(userdata).candidates("\x00\x01\uee00") == []


# -- rankings kept for readings converted again or in advance -------------------------------------


@pytest.fixture(scope="module")
def kept_rankings_converter():
    return Converter(dictionary=system_dictionary(), language_model=load_language_model())


READINGS = [
    ("きょうはいいてんきですね", ""),
    ("かれはがっこうにいった", "昨日、"),
    ("きしゃのきしゃがきしゃできしゃした", ""),
    ("にほんごをにゅうりょくする", "これは"),
    ("かんじ", ""),
]


def test_kept_rankings_give_the_lists_a_fresh_converter_gives(kept_rankings_converter):
    converter = kept_rankings_converter
    for reading, context in READINGS:  # computed, then served from the store
        first = converter.candidates(reading, context, 10)
        assert converter.candidates(reading, context, 10) == first
        fresh = Converter(dictionary=system_dictionary(), language_model=load_language_model())
        assert fresh.candidates(reading, context, 10) == first
        assert converter.candidates(reading, context, 3) == fresh.candidates(reading, context, 3)
        assert converter.candidates(reading, context, 1, effort=Effort.KEYSTROKE) == fresh.candidates(
            reading, context, 1, effort=Effort.KEYSTROKE
        )


def test_what_the_user_taught_shows_at_once_over_a_kept_ranking(tmp_path):
    converter = Converter(
        dictionary=system_dictionary(),
        language_model=load_language_model(),
        learning=LearningHistory(tmp_path / "learning.tsv"),
    )
    before = converter.candidates("かんじ")
    converter.learn([("かんじ", "幹事")])
    assert before[0].text != "幹事" and converter.candidates("かんじ")[0].text == "幹事"


class ScoresOnRequest:
    """A ready neural model whose scores come when the test releases them; it likes `favourite` best."""

    status = EngineStatus(ModelState.READY, "stand-in")
    model_info = None

    def __init__(self, favourite: str):
        self.favourite = favourite
        self.asked = threading.Event()
        self.release = threading.Event()

    def score(self, _katakana: str, _context: str, texts: list[str], _session) -> list[float]:
        self.asked.set()
        assert self.release.wait(30)
        return [0.0 if text == self.favourite else -20.0 for text in texts]


def test_a_conversion_that_may_not_wait_for_the_model_gets_the_ranking_without_it_until_the_models_is_done():
    reading, context = "こうえん", "昨日の"
    without = Converter(dictionary=system_dictionary(), language_model=load_language_model())
    first_without = without.candidates(reading, context)
    model = ScoresOnRequest(first_without[1].text)
    converter = Converter(dictionary=system_dictionary(), engine=model, language_model=load_language_model())
    in_advance: list = []
    worker = threading.Thread(target=lambda: in_advance.append(converter.candidates(reading, context)))
    worker.start()
    assert model.asked.wait(30)  # the model's ranking is under way
    assert converter.timely_candidates(0.01, reading, context) == (first_without, True)
    model.release.set()
    worker.join(30)
    assert in_advance[0][0].text == model.favourite
    assert converter.timely_candidates(0.01, reading, context) == (in_advance[0], False)  # done: no waiting


def test_a_conversion_that_may_not_wait_never_starts_the_models_ranking():
    model = ScoresOnRequest("公演")
    converter = Converter(dictionary=system_dictionary(), engine=model, language_model=load_language_model())
    assert converter.timely_candidates(0.01, "こうえん", "昨日の")[1]
    assert not model.asked.is_set()


def test_the_official_spelling_writes_the_auxiliary_words_in_kana_and_keeps_the_ranked_spelling_next():
    found = Converter(dictionary=system_dictionary(), language_model=load_language_model())
    ranked = [c.text for c in found.candidates("そのときはれんらくする")]
    assert ranked[0] == "その時は連絡する"  # without context the ranking writes 時
    found.spelling = Spelling.OFFICIAL  # the same converter: its kept rankings were of the other policy
    official = [c.text for c in found.candidates("そのときはれんらくする")]
    assert official[:2] == ["そのときは連絡する", "その時は連絡する"]
    assert set(official) == set(ranked)  # nothing lost, only moved
    assert found.bunsetsu("そのときはれんらくする")[0] == ("そのときは", "そのときは")
    found.spelling = Spelling.RANKED
    assert [c.text for c in found.candidates("そのときはれんらくする")] == ranked
    assert found.bunsetsu("そのときはれんらくする")[0] == ("そのときは", "その時は")


def test_the_documents_own_words_come_back_for_their_reading():
    system_reader().load()  # as the daemon's warm-up does
    found = Converter(dictionary=system_dictionary(), language_model=load_language_model())
    assert found.candidates("ていようえんにより")[0].text != "蹄葉炎により"  # no dictionary word: a homophone
    assert found.candidates("ていようえんにより", "テンポイントは蹄葉炎を発症した。")[0].text == "蹄葉炎により"
    assert found.candidates("しんしゅう6ごうは", "中国の宇宙船神舟が打ち上げられた。")[0].text == "神舟6号は"
    # A katakana name reads as it is written.
    assert found.candidates("はとぅはそくいごに")[0].text == "はトゥは即位後に"
    assert found.candidates("はとぅはそくいごに", "王ティハトゥの子、ハトゥが継いだ。")[0].text == "ハトゥは即位後に"


def test_words_that_go_together_win_over_their_homophones():
    """帽子 (a hat) and 防止 (prevention) read ぼうし; the coat and the wall choose (daemon/lm/word_vectors.py)."""
    vectors = load_word_vectors()
    assert vectors is not None  # shipped
    plain = Converter(dictionary=system_dictionary(), language_model=load_language_model())
    found = Converter(dictionary=system_dictionary(), language_model=load_language_model(), word_vectors=vectors)
    reading = "かべにぼうしとこーとがかかっていた"
    assert plain.candidates(reading)[0].text == "壁に防止とコートがかかっていた"
    assert found.candidates(reading)[0].text == "壁に帽子とコートがかかっていた"
    assert found.candidates("こんばんとめてくれないかな")[0].text == "今晩泊めてくれないかな"
    # The context's last words count: after 捜査, 犯人の行方 is followed (追う), not carried (負う).
    assert found.candidates("ゆくえをおっている", "警察は捜査本部を設けて、犯人の")[0].text == "行方を追っている"
