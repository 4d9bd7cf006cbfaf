"""The character n-gram language model that rescores the dictionary's top candidates (see README.md here)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from daemon.lm.ngram import BuildOptions, CharNgramLM, build
from daemon.lm.word_vectors import WordVectors
from daemon.paths import user_data_dir
from daemon.lm.rescoring import (
    FEATURE_NAMES,
    WEIGHTS_WITH_MODEL,
    WEIGHTS_WITHOUT_MODEL,
    Features,
    ReadingLength,
    Weights,
    context_hits,
    digits_not_as_typed,
    floored_model_scores,
    likely_and_unlikely,
    model_can_change_the_choice,
    model_has_a_say,
    rescored_order,
    weights_for,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

LM_FILE_NAME = "lm.bin"
# Shipped in the package (see README.md here for its build and licence).
PACKAGED_LM = Path(__file__).resolve().parent.parent / "models" / "tsuzuri-lm.bin"
PACKAGED_WORD_VECTORS = PACKAGED_LM.with_name("tsuzuri-words.bin")


def user_lm_path() -> Path:
    """Where a user's own `tsuzuri-lm build` goes to take the place of the packaged model."""
    return user_data_dir() / LM_FILE_NAME


def default_lm_path() -> Path | None:
    """The user's own build if there is one, else the packaged model, else None."""
    for path in (user_lm_path(), PACKAGED_LM):
        if path.is_file():
            return path
    return None


def load_language_model(path: Path | None = None) -> CharNgramLM | None:
    """The model at `path`, or the default one; None if there is none (the converter ranks as before). A
    broken file is logged and skipped."""
    path = path or default_lm_path()
    return _loaded(path, CharNgramLM.load, "language model") if path is not None else None


def load_word_vectors(path: Path = PACKAGED_WORD_VECTORS) -> WordVectors | None:
    """The word vectors shipped (or at `path`); None if missing or broken (the rescoring goes on without)."""
    return _loaded(path, WordVectors.load, "word vectors")


def _loaded(path: Path, load: Callable[[Path], T], what: str) -> T | None:
    if not path.is_file():
        return None
    try:
        return load(path)
    except (OSError, ValueError, KeyError) as error:
        log.warning("%s %s not loaded: %s", what, path, error)
        return None


__all__ = [
    "BuildOptions",
    "CharNgramLM",
    "FEATURE_NAMES",
    "Features",
    "LM_FILE_NAME",
    "ReadingLength",
    "WEIGHTS_WITHOUT_MODEL",
    "WEIGHTS_WITH_MODEL",
    "Weights",
    "WordVectors",
    "build",
    "context_hits",
    "default_lm_path",
    "digits_not_as_typed",
    "floored_model_scores",
    "likely_and_unlikely",
    "load_language_model",
    "load_word_vectors",
    "model_can_change_the_choice",
    "model_has_a_say",
    "rescored_order",
    "user_lm_path",
    "weights_for",
]
