"""Tsuzuri daemon: all input-method logic (composer, converter, engine, dictionary)."""
