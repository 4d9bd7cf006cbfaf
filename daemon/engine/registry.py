"""The model registry: a TOML data file naming the models Tsuzuri knows and how to prompt them."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from daemon.engine.prompts import FORMATS
from daemon.paths import user_data_dir

_REQUIRED = ("format", "file", "sha256", "source", "tokenizer", "context_size", "context_chars")


class RegistryError(ValueError):
    pass


@dataclass(frozen=True)
class ModelEntry:
    name: str
    format: str
    file: str
    sha256: str
    source: str
    tokenizer: str
    context_size: int
    context_chars: int
    licence: str = ""

    @property
    def hf_repo(self) -> str | None:
        return self.source[3:] if self.source.startswith("hf:") else None


def models_dir() -> Path:
    """Where downloaded models live ($XDG_DATA_HOME/tsuzuri/models)."""
    return user_data_dir() / "models"


def parse_registry(text: str) -> dict[str, ModelEntry]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RegistryError(f"model registry is not valid TOML: {exc}") from None
    entries = {}
    for name, table in data.get("models", {}).items():
        missing = [key for key in _REQUIRED if key not in table]
        if missing:
            raise RegistryError(f"model {name!r} lacks {', '.join(missing)}")
        if table["format"] not in FORMATS:
            raise RegistryError(f"model {name!r} has unknown format {table['format']!r}")
        if table["tokenizer"] != "gguf":
            raise RegistryError(f"model {name!r}: only the GGUF's own tokenizer is supported")
        entries[name] = ModelEntry(name=name, **{k: table[k] for k in _REQUIRED}, licence=table.get("licence", ""))
    return entries


def load_registry() -> dict[str, ModelEntry]:
    text = resources.files("daemon.engine").joinpath("models.toml").read_text(encoding="utf-8")
    return parse_registry(text)


def resolve_model(
    name_or_path: str, registry: dict[str, ModelEntry] | None = None, default_format: str = "jinen"
) -> tuple[Path, ModelEntry]:
    """A registry name or a local GGUF path → (file path, entry). Local paths use `default_format`."""
    registry = load_registry() if registry is None else registry
    entry = registry.get(name_or_path)
    if entry is not None:
        if entry.source == "embedded":
            path = Path(str(resources.files("daemon").joinpath("models", entry.file)))
        else:
            path = models_dir() / entry.file
        return path, entry
    path = Path(name_or_path).expanduser()
    if path.suffix != ".gguf" and not path.exists():
        raise RegistryError(f"{name_or_path!r} is neither a registered model ({', '.join(registry)}) nor a GGUF file")
    return path, ModelEntry(
        name=path.stem,
        format=default_format,
        file=path.name,
        sha256="",
        source="local",
        tokenizer="gguf",
        context_size=256,
        context_chars=FORMATS[default_format][1],
    )
