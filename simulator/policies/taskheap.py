"""Indexed binary min-heaps of queued tasks, for the policies that pick in O(log n).

Each queued task has a ``Node`` in a heap: ordered by (key, order), where the policy decides
what the key is (EEVDF: a deadline or a vruntime; 2.4: minus goodness()'s static part) and
order breaks ties (the number the task was queued with: the earliest queued first).  A node
knows its position, so a task leaving the queue leaves its heap at once (O(log n)), and the
compiled build compares two native ints per step where heapq compared tuples through Python's
rich comparison.  The pick then never depends on the heap's layout: (key, order) is unique.

A heap is a ``Heap``: its nodes are the first ``size`` items of a list that never shrinks.  The
queues are short and a task leaves its heap at every pick, so a plain list went between 0 and
1 (or 1 and 2) items at most picks, and CPython reallocates a list's item array each time its
length crosses such a capacity step (a 0-length one is freed, and allocated again by libc
on the next append); beyond ``size`` the list keeps stale references, never read.
"""

from collections.abc import Iterator
from typing import Final

from ..program import Task

NOT_QUEUED: Final = -1


class Node:
    """A task's place in one heap.  ``home`` says which heap it is in (the policy's choice of
    numbering) and ``twin`` is the task's node in a second heap, when the policy keeps one."""

    __slots__ = ("key", "order", "task", "pos", "home", "twin")

    def __init__(self, task: Task) -> None:
        self.key: int = 0
        self.order: int = 0
        self.task: Task = task
        self.pos: int = NOT_QUEUED  # its index in its heap, NOT_QUEUED when in none
        self.home: int = 0
        self.twin: Node | None = None


class Heap:
    """A binary min-heap of nodes: ``nodes[:size]`` (``nodes`` never shrinks)."""

    __slots__ = ("nodes", "size")

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.size: int = 0

    def __len__(self) -> int:
        return self.size

    def __bool__(self) -> bool:
        return self.size > 0

    def __getitem__(self, pos: int) -> Node:
        """The node at ``pos`` (0: the top), which must be in the heap."""
        if not 0 <= pos < self.size:
            raise IndexError("heap position out of range")
        return self.nodes[pos]

    def __iter__(self) -> Iterator[Node]:
        """The nodes in heap order (a copy: the heap may change while it is walked)."""
        return iter(self.nodes[:self.size])

    def live(self) -> list[Node]:
        """The nodes, in heap order, as a new list."""
        return self.nodes[:self.size]

    def clear(self) -> None:
        self.size = 0  # the list kept, as after removals


def sift_up(nodes: list[Node], node: Node, pos: int) -> None:
    key = node.key
    order = node.order
    while pos > 0:
        parent_pos = (pos - 1) >> 1
        parent = nodes[parent_pos]
        if key < parent.key or (key == parent.key and order < parent.order):
            nodes[pos] = parent
            parent.pos = pos
            pos = parent_pos
        else:
            break
    nodes[pos] = node
    node.pos = pos


def sift_down(nodes: list[Node], size: int, node: Node, pos: int) -> None:
    """Sift ``node`` down from ``pos`` in the heap ``nodes[:size]``."""
    key = node.key
    order = node.order
    while True:
        child_pos = 2 * pos + 1
        if child_pos >= size:
            break
        child = nodes[child_pos]
        right_pos = child_pos + 1
        if right_pos < size:
            right = nodes[right_pos]
            if right.key < child.key or (right.key == child.key and right.order < child.order):
                child = right
                child_pos = right_pos
        if child.key < key or (child.key == key and child.order < order):
            nodes[pos] = child
            child.pos = pos
            pos = child_pos
        else:
            break
    nodes[pos] = node
    node.pos = pos


def refill_top(nodes: list[Node], size: int, node: Node) -> None:
    """Put ``node`` (the heap's former last leaf) in place of the removed top of the heap
    ``nodes[:size]``.  As heapq's pop: the hole walks down to a leaf along the smaller
    children, one comparison a level, and ``node`` sifts up from there, rarely far, a leaf
    being large; sift_down would compare it with every child on the way as well.  The same
    nodes end up in the heap either way, and no pick depends on their layout ((key, order) is
    unique)."""
    pos = 0
    child_pos = 1
    while child_pos < size:
        child = nodes[child_pos]
        right_pos = child_pos + 1
        if right_pos < size:
            right = nodes[right_pos]
            if right.key < child.key or (right.key == child.key and right.order < child.order):
                child = right
                child_pos = right_pos
        nodes[pos] = child
        child.pos = pos
        pos = child_pos
        child_pos = 2 * pos + 1
    sift_up(nodes, node, pos)


def push(heap: Heap, node: Node) -> None:
    pos = heap.size
    nodes = heap.nodes
    if pos == len(nodes):
        nodes.append(node)  # else a stale slot, which sift_up() overwrites
    heap.size = pos + 1
    sift_up(nodes, node, pos)


def remove(heap: Heap, node: Node) -> None:
    """Take ``node`` out of ``heap`` wherever it is in it."""
    pos = node.pos
    node.pos = NOT_QUEUED
    nodes = heap.nodes
    size = heap.size - 1
    heap.size = size
    last = nodes[size]  # its slot is stale from now on
    if last is not node:
        if pos == 0:  # the pick's usual case
            refill_top(nodes, size, last)
            return
        sift_up(nodes, last, pos)
        if last.pos == pos:
            sift_down(nodes, size, last, pos)
