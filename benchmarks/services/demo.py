"""The account that owns what the demo creates where an owner is required (a bisection, a
simulation job): a fixed name that nobody can sign in as (inactive, no usable password)."""

from django.contrib.auth import get_user_model

DEMO_USERNAME = "schedbench-demo"


def demo_owner():
    """The demo's account, created on first use. None when a real account (one with a
    password) already has the name: the demo never hands its work to somebody else."""
    user, created = get_user_model().objects.get_or_create(
        username=DEMO_USERNAME, defaults={"is_active": False})
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    elif user.has_usable_password():
        return None
    return user
