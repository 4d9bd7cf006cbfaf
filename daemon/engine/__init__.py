"""Neural kana-kanji conversion on llama.cpp (no D-Bus, no key handling).

The names below load on first use, so that the pure modules of this package (prompts) import where
llama.cpp is not installed: the training machine imports the prompt builders and nothing else."""

from importlib import import_module

__all__ = ["Engine", "EngineStatus", "EngineUnavailable", "ModelCandidate", "ModelInfo", "ModelSession", "ModelState"]


def __getattr__(name: str):
    if name in __all__:
        return getattr(import_module("daemon.engine.engine"), name)
    raise AttributeError(f"module 'daemon.engine' has no attribute {name!r}")
