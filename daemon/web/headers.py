"""The headers every answer of the pit display and the dealer console carries: a
Content-Security-Policy that lets a page load nothing but the server's own files, scripts
and stream (no inline script, no framing), no type sniffing, no referrer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from aiohttp.typedefs import Middleware


def security_headers(*, form_action: str, cache_control: str | None = None) -> Middleware:
    """The middleware that sets them; `form_action`: where the pages' forms may post
    (`'none'`: the page has no form); `cache_control`: on every answer, when given."""
    headers = {
        "Content-Security-Policy": (
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
            f"connect-src 'self'; base-uri 'self'; form-action {form_action}; "
            "frame-ancestors 'none'"
        ),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }
    if cache_control is not None:
        headers["Cache-Control"] = cache_control

    @web.middleware
    async def with_headers(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        try:
            response = await handler(request)
        except web.HTTPException as exc:
            exc.headers.update(headers)
            raise
        if not response.prepared:  # a stream has sent its headers already: they are set there
            response.headers.update(headers)
        return response

    return with_headers
