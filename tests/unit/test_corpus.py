"""daemon/tools/corpus.py: the held-out documents reach no language model, no training pair and no weight fit."""

import json
from pathlib import Path

import pytest

from daemon.tools import corpus as corpus_module
from daemon.tools.corpus import BUFFER_LINES, HELD_OUT_MANIFEST, HELD_OUT_TAIL_LINES, held_out, held_out_start


def paragraph(number: int) -> list[str]:
    return [f"段落{number}の一文目。", f"段落{number}の二文目。", f"段落{number}について何?"]


def article(number: int) -> list[str]:
    return [
        f"記事{number}の本文。",
        f"記事{number}の続き。",
        f"通信社『記事{number}』。",
        f"読売新聞、2011年4月{number % 28 + 1}日。",
    ]


def fake_corpus(root: Path) -> Path:
    text = root / "text"
    text.mkdir(parents=True)
    jaquad = [line for number in range(900) for line in paragraph(number)]
    news = [line for number in range(700) for line in article(number)]
    tatoeba = [f"会話{number}です。" for number in range(HELD_OUT_TAIL_LINES["tatoeba.txt"] + BUFFER_LINES + 50)]
    shared = tatoeba[-1]  # a held-out sentence that another source has too
    (text / "jaquad.txt").write_text("\n".join(jaquad) + "\n", encoding="utf-8")
    (text / "wikinews_articles.txt").write_text("\n".join(news) + "\n", encoding="utf-8")
    (text / "wikinews_headlines.txt").write_text("\n".join(f"見出し{n}" for n in range(700)) + "\n", encoding="utf-8")
    (text / "tatoeba.txt").write_text("\n".join(tatoeba) + "\n", encoding="utf-8")
    (text / "jglue.txt").write_text(f"質問です。\n{shared}\n", encoding="utf-8")
    (root / "wac").mkdir()
    wac = [{"doc": "d", "text": text, "morphs": [[text, "ぶん"]], "bnst": [0]} for text in ("ウィキの文。", shared)]
    (root / "wac" / "train.jsonl").write_text(
        "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in wac), encoding="utf-8"
    )
    return root


def test_held_out_documents_start_at_a_document_start(tmp_path):
    corpus = fake_corpus(tmp_path)
    held = held_out(corpus)
    assert held.documents["jaquad.txt"][0].endswith("の一文目。")  # a paragraph, after the previous one's question
    assert held.documents["wikinews_articles.txt"][0].endswith("の本文。")  # an article, after its sources
    for name, lines in held.documents.items():
        assert HELD_OUT_TAIL_LINES[name] - 4 < len(lines) <= HELD_OUT_TAIL_LINES[name]
    lines = (corpus / "text" / "jaquad.txt").read_text(encoding="utf-8").splitlines()
    assert held_out_start("jaquad.txt", lines[: HELD_OUT_TAIL_LINES["jaquad.txt"]]) is None  # too short to hold out
    assert held_out_start("laws.txt", lines) is None


def test_nothing_learned_from_holds_a_held_out_or_buffer_line(tmp_path):
    corpus = fake_corpus(tmp_path)
    held = held_out(corpus)
    learned = {line for source in corpus_module.read_sources(corpus) for line in source.lines}
    assert not learned & held.lines
    assert "質問です。" in learned and "ウィキの文。" in learned
    for name, excluded in held.excluded.items():
        lines = (corpus / "text" / name).read_text(encoding="utf-8").splitlines()
        assert not learned & {lines[index] for index in excluded}, name
        if name in held.documents:
            assert len(excluded) == len(held.documents[name]) + BUFFER_LINES
    assert "wikinews_headlines.txt" in held.excluded  # the held-out articles' headlines, with a margin


def test_training_pairs_come_from_learnable_lines_only(tmp_path, monkeypatch):
    import training.data as data

    corpus = fake_corpus(tmp_path)
    seen: list[str] = []

    def recording(lines, source, continuous, rng, tagger):
        seen.extend(lines)
        return iter(())

    monkeypatch.setattr(data, "text_pairs", recording)
    monkeypatch.setattr(data, "make_tagger", lambda: None)
    monkeypatch.setattr(data, "wac_pairs", lambda lines, rng: (json.loads(line)["text"] for line in lines))
    wac = list(data.corpus_pairs(corpus))
    held = held_out(corpus)
    assert seen and not set(seen) & held.lines
    assert "質問です。" in seen
    assert wac == ["ウィキの文。"]


def test_the_weight_fit_refuses_the_held_out_set(tmp_path):
    from daemon.tools.lm_fit import collect_items

    (tmp_path / "phrases.jsonl").write_text("", encoding="utf-8")
    (tmp_path / HELD_OUT_MANIFEST).write_text("{}", encoding="utf-8")
    with pytest.raises(SystemExit, match="held-out"):
        collect_items(tmp_path, None, None)


def test_tuning_documents_are_whole_documents_from_the_middle_that_only_the_fit_leaves_out(tmp_path, monkeypatch):
    monkeypatch.setitem(corpus_module.TUNING_LINES, "jaquad.txt", 300)
    monkeypatch.setitem(corpus_module.TUNING_LINES, "tatoeba.txt", 20)
    corpus = fake_corpus(tmp_path)
    documents = corpus_module.tuning_documents(corpus)
    assert set(documents) == {"jaquad.txt", "tatoeba.txt"}
    jaquad, tatoeba = documents["jaquad.txt"], documents["tatoeba.txt"]
    assert jaquad[0].endswith("の一文目。") and jaquad[-1].endswith("について何?")  # whole paragraphs
    assert 300 <= len(jaquad) < 303 and len(tatoeba) == 20
    held = held_out(corpus)
    lines = (corpus / "text" / "jaquad.txt").read_text(encoding="utf-8").splitlines()
    assert corpus_module.tuning_range("jaquad.txt", lines).stop <= held.excluded["jaquad.txt"].start
    tuned = set(jaquad) | set(tatoeba)
    assert not tuned & held.lines
    learned = {line for source in corpus_module.read_sources(corpus) for line in source.lines}
    assert tuned <= learned  # what is shipped learns from them
    fitted = {line for source in corpus_module.read_sources(corpus, without_tuning=True) for line in source.lines}
    assert not tuned & fitted and learned - tuned == fitted


def test_the_weight_fit_on_the_tuning_set_refuses_models_that_learnt_from_it(tmp_path):
    from daemon.lm import BuildOptions, build
    from daemon.tools.lm_fit import _refuse_what_learnt_from_the_tuning_set

    lm = build(["今日は晴れ。"], BuildOptions(order=2, min_char_count=1, cutoffs=(1,)))
    _refuse_what_learnt_from_the_tuning_set(tmp_path, lm, None)  # not the tuning set: anything goes
    (tmp_path / corpus_module.TUNING_MANIFEST).write_text("{}", encoding="utf-8")
    with pytest.raises(SystemExit, match="--without-tuning"):
        _refuse_what_learnt_from_the_tuning_set(tmp_path, lm, None)
    lm.meta["without_tuning"] = True
    _refuse_what_learnt_from_the_tuning_set(tmp_path, lm, None)


SHARED_CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"  # CI lays ../shared beside the repo


@pytest.mark.dictionary
@pytest.mark.skipif(not (SHARED_CORPUS / "text").is_dir(), reason="needs ../shared/corpus")
def test_the_shipped_language_model_was_built_without_the_held_out_documents():
    from daemon.lm import PACKAGED_LM, CharNgramLM

    held = held_out(SHARED_CORPUS)
    assert len(held.lines) > 3000
    assert CharNgramLM.load(PACKAGED_LM).meta["held_out"] == {"sha256": held.sha256, "lines": len(held.lines)}


@pytest.mark.dictionary
@pytest.mark.skipif(not (SHARED_CORPUS / "text").is_dir(), reason="needs ../shared/corpus")
def test_the_shipped_word_vectors_were_built_without_the_held_out_documents():
    from daemon.lm import PACKAGED_WORD_VECTORS, WordVectors

    held = held_out(SHARED_CORPUS)
    meta = WordVectors.load(PACKAGED_WORD_VECTORS).meta
    assert meta["held_out"] == {"sha256": held.sha256, "lines": len(held.lines)}
    assert "anthy_train" not in meta["sources"]  # LGPL text: see daemon/lm/README.md


def test_the_tuning_set_is_made_of_the_tuning_documents_only(tmp_path, monkeypatch):
    from training import heldout

    monkeypatch.setitem(corpus_module.TUNING_LINES, "jaquad.txt", 300)
    monkeypatch.setitem(corpus_module.TUNING_LINES, "tatoeba.txt", 20)
    corpus = fake_corpus(tmp_path / "corpus")
    manifest = heldout.write(corpus, tmp_path / "tuning", tuning=True)
    assert (tmp_path / "tuning" / corpus_module.TUNING_MANIFEST).is_file()
    assert not (tmp_path / "tuning" / HELD_OUT_MANIFEST).exists()
    assert manifest["files"]["phrases.jsonl"]["items"] > 0
    documents = corpus_module.tuning_documents(corpus)
    tuned = "".join(line for lines in documents.values() for line in lines)
    for kind in ("phrases", "sentences"):
        items = [json.loads(line) for line in (tmp_path / "tuning" / f"{kind}.jsonl").read_text().splitlines()]
        assert items and all(item["id"].startswith(f"tuning-{kind}-") for item in items)
        assert all(item["expected"][0] in tuned for item in items)
