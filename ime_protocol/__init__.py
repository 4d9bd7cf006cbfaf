"""Tsuzuri's wire protocol between the daemon and its frontends (filled in by the daemon issue)."""
