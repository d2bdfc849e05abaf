"""GET /api/v1/search/: the site search as JSON, grouped by type."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.decorators import api_view, permission_classes
from rest_framework.permissions import AllowAny
from rest_framework.response import Response

from benchmarks.api.serializers import SearchResultSerializer
from benchmarks.search import engine as site_search


def _group_dict(request, q: str, group: site_search.Group) -> dict:
    def absolute(path: str) -> str:
        return request.build_absolute_uri(path)

    following = None
    if group.has_next:
        following = absolute(f"{request.path}?"
                             f"{site_search.group_query(q, group.kind, group.page + 1)}")
    return {"type": group.kind, "label": group.label, "page": group.page, "next": following,
            "results": [{"type": hit.kind, "id": str(hit.id), "title": hit.title,
                         "detail": hit.detail, "url": absolute(hit.url)} for hit in group.hits]}


@extend_schema(
    parameters=[
        OpenApiParameter("q", str, required=True, description="kernel (`2.6.22.17`), benchmark, "
                         "label, tag, subject, author, message id (`<abc@host>`), machine..."),
        OpenApiParameter("type", str, enum=list(site_search.groups()),
                         description="one group only, paginated"),
        OpenApiParameter("page", int, description="page of the group given by `type`"),
    ],
    responses={200: SearchResultSerializer},
)
@api_view(["GET"])
@permission_classes([AllowAny])
def search(request):
    """Runs (withdrawn ones left out), comparisons, threads, messages and machines matching
    `q`: the first few of each group, or one group's page with `type` and `page`."""
    q = site_search.clean_query(request.query_params.get("q"))
    kind = site_search.clean_kind(request.query_params.get("type"))
    page = site_search.clean_page(request.query_params.get("page")) if kind else 1
    groups = site_search.search(q, kind=kind, page=page)
    body = {"q": q, "groups": [_group_dict(request, q, group) for group in groups]}
    return Response(SearchResultSerializer(body).data)
