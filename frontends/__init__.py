"""Thin frontend shims (IBus, fcitx5) that render what the daemon sends."""
