"""Per-user data: the user dictionary and the learning history, stored under XDG_DATA_HOME."""
