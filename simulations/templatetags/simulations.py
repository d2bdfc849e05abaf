from django import template

register = template.Library()


@register.filter
def lookup(values, key):
    """A submitted form value by a computed name (the form's field names are generated)."""
    if not values:
        return None
    return values.get(key)


@register.filter
def listed(values, key):
    return values.getlist(key) if hasattr(values, "getlist") else []
