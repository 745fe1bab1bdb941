"""The aiohttp transport of `httpx-aiohttp`, with one difference from httpcore's wire behaviour
removed: credentials in the URL (``http://user:pass@host``) have already become httpx's
``Authorization`` header, and aiohttp refuses a request that carries both, so they are dropped
from the URL (httpcore never sends them in the request line either)."""

from __future__ import annotations

import httpx
from httpx_aiohttp import AiohttpTransport as _Base


class AiohttpTransport(_Base):
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.userinfo:
            request.url = request.url.copy_with(userinfo=b"")
        return await super().handle_async_request(request)
