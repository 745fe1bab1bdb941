"""A headless Chromium driven over the Chrome DevTools Protocol (its websocket, through aiohttp):
enough to load a page, press keys, read the page and take a screenshot.

`Browser` starts ``chromium --headless`` on a free debugging port with a profile of its own and
stops it (its process, by id) at the end; `Page` sends commands and collects the console's and
the log's messages (CSP violations among them).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")


def chromium() -> str | None:
    """The browser binary, or None when this machine has none (the tests skip)."""
    found = os.environ.get("RELJUDGE_CHROMIUM")
    if found:
        return found
    if Path("/usr/bin/chromium").exists():
        return "/usr/bin/chromium"
    return next((p for p in map(shutil.which, CHROMIUM_NAMES) if p), None)


#: the digit and navigation keys the tests press: key -> (code, virtual key code)
KEYS = {str(d): (f"Digit{d}", 48 + d) for d in range(10)} | {
    "ArrowRight": ("ArrowRight", 39),
    "ArrowLeft": ("ArrowLeft", 37),
    "ArrowDown": ("ArrowDown", 40),
    "ArrowUp": ("ArrowUp", 38),
    "Enter": ("Enter", 13),
    "j": ("KeyJ", 74),
    "k": ("KeyK", 75),
    "u": ("KeyU", 85),
}


class Page:
    def __init__(self, ws: Any):
        self.ws = ws
        self.next_id = 0
        self.waiting: dict[int, asyncio.Future[Any]] = {}
        self.events: list[dict[str, Any]] = []
        self.messages: list[str] = []
        self.reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        async for msg in self.ws:
            data = json.loads(msg.data)
            if "id" in data and data["id"] in self.waiting:
                self.waiting.pop(data["id"]).set_result(data)
                continue
            self.events.append(data)
            method, params = data.get("method"), data.get("params", {})
            if method == "Runtime.consoleAPICalled":
                self.messages.append(
                    " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
                )
            elif method == "Log.entryAdded":
                self.messages.append(params["entry"].get("text", ""))
            elif method == "Runtime.exceptionThrown":
                self.messages.append("exception: " + json.dumps(params["exceptionDetails"])[:500])

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiting[self.next_id] = future
        await self.ws.send_str(json.dumps({"id": self.next_id, "method": method, "params": params}))
        reply = await asyncio.wait_for(future, 60)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    async def evaluate(self, expression: str) -> Any:
        result = await self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def goto(self, url: str) -> None:
        await self.send("Page.navigate", url=url)
        await self.wait_for("document.readyState === 'complete' && document.body.dataset.pending === '0'")

    async def reload(self) -> None:
        await self.evaluate("document.body.dataset.pending = 'reloading'")
        await self.send("Page.reload", ignoreCache=True)
        await self.wait_for("document.readyState === 'complete' && document.body.dataset.pending === '0'")

    async def wait_for(self, expression: str, timeout: float = 60.0) -> Any:
        """Poll ``expression`` until it is truthy (a generous deadline: the machine may be busy)."""
        end = time.monotonic() + timeout
        while True:
            try:
                value = await self.evaluate(expression)
            except RuntimeError:
                value = None  # the page is between documents
            if value:
                return value
            if time.monotonic() > end:
                raise TimeoutError(f"never true: {expression}")
            await asyncio.sleep(0.05)

    async def press(self, key: str) -> None:
        code, vk = KEYS[key]
        text = key if len(key) == 1 else ("\r" if key == "Enter" else "")
        down: dict[str, Any] = {"type": "keyDown", "key": key, "code": code, "windowsVirtualKeyCode": vk}
        if text:
            down["text"] = text
        await self.send("Input.dispatchKeyEvent", **down)
        await self.send("Input.dispatchKeyEvent", type="keyUp", key=key, code=code, windowsVirtualKeyCode=vk)

    async def settle(self) -> None:
        """Until every key pressed so far is answered by the server."""
        await self.wait_for("document.body.dataset.pending === '0'")

    async def text(self, element_id: str) -> str:
        return await self.evaluate(f"document.getElementById({json.dumps(element_id)}).textContent")

    async def screenshot(self, path: Path, width: int = 900, height: int = 620) -> None:
        await self.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        shot = await self.send("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(shot["data"]))


class Browser:
    """``async with Browser() as page:`` a fresh headless Chromium and its one page."""

    def __init__(self, binary: str):
        self.binary = binary
        self.profile = tempfile.mkdtemp(prefix="reljudge-chromium-")
        self.process: subprocess.Popen[str] | None = None

    async def __aenter__(self) -> Page:
        import aiohttp

        self.process = subprocess.Popen(
            [
                self.binary,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-sync",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                f"--user-data-dir={self.profile}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        port = await asyncio.to_thread(self._debug_port)
        self.session = aiohttp.ClientSession()
        async with self.session.get(f"http://127.0.0.1:{port}/json/list") as r:
            targets = await r.json()
        target = next(t for t in targets if t["type"] == "page")
        self.ws = await self.session.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=64 * 1024 * 1024)
        page = Page(self.ws)
        for domain in ("Page", "Runtime", "Log"):
            await page.send(f"{domain}.enable")
        return page

    def _debug_port(self) -> int:
        assert self.process is not None and self.process.stderr is not None
        for line in self.process.stderr:
            found = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if found:
                # keep reading what it logs, so that a full pipe never blocks it
                threading.Thread(target=self.process.stderr.read, daemon=True).start()
                return int(found.group(1))
        raise RuntimeError(f"chromium exited ({self.process.wait()}) without a debugging port")

    async def __aexit__(self, *exc: object) -> None:
        try:
            await self.ws.close()
            await self.session.close()
        finally:
            if self.process is not None:
                self.process.terminate()
                try:
                    self.process.wait(20)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
            shutil.rmtree(self.profile, ignore_errors=True)
