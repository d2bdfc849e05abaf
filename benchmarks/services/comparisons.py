"""Saving comparisons: compute once, freeze everything, address it by a short slug."""

import hashlib
import json
import secrets

from django.db import IntegrityError, transaction

from benchmarks.comparisons.compute import compute
from benchmarks.comparisons.spec import ComparisonSpec
from benchmarks.models import Comparison

SLUG_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"  # no look-alikes (l/1, o/0) in pasted links


def content_hash(frozen: dict) -> str:
    canonical = json.dumps(
        {"spec": frozen["spec"], "runs": frozen["runs"], "cells": frozen["cells"]},
        sort_keys=True, separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def _new_slug() -> str:
    return "".join(secrets.choice(SLUG_ALPHABET) for _ in range(8))


def comparison_create(
    *, spec: ComparisonSpec, author=None, forked_from: Comparison | None = None
) -> Comparison:
    """Compute the comparison from today's runs and freeze it under a new slug, unless one with
    the same title and content (spec, runs and every cell: content_hash) is already frozen: then
    that one, so saving the same comparison twice gives one permalink, not two."""
    frozen = compute(spec)
    title = spec.title or f"{frozen['metric']['name']} by {spec.x}" + (
        f" and {spec.series}" if spec.series else "")
    digest = content_hash(frozen)
    existing = Comparison.objects.filter(content_hash=digest, title=title[:200]).order_by("pk")
    if existing.exists():
        return existing.first()
    for _ in range(5):
        try:
            with transaction.atomic():
                return Comparison.objects.create(
                    slug=_new_slug(), title=title[:200], spec=frozen["spec"],
                    run_ids=frozen["runs"], content_hash=digest, frozen=frozen,
                    author=author, forked_from=forked_from,
                )
        except IntegrityError:
            continue  # a slug collision: draw another
    raise RuntimeError("could not allocate a comparison slug")
