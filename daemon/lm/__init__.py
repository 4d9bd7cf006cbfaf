"""The character n-gram language models that rescore the dictionary's top candidates (see README.md here)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from daemon.lm.ngram import BuildOptions, CharNgramLM, build
from daemon.userdata.storage import user_data_dir
from daemon.lm.rescoring import (FEATURE_NAMES, WEIGHTS_WITH_MODEL, WEIGHTS_WITHOUT_MODEL, Features, ReadingLength,
                                 Weights, floored_model_scores, likely_and_unlikely, model_can_change_the_choice,
                                 model_has_a_say, rescored_order, weights_for)

log = logging.getLogger(__name__)

LM_FILE_NAME = "lm.bin"
PHRASE_LM_FILE_NAME = "lm-phrases.bin"
# Shipped in the package (see README.md here for their builds and licences).
PACKAGED_LM = Path(__file__).resolve().parent.parent / "models" / "tsuzuri-lm.bin"
PACKAGED_PHRASE_LM = PACKAGED_LM.with_name("tsuzuri-lm-phrases.bin")


@dataclass(frozen=True)
class LanguageModels:
    """The language model each reading length is scored with. Sentences take the one built with every source
    capped: the lattice search rebuilds their paths and needs its balance of registers (the model of all the
    text for every length cost wac_sentences 2.9 points). Phrases take the one built from all the text, which
    has seen more words: 4-fold CV over the suite, anthy_dev +0.4, wac_dev +0.6, Mozc's set +0.4 points."""

    phrase: CharNgramLM
    sentence: CharNgramLM

    @classmethod
    def one(cls, lm: CharNgramLM) -> LanguageModels:
        """One model for every length."""
        return cls(phrase=lm, sentence=lm)

    def for_reading(self, reading: str) -> CharNgramLM:
        return self.phrase if ReadingLength.of(reading) is ReadingLength.PHRASE else self.sentence


def user_lm_path() -> Path:
    """Where a user's own `tsuzuri-lm build` goes to take the place of the packaged models."""
    return user_data_dir() / LM_FILE_NAME


def default_lm_paths() -> tuple[Path, Path | None] | None:
    """The sentence and phrase models: the user's own build if there is one (its phrase model beside it, else
    the same file for both), else the packaged pair, else None."""
    user = user_lm_path()
    if user.is_file():
        phrases = user.with_name(PHRASE_LM_FILE_NAME)
        return user, phrases if phrases.is_file() else None
    if PACKAGED_LM.is_file():
        return PACKAGED_LM, PACKAGED_PHRASE_LM if PACKAGED_PHRASE_LM.is_file() else None
    return None


def load_language_models(path: Path | None = None, phrase_path: Path | None = None) -> LanguageModels | None:
    """The models at `path` (sentences; phrases too unless `phrase_path` is given) or the default ones; None
    if there are none (the converter ranks as before). A broken file is logged and skipped."""
    if path is None:
        found = default_lm_paths()
        if found is None:
            return None
        path, phrase_path = found
    sentence = _load(path)
    if sentence is None:
        return None
    phrase = _load(phrase_path) if phrase_path is not None else None
    return LanguageModels(phrase=phrase or sentence, sentence=sentence)


def _load(path: Path) -> CharNgramLM | None:
    if not path.is_file():
        return None
    try:
        return CharNgramLM.load(path)
    except (OSError, ValueError, KeyError) as error:
        log.warning("language model %s not loaded: %s", path, error)
        return None


__all__ = ["BuildOptions", "CharNgramLM", "FEATURE_NAMES", "Features", "LM_FILE_NAME", "LanguageModels",
           "PHRASE_LM_FILE_NAME", "ReadingLength", "WEIGHTS_WITHOUT_MODEL", "WEIGHTS_WITH_MODEL", "Weights", "build",
           "default_lm_paths", "floored_model_scores", "likely_and_unlikely", "load_language_models",
           "model_can_change_the_choice", "model_has_a_say", "rescored_order", "user_lm_path", "weights_for"]
