"""`{% follow_button machine=machine %}` / `{% follow_button benchmark=benchmark %}`: the follow
toggle for pages of other apps (one query, nothing for anonymous visitors)."""

from django import template

from ..models import Follow

register = template.Library()


@register.inclusion_tag("regressions/_follow_button.html", takes_context=True)
def follow_button(context, benchmark=None, machine=None):
    request = context.get("request")
    user = getattr(request, "user", None)
    target = {"benchmark": benchmark} if benchmark is not None else {"machine": machine}
    signed_in = bool(user and user.is_authenticated)
    following = signed_in and Follow.objects.filter(user=user, **target).exists()
    return {"signed_in": signed_in, "following": following, "benchmark": benchmark,
            "machine": machine, "next": request.get_full_path() if request else "/",
            "csrf_token": context.get("csrf_token")}
