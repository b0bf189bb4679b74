"""A Jupyter server extension for the instructor's server: no page it serves runs a student's script.

A student's notebook, outputs and files reach the instructor's browser through the same origin as the
instructor's own server (and, on the hub, the hub's): a script among them would act as the instructor (read the
hidden tests, change grades, start kernels). Each response gets a Content-Security-Policy by what it shows:

- formgrader's manual grading page (``formgrader/submissions/<id>``), which draws a student's notebook: scripts
  from the server's own address only (the page's template, templates/formgrade/, has no inline script), no
  frame, no plugin, no form, no ``<base>``, no request to any other address;
- formgrader's other pages (lists drawn by formgrader's own scripts from its JSON API): the same, plus the inline
  scripts and handlers of the page as the server rendered it, each allowed by its hash;
- a file served from the course folder as it is (``files/``, ``view/``, ``nbconvert/``, a submission's files under
  ``formgrader/submissions/<id>/``): a sandbox with no script at all, which also takes the page out of the
  server's origin (Jupyter's own policy there is ``sandbox allow-scripts``, which still lets a script send
  requests anywhere); and markup (HTML, SVG, XML) is sent as plain text, since even without script a page can
  send the browser elsewhere (a meta refresh, which the sandbox allows). The instructor reads such a file's source
  in the browser, or opens it in JupyterLab, whose HTML viewer shows it sandboxed.

These responses are never stored by the browser (``Cache-Control: no-store``, no ETag): a page revalidated with a
304 would take that reply's policy, computed without the page (tests/browser/test_classroom_hub.py opens
formgrader's list a third time). JupyterLab's pages keep Jupyter's policy: Lab sanitises an untrusted notebook
itself. The course's static files
(the grading page's script and MathJax settings) are served under ``tfcourse/static/``.
"""

import base64
import hashlib
import re
from collections.abc import Callable
from pathlib import Path

from jupyter_server.serverapp import ServerApp
from jupyter_server.utils import url_path_join
from tornado import web
from tornado.httputil import HTTPHeaders, HTTPServerRequest

STATIC = Path(__file__).resolve().parent / "static"
POLICY = "Content-Security-Policy"
# What every policy here adds to Jupyter's own (which names frame-ancestors and report-uri).
COMMON = ("default-src 'none'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:",
          "font-src 'self' data:", "base-uri 'none'", "object-src 'none'")
SCRIPTED = (*COMMON, "connect-src 'self'", "form-action 'self'", "frame-src 'none'", "worker-src 'none'")
SANDBOXED = ("sandbox", *COMMON, "media-src 'self' data:", "form-action 'none'")
MARKUP = ("text/html", "image/svg+xml", "application/xhtml+xml", "text/xml", "application/xml")
INLINE_SCRIPT = re.compile(r"<script\b(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.DOTALL | re.IGNORECASE)
INLINE_HANDLER = re.compile(r"""\son[a-z]+\s*=\s*("([^"]*)"|'([^']*)')""", re.IGNORECASE)


def source_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def inline_hashes(page: str) -> list[str]:
    """The hashes that let a page's own inline scripts and event handlers run (and nothing else inline)."""
    scripts = {source_hash(body) for body in INLINE_SCRIPT.findall(page)}
    handlers = {source_hash(match[1] or match[2]) for match in INLINE_HANDLER.findall(page)}
    return sorted(scripts) + (["'unsafe-hashes'", *sorted(handlers)] if handlers else [])


def policy_for(path: str, base_url: str, page: str | None) -> tuple[str, ...] | None:
    """The directives for a response to ``path`` (``page``: its whole HTML body, when it is one); None: Jupyter's."""
    if not path.startswith(base_url):
        return None
    route = path[len(base_url):].lstrip("/")
    if route.startswith(("files/", "view/", "nbconvert/")):
        return SANDBOXED
    if not route.startswith("formgrader/"):
        return None
    parts = route.rstrip("/").split("/")
    if parts[1:2] == ["submissions"] and len(parts) > 3 and parts[2] != "components":
        return SANDBOXED  # a file of the submission (SubmissionFilesHandler), or prev/next (a redirect)
    if parts[1:2] == ["submissions"] and len(parts) == 3:
        return (*SCRIPTED, "script-src 'self'")
    extra = inline_hashes(page) if page is not None else []
    return (*SCRIPTED, " ".join(["script-src 'self'", *extra]))


def policy_transform(base_url: str) -> type[web.OutputTransform]:
    """A tornado output transform that sets each response's policy under ``base_url`` (see :func:`policy_for`)."""

    class PagePolicy(web.OutputTransform):
        def __init__(self, request: HTTPServerRequest) -> None:
            super().__init__(request)
            self.path = request.path

        def transform_first_chunk(
            self, status_code: int, headers: HTTPHeaders, chunk: bytes, finishing: bool
        ) -> tuple[int, HTTPHeaders, bytes]:
            html = headers.get("Content-Type", "").startswith("text/html")
            page = chunk.decode(errors="replace") if html and finishing else None
            directives = policy_for(self.path, base_url, page)
            if directives is not None:
                jupyters = headers.get(POLICY, "")
                headers[POLICY] = "; ".join(filter(None, [jupyters, *directives]))
                # Never revalidated: a 304 carries no body to hash, and its policy would replace the cached page's.
                headers.pop("Etag", None)
                headers["Cache-Control"] = "no-store"
            if directives is SANDBOXED and headers.get("Content-Type", "").startswith(MARKUP):
                headers["Content-Type"] = "text/plain; charset=utf-8"
                headers["X-Content-Type-Options"] = "nosniff"
            return status_code, headers, chunk

    return PagePolicy


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "autograder.course.page_policy"}]


def _load_jupyter_server_extension(serverapp: ServerApp) -> None:
    base_url = serverapp.base_url
    transforms: list[Callable] = serverapp.web_app.transforms
    transforms.insert(0, policy_transform(base_url))  # before any compression, on the page as rendered
    static = (url_path_join(base_url, "tfcourse/static/(.*)"), web.StaticFileHandler, {"path": str(STATIC)})
    serverapp.web_app.add_handlers(".*$", [static])
    serverapp.log.info("tfcourse: every formgrader page and course file is served with a script policy")
