"""The pages' files: each server's own (its `static/`) and the look the two share.

Everything is served from the package: no CDN, no build step, nothing from the internet.
The shared stylesheet keeps the name the pages know it by, `static/display.css`: the pit
display's look, which the dealer console's pages build on with their own. The shared icon,
`static/icon.svg`, is the one every page names: a page that names none has the browser ask
for `/favicon.ico`, and its 404 is an error in the console of every pit screen."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final

from aiohttp import web

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

SHARED: Final = Path(__file__).parent / "static"
LOOK: Final = "display.css"
ICON: Final = "icon.svg"


def add_files(app: web.Application, own: Path) -> None:
    """Serve `/static/<name>`: the shared look and icon, then the server's own folder."""
    for name in (LOOK, ICON):
        app.router.add_get(f"/static/{name}", _shared(SHARED / name))
    app.router.add_static("/static/", own)


def _shared(path: Path) -> Callable[[web.Request], Awaitable[web.FileResponse]]:
    async def serve(_request: web.Request) -> web.FileResponse:
        return web.FileResponse(path)

    return serve
