"""Where Tsuzuri keeps things for the user: the XDG base directories, looked up in one place for the
configuration, the user's data (dictionary, learning, models, language model) and whatever else needs them."""

import os
from pathlib import Path

APP_DIRECTORY = "tsuzuri"


def xdg_base_dir(variable: str, fallback: str) -> Path:
    """An XDG base directory: $variable, or ~/fallback when it is unset or relative (the spec
    says to ignore a relative path). The one lookup of the config, data and model folders."""
    value = os.environ.get(variable, "")
    return Path(value) if os.path.isabs(value) else Path.home() / fallback


def user_data_dir() -> Path:
    """$XDG_DATA_HOME/tsuzuri, or ~/.local/share/tsuzuri (not created here)."""
    return xdg_base_dir("XDG_DATA_HOME", ".local/share") / APP_DIRECTORY
