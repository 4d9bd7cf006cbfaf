"""The parts the daemon is made of, built once from its configuration (the composition root): the system
dictionary, the character language model, the neural engine, the user's learning history and dictionary, and
the converter over them. The D-Bus service holds this object and asks it, never the converter's insides.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from daemon.config import Config
from daemon.converter import Converter
from daemon.dictionary import SystemDictionary, system_dictionary, system_reader
from daemon.engine import Engine, EngineStatus, ModelState
from daemon.lm import load_language_model, load_word_vectors
from daemon.stateless_worker import ConverterSettings, StatelessWorker
from daemon.userdata.learning import LearningHistory
from daemon.userdata.storage import LineFileStore
from daemon.userdata.user_dictionary import UserDictionary

log = logging.getLogger(__name__)

# How often the user's data is saved when it changed (learning is journaled meanwhile: nothing is lost).
LEARNING_SAVE_SECONDS = 30.0
MODEL_SWITCHED_OFF = "the neural model is switched off (conversion.neural_model)"


@dataclass
class DaemonParts:
    dictionary: SystemDictionary | None
    engine: Engine
    learning: LearningHistory | None
    user_dictionary: UserDictionary | None
    converter: Converter
    stateless: StatelessWorker  # root Convert's conversions, in a process of their own

    @classmethod
    def build(cls, config: Config) -> DaemonParts:
        """The parts for `config`, none of them loaded yet: the model loads when the server asks
        (Engine.load), the dictionary on warm_up or the first conversion."""
        dictionary = system_dictionary()
        engine = Engine(n_threads=config.threads, beam_width=config.candidates.beam_width)
        learning, user_dictionary = LearningHistory(), UserDictionary()
        converter = Converter(
            dictionary=dictionary,
            engine=engine,
            user_dictionary=user_dictionary,
            learning=learning,
            model_candidates=config.candidates.model_candidates,
            language_model=load_language_model(),
            spelling=config.conversion.spelling,
            word_vectors=load_word_vectors(),
        )
        return cls(dictionary, engine, learning, user_dictionary, converter, StatelessWorker())

    @property
    def stores(self) -> list[LineFileStore]:
        """The user's data the daemon keeps."""
        return [store for store in (self.learning, self.user_dictionary) if store is not None]

    def status(self) -> EngineStatus:
        """The model's status, its reason followed by why the user's choices or words may not be kept."""
        status = self.engine.status
        problems = [store.keeping_problem for store in self.stores]
        return EngineStatus(status.state, status.model, "; ".join(filter(None, [status.reason, *problems])))

    def converter_settings(self) -> ConverterSettings:
        """The settings root Convert's process is to convert with: the daemon's neural model, if it is ready, and
        the daemon's spelling policy."""
        status = self.engine.status
        model = status.model if status.state is ModelState.READY else None
        return ConverterSettings(
            model,
            self.engine.n_threads,
            self.engine.beam_width,
            self.converter.model_candidates,
            self.converter.spelling,
        )

    def configure(self, config: Config) -> None:
        """The conversion settings of a reloaded configuration (the model itself is the server's to switch)."""
        self.converter.model_candidates = config.candidates.model_candidates
        self.converter.spelling = config.conversion.spelling
        self.engine.configure(config.threads, config.candidates.beam_width)

    def warm_up(self) -> None:
        """Opens the dictionary and builds the rewriters' indexes and reconversion's readings (~3 s) now, not on
        the first key; says what was wrong with the user's files."""
        self.converter.candidates("じゅんび")
        for store in self.stores:
            if not store.load_report.clean:
                log.warning("user data: %s", store.load_report.summary())
        if self.dictionary is not None:
            system_reader().load()

    def save_userdata(self) -> None:
        """Saves the user's data; a failure is logged, and the next save tries again (learning is journaled
        meanwhile, so nothing committed is lost)."""
        try:
            self.converter.save_userdata()
        except OSError as error:
            log.error("cannot save user data: %s", error)
