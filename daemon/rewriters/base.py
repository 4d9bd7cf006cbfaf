"""The value every rewriter yields."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Rewrite:
    """An extra conversion candidate derived from the reading or a base surface.

    `annotation` is shown beside the candidate in the window (e.g. "[全]", "漢数字");
    `source` names the rewriter that produced it, for ranking and debugging.
    """

    surface: str
    annotation: str
    source: str


def unique_by_surface(rewrites: list[Rewrite]) -> list[Rewrite]:
    """Drop later rewrites whose surface already appeared; the first one's annotation wins."""
    seen: set[str] = set()
    unique = []
    for rewrite in rewrites:
        if rewrite.surface not in seen:
            seen.add(rewrite.surface)
            unique.append(rewrite)
    return unique
