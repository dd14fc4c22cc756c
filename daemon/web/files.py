"""The pages' files: each server's own (its `static/`) and the look the two share.

Everything is served from the package: no CDN, no build step, nothing from the internet.
The shared stylesheet keeps the name the pages know it by, `static/display.css`: the pit
display's look, which the dealer console's pages build on with their own."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from aiohttp import web

SHARED: Final = Path(__file__).parent / "static"
LOOK: Final = "display.css"


def add_files(app: web.Application, own: Path) -> None:
    """Serve `/static/<name>`: the shared look, then the files of the server's own folder."""
    app.router.add_get(f"/static/{LOOK}", _look)
    app.router.add_static("/static/", own)


async def _look(_request: web.Request) -> web.FileResponse:
    return web.FileResponse(SHARED / LOOK)
