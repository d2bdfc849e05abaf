"""Where each post sits in its thread: parent, position and depth, from the mail headers alone.

A parent is the In-Reply-To message when the thread has it, else the nearest References entry
it has; a post whose parents are all missing becomes another top-level post (missing parents are
tolerated). Siblings are ordered by date. Pure Python, so it is cheap to test exhaustively.
"""

from dataclasses import dataclass
from datetime import datetime


@dataclass
class Node:
    key: int  # the post's primary key (or any unique key)
    message_id: str
    in_reply_to: str
    references: list[str]
    date: datetime


@dataclass(frozen=True)
class Place:
    parent: int | None
    order: int
    depth: int


def _parents(nodes: list[Node]) -> dict[int, int | None]:
    by_message_id = {node.message_id: node.key for node in nodes}
    parents: dict[int, int | None] = {}
    for node in nodes:
        candidates = [node.in_reply_to, *reversed(node.references)]
        parent = next(
            (by_message_id[mid] for mid in candidates
             if mid and mid in by_message_id and by_message_id[mid] != node.key),
            None,
        )
        parents[node.key] = parent
    return _break_cycles(parents)


def _break_cycles(parents: dict[int, int | None]) -> dict[int, int | None]:
    """Forged or looping headers (A replies to B replies to A) must not hide posts."""
    for start in parents:
        seen = {start}
        current = parents[start]
        while current is not None:
            if current in seen:
                parents[start] = None
                break
            seen.add(current)
            current = parents[current]
    return parents


def thread_layout(nodes: list[Node]) -> dict[int, Place]:
    """Depth-first order of the reply tree; roots and siblings by (date, key)."""
    parents = _parents(nodes)
    children: dict[int | None, list[Node]] = {}
    for node in sorted(nodes, key=lambda n: (n.date, n.key)):
        children.setdefault(parents[node.key], []).append(node)
    places: dict[int, Place] = {}
    stack = [(node, 0) for node in reversed(children.get(None, []))]
    while stack:
        node, depth = stack.pop()
        places[node.key] = Place(parents[node.key], len(places), depth)
        stack.extend((child, depth + 1) for child in reversed(children.get(node.key, [])))
    return places
