"""The value every rewriter yields."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Rewrite:
    """An extra conversion candidate derived from the reading or a base text.

    `annotation` is shown beside the candidate in the window (e.g. "[全]", "漢数字");
    `source` names the rewriter that produced it, for ranking and debugging.
    """

    text: str
    annotation: str
    source: str


def unique_by_text(rewrites: list[Rewrite]) -> list[Rewrite]:
    """Drop later rewrites whose text already appeared; the first one's annotation wins."""
    seen: set[str] = set()
    unique = []
    for rewrite in rewrites:
        if rewrite.text not in seen:
            seen.add(rewrite.text)
            unique.append(rewrite)
    return unique
