"""The page's server: stdlib ``http.server`` on 127.0.0.1 only, one assessor per server.

``GET /`` is the page (`reljudge.analyses.assess.page`), with a fresh CSP nonce each time and the
server's session token in it. The write path is CSRF-safe: ``POST /api/judge`` and ``POST
/api/undo`` need that token in an ``X-Assess-Token`` header (which another site's page cannot
read, nor send without a CORS preflight this server never allows), a JSON content type, and a
``Host`` (every request) and ``Origin`` (when sent) naming this server on 127.0.0.1 or localhost,
which also shuts out DNS rebinding. A judgment is on disk (`AssessmentWriter`) before its reply.

Undo takes back the last judgment made through this server (also after a reload of the page): the
item gets the label it had before it, written as a new line (None: unjudged again); nothing in
the file is ever rewritten.
"""

from __future__ import annotations

import hmac
import json
import logging
import secrets
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from reljudge.analyses.assess.files import AssessmentWriter
from reljudge.analyses.assess.page import content_security_policy, render_page
from reljudge.analyses.assess.task import Task, latest

logger = logging.getLogger("reljudge.analyses.assess")

#: the largest request body read (a judgment is a few dozen bytes)
MAX_BODY = 16 * 1024


class AssessApp:
    """What the page shows and what its two writes do, for one task, assessor and mode."""

    def __init__(self, task: Task, writer: AssessmentWriter, mode: str):
        self.task, self.writer, self.mode = task, writer, mode
        self.token = secrets.token_urlsafe(32)
        self.labels: dict[str, int | None] = latest(writer.lines)
        self.history: list[tuple[str, int | None]] = []  # (item, its label before) per judgment
        self._lock = threading.Lock()

    def page_data(self) -> dict[str, Any]:
        blind = self.mode == "blind"
        items = []
        for it in self.task.items:
            shown: dict[str, Any] = {
                "item": it.item,
                "qid": it.qid,
                "docid": it.docid,
                "query": it.query,
                "text": it.text,
            }
            if not blind:
                shown |= {"llm_label": it.llm_label, "llm_answer": it.llm_answer, "why": it.why}
            items.append(shown)
        with self._lock:
            labels = {k: v for k, v in self.labels.items() if v is not None}
        start = next((i for i, it in enumerate(self.task.items) if it.item not in labels), 0)
        names = self.task.scale_names
        return {
            "token": self.token,
            "assessor": self.writer.assessor,
            "mode": self.mode,
            "scale": list(self.task.scale),
            "scale_names": None if names is None else {str(k): v for k, v in names.items()},
            "items": items,
            "labels": labels,
            "start": start,
            "resumed": len(self.writer.lines),
        }

    def judge(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise ValueError("expected a JSON object")
        name = body.get("item")
        it = self.task.item(name) if isinstance(name, str) else None
        if it is None:
            raise ValueError("no such item in the task")
        label = body.get("label")
        if isinstance(label, bool) or not isinstance(label, int) or label not in self.task.scale:
            raise ValueError(f"the label must be one of {list(self.task.scale)}")
        seconds = body.get("seconds", 0.0)
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 <= seconds < 1e7:
            seconds = 0.0
        with self._lock:
            before = self.labels.get(it.item)
            record = self.writer.append(it, label, float(seconds))
            self.labels[it.item] = label
            self.history.append((it.item, before))
        return {"item": it.item, "label": label, "seq": record.seq}

    def undo(self) -> dict[str, Any]:
        with self._lock:
            if not self.history:
                return {"item": None, "label": None, "seq": None}
            name, before = self.history[-1]
            it = self.task.item(name)
            assert it is not None
            record = self.writer.append(it, before, 0.0)
            self.history.pop()
            self.labels[name] = before
        return {"item": name, "label": before, "seq": record.seq}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "reljudge-assess"
    timeout = 60  # seconds a connection may stay silent before its thread lets it go
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("%s - " + format, self.address_string(), *args)

    def _send(self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        headers = {
            "Content-Type": content_type,
            "Content-Length": str(len(body)),
            "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "X-Frame-Options": "DENY",
            "Cross-Origin-Opener-Policy": "same-origin",
            "Cross-Origin-Resource-Policy": "same-origin",
        } | (extra or {})
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value).encode("utf-8"), "application/json; charset=utf-8")

    def _host_ok(self) -> bool:
        return self.headers.get("Host", "") in self.server.hosts

    def do_GET(self) -> None:
        if not self._host_ok():
            self._json(HTTPStatus.FORBIDDEN, {"error": "wrong Host: open the page at " + self.server.url})
            return
        if self.path.split("?", 1)[0] != "/":
            self._json(HTTPStatus.NOT_FOUND, {"error": "not found"})
            return
        nonce = secrets.token_urlsafe(18)
        html = render_page(self.server.app.page_data(), nonce).encode("utf-8")
        self._send(
            HTTPStatus.OK,
            html,
            "text/html; charset=utf-8",
            {"Content-Security-Policy": content_security_policy(nonce)},
        )

    def do_POST(self) -> None:
        refusal = self._refusal()
        if refusal is not None:
            self._json(HTTPStatus.FORBIDDEN, {"error": refusal})
            return
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self._json(HTTPStatus.LENGTH_REQUIRED, {"error": "Content-Length required"})
            return
        if not 0 <= length <= MAX_BODY:
            self._json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": "body too large"})
            return
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._json(HTTPStatus.BAD_REQUEST, {"error": "the body is not JSON"})
            return
        app = self.server.app
        try:
            if self.path == "/api/judge":
                reply = app.judge(body)
            elif self.path == "/api/undo":
                reply = app.undo()
            else:
                self._json(HTTPStatus.NOT_FOUND, {"error": "not found"})
                return
        except ValueError as err:
            self._json(HTTPStatus.BAD_REQUEST, {"error": str(err)})
            return
        except OSError as err:  # the disk: nothing is claimed saved
            logger.error("could not write %s: %s", app.writer.path, err)
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"could not write the file: {err}"})
            return
        self._json(HTTPStatus.OK, reply)

    def _refusal(self) -> str | None:
        """Why a write is refused (None: it is not): Host, Origin, content type, token."""
        if not self._host_ok():
            return "wrong Host"
        origin = self.headers.get("Origin")
        if origin is not None and origin not in self.server.origins:
            return "cross-origin request"
        if self.headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
            return "cross-site request"
        if self.headers.get("Content-Type", "").split(";")[0].strip().lower() != "application/json":
            return "the body must be application/json"
        token = self.headers.get("X-Assess-Token", "")
        if not hmac.compare_digest(token.encode("utf-8", "replace"), self.server.app.token.encode("ascii")):
            return "missing or wrong session token (reload the page)"
        return None

    def do_PUT(self) -> None:
        self._json(HTTPStatus.METHOD_NOT_ALLOWED, {"error": "method not allowed"})

    do_DELETE = do_PATCH = do_OPTIONS = do_PUT


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, app: AssessApp, port: int):
        self.app = app
        super().__init__(("127.0.0.1", port), _Handler)
        bound = self.server_address[1]
        self.hosts = frozenset({f"127.0.0.1:{bound}", f"localhost:{bound}"})
        self.origins = frozenset(f"http://{h}" for h in self.hosts)
        self.url = f"http://127.0.0.1:{bound}/"


class AssessServer:
    """The page's server for one task, assessor and mode; ``port`` 0 takes any free port.
    `serve_forever` blocks; as a context manager it serves from a thread (tests)."""

    def __init__(self, task: Task, writer: AssessmentWriter, mode: str, port: int = 0):
        self.app = AssessApp(task, writer, mode)
        self._httpd = _Server(self.app, port)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return self._httpd.url

    def serve_forever(self) -> None:
        try:
            self._httpd.serve_forever()
        finally:
            self._httpd.server_close()

    def __enter__(self) -> AssessServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()
