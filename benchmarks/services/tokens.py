"""API tokens: random keys shown once, stored only as SHA-256, revocable."""

import hashlib
import secrets

from django.utils import timezone

from benchmarks.models import ApiToken

TOKEN_PREFIX = "sbt_"


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def token_create(*, user, name: str = "") -> tuple[ApiToken, str]:
    """Return the stored token and the clear key, which is never stored or shown again."""
    key = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user, name=name.strip()[:100], prefix=key[:12], key_hash=_hash(key)
    )
    return token, key


def token_revoke(*, token: ApiToken) -> None:
    if token.revoked is None:
        token.revoked = timezone.now()
        token.save(update_fields=["revoked"])


def token_user(*, key: str):
    """The active user owning this key, or None. Marks the token as used."""
    token = (
        ApiToken.objects.select_related("user")
        .filter(key_hash=_hash(key), revoked__isnull=True)
        .first()
    )
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used is None or (now - token.last_used).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used=now)
    return token.user
