"""Indexed binary min-heaps of queued tasks, for the policies that pick in O(log n).

Each queued task has a ``Node`` in a heap: ordered by (key, order), where the policy decides
what the key is (EEVDF: a deadline or a vruntime; 2.4: minus goodness()'s static part) and
order breaks ties (the number the task was queued with: the earliest queued first).  A node
knows its position, so a task leaving the queue leaves its heap at once (O(log n)), and the
compiled build compares two native ints per step where heapq compared tuples through Python's
rich comparison.  The pick then never depends on the heap's layout: (key, order) is unique.
"""

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


def sift_up(heap: list[Node], node: Node, pos: int) -> None:
    key = node.key
    order = node.order
    while pos > 0:
        parent_pos = (pos - 1) >> 1
        parent = heap[parent_pos]
        if key < parent.key or (key == parent.key and order < parent.order):
            heap[pos] = parent
            parent.pos = pos
            pos = parent_pos
        else:
            break
    heap[pos] = node
    node.pos = pos


def sift_down(heap: list[Node], node: Node, pos: int) -> None:
    size = len(heap)
    key = node.key
    order = node.order
    while True:
        child_pos = 2 * pos + 1
        if child_pos >= size:
            break
        child = heap[child_pos]
        right_pos = child_pos + 1
        if right_pos < size:
            right = heap[right_pos]
            if right.key < child.key or (right.key == child.key and right.order < child.order):
                child = right
                child_pos = right_pos
        if child.key < key or (child.key == key and child.order < order):
            heap[pos] = child
            child.pos = pos
            pos = child_pos
        else:
            break
    heap[pos] = node
    node.pos = pos


def refill_top(heap: list[Node], node: Node) -> None:
    """Put ``node`` (the heap's former last leaf) in place of the removed top.  As heapq's
    pop: the hole walks down to a leaf along the smaller children, one comparison a level,
    and ``node`` sifts up from there, rarely far, a leaf being large; sift_down would compare
    it with every child on the way as well.  The same nodes end up in the heap either way, and
    no pick depends on their layout ((key, order) is unique)."""
    size = len(heap)
    pos = 0
    child_pos = 1
    while child_pos < size:
        child = heap[child_pos]
        right_pos = child_pos + 1
        if right_pos < size:
            right = heap[right_pos]
            if right.key < child.key or (right.key == child.key and right.order < child.order):
                child = right
                child_pos = right_pos
        heap[pos] = child
        child.pos = pos
        pos = child_pos
        child_pos = 2 * pos + 1
    sift_up(heap, node, pos)


def push(heap: list[Node], node: Node) -> None:
    pos = len(heap)
    heap.append(node)
    sift_up(heap, node, pos)


def remove(heap: list[Node], node: Node) -> None:
    """Take ``node`` out of ``heap`` wherever it is in it."""
    pos = node.pos
    node.pos = NOT_QUEUED
    last = heap.pop()
    if last is not node:
        if pos == 0:  # the pick's usual case
            refill_top(heap, last)
            return
        sift_up(heap, last, pos)
        if last.pos == pos:
            sift_down(heap, last, pos)
