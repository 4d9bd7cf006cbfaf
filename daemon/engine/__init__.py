"""Neural kana-kanji conversion on llama.cpp (no D-Bus, no key handling)."""

from daemon.engine.engine import (Candidate, ConversionSession, Engine, EngineStatus, EngineUnavailable, ModelInfo,
                                  ModelState)

__all__ = ["Candidate", "ConversionSession", "Engine", "EngineStatus", "EngineUnavailable", "ModelInfo", "ModelState"]
