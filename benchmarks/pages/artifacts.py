"""The raw input a run was parsed from: viewed as plain text, or downloaded verbatim."""

from django.http import FileResponse, Http404

from benchmarks.models import Artifact


def artifact_visible(artifact: Artifact, user) -> bool:
    """Raw input is as public as the runs made from it. One whose runs are all gone (withdrawn,
    or never made: a dry upload's twin) stays with its uploader and staff. A withdrawn run no
    longer shows anyone its input, even though the run itself stays (frozen comparisons)."""
    if user.is_authenticated and (user.is_staff or artifact.uploader_id == user.pk):
        return True
    return artifact.runs.visible().exists()


def _artifact_for(request, pk: int) -> Artifact:
    artifact = Artifact.objects.filter(pk=pk).exclude(file="").first()
    if artifact is None or not artifact_visible(artifact, request.user):
        raise Http404("no such raw input")
    return artifact


def _respond(artifact: Artifact, *, as_attachment: bool) -> FileResponse:
    try:
        stream = artifact.file.open("rb")
    except FileNotFoundError:
        raise Http404("the stored file is missing") from None
    filename = artifact.filename or f"artifact-{artifact.pk}.txt"
    content_type = "application/octet-stream" if as_attachment else "text/plain; charset=utf-8"
    response = FileResponse(stream, as_attachment=as_attachment, filename=filename,
                            content_type=content_type)
    # Shown as text whatever it contains: never sniffed as HTML, never able to run script.
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    response["X-Artifact-SHA256"] = artifact.sha256
    return response


def artifact_raw(request, pk: int):
    return _respond(_artifact_for(request, pk), as_attachment=False)


def artifact_download(request, pk: int):
    return _respond(_artifact_for(request, pk), as_attachment=True)
