"""Neural kana-kanji conversion on llama.cpp (no D-Bus, no key handling)."""

from daemon.engine.engine import (Engine, EngineStatus, EngineUnavailable, ModelCandidate, ModelInfo, ModelSession,
                                  ModelState)

__all__ = ["Engine", "EngineStatus", "EngineUnavailable", "ModelCandidate", "ModelInfo", "ModelSession",
           "ModelState"]
