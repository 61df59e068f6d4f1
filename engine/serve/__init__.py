"""``engine serve``: the engine over HTTP (a JSON API) and a viewer in the browser.

`create_app` builds the FastAPI application; `serve` warms the kernels and runs
it under uvicorn.  Needs the ``serve`` extra: ``pip install
'tabletop-movement[serve]'``.
"""

from __future__ import annotations

from .app import create_app
from .run import serve

__all__ = ["create_app", "serve"]
