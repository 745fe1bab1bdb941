"""The mock server's Files and Batches APIs (OpenAI's ``/v1/files`` and ``/v1/batches``).

Files: ``POST /v1/files`` (multipart upload: ``purpose`` and ``file``), ``GET /v1/files`` (list,
``?purpose=``), ``GET /v1/files/{id}``, ``GET /v1/files/{id}/content``, ``DELETE /v1/files/{id}``.
Batches: ``POST /v1/batches``, ``GET /v1/batches`` (list), ``GET /v1/batches/{id}``,
``POST /v1/batches/{id}/cancel``.

A batch is worked in a thread: its input file is read line by line from disk and each request
is answered by the server's responder (the same answers as the chat route, `_answer_line`);
answers go to an output file and failed requests to an error file, both on disk, so that a
100,000-line batch holds no more than one line in memory. A batch completes
``completion_delay_s`` seconds after it was created (at the earliest); ``failure_share`` of its
requests (drawn from the custom_id, so the same ones) fail with a 500 line in the error file the
first time they are submitted. ``submissions`` counts each custom_id submitted in a batch, so a
test can assert that no request was sent twice. ``hostile`` batches report absurd request counts
while they run, echo the caller's API key in their first answer and end their output file with
junk (`junk_lines`). ``duplicate_share`` of the requests are answered twice the first time they are
submitted, the second time with another grade (`other_answer`); ``served_model`` is the ``model`` every answer names (another
checkpoint than the one asked for).

Provider faults, set when the service is made or changed by a test between runs: ``slow``
"status" (a batch's status answer trickles one byte every ``trickle_s`` seconds), "content" (a
file's content trickles so) or "endless" (a file's content goes on with bytes without end, as
fast as the client reads); ``lose_creates`` (the next creates make their batch, then answer 500);
``drop_metadata`` (batches keep no metadata); ``unlisted`` (the listing of batches is empty);
``idempotency`` (a create with the ``Idempotency-Key`` of an earlier one answers that batch, as
Stripe-like APIs do); ``bad_ids`` (the next creates' answers name these ids, e.g. ``..``, instead
of the batch's own, which polls and the listing keep).

Tests can stop the service at a point and wait until a client reaches it, without any clock:
`hold` ("upload": after a file is stored, before the answer; "create": after a batch is
created, before the answer; "poll": batches stay
``in_progress``; "content": a file's content stops after its first half) returns an event set
when the point is reached; `release` lets it go.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import shutil
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from reljudge.testing.exchange import MockRequest
from reljudge.testing.protocols import answer_of, error_body, openai_body, with_literals

#: the largest upload accepted (OpenAI: 200 MB per batch input file; a little over, for tests)
MAX_UPLOAD_BYTES = 512 * 1024 * 1024
#: the longest input line read; a longer line gets an error line
MAX_INPUT_LINE_BYTES = 16 * 1024 * 1024
TERMINAL = ("completed", "failed", "expired", "cancelled")
HOLD_POINTS = ("upload", "create", "poll", "content")
SLOW_MODES = ("status", "content", "endless")


class MockBatchService:
    """Files and batches of one mock server (see the module docstring)."""

    def __init__(
        self,
        server: Any,
        *,
        completion_delay_s: float = 0.0,
        failure_share: float = 0.0,
        hostile: bool = False,
        slow: str | None = None,
        trickle_s: float = 1.0,
        lose_creates: int = 0,
        drop_metadata: bool = False,
        unlisted: bool = False,
        idempotency: bool = False,
        bad_ids: tuple[str, ...] = (),
        duplicate_share: float = 0.0,
        served_model: str | None = None,
    ) -> None:
        if slow not in (None, *SLOW_MODES):
            raise ValueError(f"unknown slow mode {slow!r} (expected one of {', '.join(SLOW_MODES)})")
        self.server = server
        self.hostile = hostile
        self.slow = slow
        self.trickle_s = trickle_s
        self.lose_creates = lose_creates
        self.drop_metadata = drop_metadata
        self.unlisted = unlisted
        self.idempotency = idempotency
        self.bad_ids = list(bad_ids)
        self._keys: dict[str, dict[str, Any]] = {}  # batches by Idempotency-Key
        self.streamed = 0  # bytes sent by ``slow="endless"`` answers
        #: the share of requests (drawn from the custom_id) answered twice, the second answer a
        #: different grade, at the end of the output file
        self.duplicate_share = duplicate_share
        #: the ``model`` every answer names (None: the model asked for)
        self.served_model = served_model
        self.completion_delay_s = completion_delay_s
        self.failure_share = failure_share
        self.submissions: Counter[str] = Counter()
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.calls: Counter[str] = Counter()  # requests by route kind ("upload", "retrieve", ...)
        #: how many of the next batches fail as a whole (status ``failed``, the reason in ``errors``)
        self.fail_next = 0
        self.events: list[tuple[str, str]] = []  # ("create", batch id) and ("content", file id), in order
        self._folder: Path | None = None  # made when first needed, removed by `close`
        self._lock = threading.Lock()
        self._gates: dict[str, threading.Event] = {}
        self._reached: dict[str, threading.Event] = {}
        self._n = 0

    # -- test controls ----------------------------------------------------------------------
    def hold(self, point: str) -> threading.Event:
        """Stop at ``point`` (`HOLD_POINTS`) until `release`; the event is set when reached."""
        if point not in HOLD_POINTS:
            raise ValueError(f"unknown hold point {point!r} (expected one of {', '.join(HOLD_POINTS)})")
        self._gates[point] = threading.Event()
        self._reached[point] = threading.Event()
        return self._reached[point]

    def release(self, point: str | None = None) -> None:
        for name in [point] if point else list(self._gates):
            gate = self._gates.pop(name, None)
            if gate is not None:
                gate.set()

    def _pause(self, point: str) -> None:
        gate = self._gates.get(point)
        if gate is not None:
            self._reached[point].set()
            while not gate.wait(0.05) and not self.server._stop.is_set():
                pass

    @property
    def _dir(self) -> Path:
        with self._lock:
            if self._folder is None:
                self._folder = Path(tempfile.mkdtemp(prefix="reljudge-mock-files-"))
            return self._folder

    def close(self) -> None:
        """Let every hold go and delete the files (the server's `stop`)."""
        self.release()
        with self._lock:
            folder, self._folder = self._folder, None
            self.files.clear()
            self.batches.clear()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    @property
    def resubmitted(self) -> int:
        """Requests submitted more than once (0 when no request was sent twice)."""
        with self._lock:
            return sum(n - 1 for n in self.submissions.values() if n > 1)

    # -- routing ----------------------------------------------------------------------------
    def handle(self, handler: Any, method: str, path: str, query: dict[str, str]) -> None:
        parts = path.strip("/").split("/")[1:]  # after "v1"
        kind, rest = parts[0], parts[1:]
        with self._lock:
            self.calls[f"{method} {kind}{'/' + rest[-1] if len(rest) > 1 else ''}"] += 1
        if kind == "files":
            if method == "POST" and not rest:
                return self._upload(handler)
            if method == "GET" and not rest:
                return self._send_list(handler, self._file_list(query.get("purpose")))
            item = self.files.get(rest[0]) if rest else None
            if item is None:
                return handler._send_json(404, error_body("openai", 404, "no such file", None))
            if method == "GET" and len(rest) == 2 and rest[1] == "content":
                return self._content(handler, item)
            if method == "DELETE" and len(rest) == 1:
                with self._lock:
                    self.files.pop(item["id"], None)
                return handler._send_json(200, {"id": item["id"], "object": "file", "deleted": True})
            if method == "GET" and len(rest) == 1:
                return handler._send_json(200, _public(item))
        elif kind == "batches":
            if method == "POST" and not rest:
                return self._create(handler)
            if method == "GET" and not rest:
                listed = [] if self.unlisted else [self._batch_view(b) for b in self.batches.values()]
                return self._send_list(handler, listed)
            batch = self.batches.get(rest[0]) if rest else None
            if batch is None:
                return handler._send_json(404, error_body("openai", 404, "no such batch", None))
            if method == "POST" and rest[1:] == ["cancel"]:
                if batch["status"] not in TERMINAL:
                    batch["cancel"] = True
                return handler._send_json(200, self._batch_view(batch))
            if method == "GET" and len(rest) == 1:
                if batch["status"] not in TERMINAL:
                    self._pause("poll")
                if self.slow == "status":
                    return self._trickle(handler, json.dumps(self._batch_view(batch)).encode())
                return handler._send_json(200, self._batch_view(batch))
        handler._send_json(404, error_body("openai", 404, f"no route {method} {path}", None))

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._n += 1
            return f"{prefix}-mock{self._n:06d}"

    # -- files ------------------------------------------------------------------------------
    def _upload(self, handler: Any) -> None:
        spooled = self._dir / f"upload-{self._next_id('u')}"
        try:
            size = read_body(handler, spooled, MAX_UPLOAD_BYTES)
        except ValueError as err:
            spooled.unlink(missing_ok=True)
            return handler._send_json(400, error_body("openai", 400, str(err), None))
        fields, file_part = parse_multipart(handler.headers.get("Content-Type", ""), spooled, size)
        if file_part is None or fields.get("purpose") is None:
            spooled.unlink(missing_ok=True)
            return handler._send_json(
                400, error_body("openai", 400, "a file and a purpose are required", None)
            )
        name, start, end = file_part
        file_id = self._next_id("file")
        path = self._dir / file_id
        with spooled.open("rb") as src, path.open("wb") as dst:
            src.seek(start)
            left = end - start
            while left > 0:
                chunk = src.read(min(left, 1 << 20))
                if not chunk:
                    break
                dst.write(chunk)
                left -= len(chunk)
        spooled.unlink(missing_ok=True)
        item = self._add_file(path, name, fields["purpose"])
        self._pause("upload")
        handler._send_json(200, _public(item))

    def _add_file(self, path: Path, name: str, purpose: str) -> dict[str, Any]:
        item: dict[str, Any] = {
            "id": path.name,
            "object": "file",
            "bytes": path.stat().st_size,
            "created_at": int(time.time()),
            "filename": name,
            "purpose": purpose,
            "status": "processed",
            "path": path,
        }
        with self._lock:
            self.files[item["id"]] = item
        return item

    def _file_list(self, purpose: str | None) -> list[dict[str, Any]]:
        with self._lock:
            items = list(self.files.values())
        return [_public(f) for f in items if purpose in (None, "", f["purpose"])]

    def _trickle(self, handler: Any, data: bytes, length: int | None = None) -> None:
        """Send ``data`` one byte every ``trickle_s`` seconds (until the server stops)."""
        try:
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data) if length is None else length))
            handler.end_headers()
            for i in range(len(data)):
                handler.wfile.write(data[i : i + 1])
                handler.wfile.flush()
                if self.server._wait(self.trickle_s):
                    break
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            pass
        handler.close_connection = True

    def _endless(self, handler: Any, path: Path) -> None:
        """Send a file's content, then bytes without end (no length: until the client hangs up)."""
        try:
            handler.send_response(200)
            handler.send_header("Content-Type", "application/octet-stream")
            handler.send_header("Connection", "close")
            handler.end_headers()
            data = path.read_bytes()
            handler.wfile.write(data)
            self.streamed += len(data)
            filler = b"#" * (1 << 16)
            while not self.server._stop.is_set():
                handler.wfile.write(filler)
                self.streamed += len(filler)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            pass
        handler.close_connection = True

    def _content(self, handler: Any, item: dict[str, Any]) -> None:
        path: Path = item["path"]
        with self._lock:
            self.events.append(("content", item["id"]))
        if self.slow == "content":
            return self._trickle(handler, path.read_bytes())
        if self.slow == "endless":
            return self._endless(handler, path)
        size = path.stat().st_size
        try:
            handler.send_response(200)
            handler.send_header("Content-Type", "application/octet-stream")
            handler.send_header("Content-Length", str(size))
            handler.end_headers()
            with path.open("rb") as src:
                sent = 0
                held = "content" not in self._gates
                while chunk := src.read(1 << 16):
                    if not held and sent + len(chunk) >= size // 2:
                        handler.wfile.write(chunk[: max(0, size // 2 - sent)])
                        handler.wfile.flush()
                        chunk = chunk[max(0, size // 2 - sent) :]
                        held = True
                        self._pause("content")
                    handler.wfile.write(chunk)
                    sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            handler.close_connection = True

    def _send_list(self, handler: Any, data: list[dict[str, Any]]) -> None:
        page = {
            "object": "list",
            "data": data,
            "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None,
            "has_more": False,
        }
        handler._send_json(200, page)

    # -- batches ----------------------------------------------------------------------------
    def _create(self, handler: Any) -> None:
        body = handler._read_json()
        file_id = body.get("input_file_id") if body else None
        item = self.files.get(file_id) if isinstance(file_id, str) else None
        if item is None or item["purpose"] != "batch":
            return handler._send_json(
                400, error_body("openai", 400, "input_file_id must be a batch file", None)
            )
        if body.get("endpoint") != "/v1/chat/completions" or body.get("completion_window") != "24h":
            return handler._send_json(400, error_body("openai", 400, "unsupported endpoint or window", None))
        key = handler.headers.get("Idempotency-Key") if self.idempotency else None
        with self._lock:
            again = self._keys.get(key) if key else None
        if again is not None:  # the batch this key made: no second one
            return handler._send_json(200, self._batch_view(again))
        metadata = None if self.drop_metadata else body.get("metadata")
        batch = {
            "id": self._next_id("batch"),
            "object": "batch",
            "endpoint": body["endpoint"],
            "input_file_id": file_id,
            "completion_window": "24h",
            "status": "validating",
            "created_at": int(time.time()),
            "metadata": metadata if isinstance(metadata, dict) else None,
            "counts": [0, 0, 0],  # total, completed, failed
            "output_file_id": None,
            "error_file_id": None,
            "ready_at": time.monotonic(),  # plus `completion_delay_s` (read when polled: a test may change it)
            "cancel": False,
            "key": (handler.headers.get("Authorization") or "").removeprefix("Bearer ").strip(),
        }
        with self._lock:
            self.batches[batch["id"]] = batch
            self.events.append(("create", batch["id"]))
            if key:
                self._keys[key] = batch
            lost, self.lose_creates = self.lose_creates > 0, max(0, self.lose_creates - 1)
            named = self.bad_ids.pop(0) if self.bad_ids else None
        threading.Thread(target=self._work, args=(batch, item["path"]), daemon=True).start()
        self._pause("create")
        if lost:  # the batch is made (and will be paid); the answer says it failed
            return handler._send_json(
                500, error_body("openai", 500, "mock: the answer was lost", "server_error")
            )
        view = self._batch_view(batch)
        if named is not None:
            view["id"] = named
        handler._send_json(200, view)

    def _batch_view(self, batch: dict[str, Any]) -> dict[str, Any]:
        total, completed, failed = batch["counts"]
        view = {k: v for k, v in batch.items() if k not in ("counts", "ready_at", "cancel", "done", "key")}
        view["request_counts"] = {"total": total, "completed": completed, "failed": failed}
        if self.hostile and batch["status"] != "completed":  # absurd counts while it runs
            view["request_counts"] = {"total": 10**30, "completed": -7, "failed": 10**25}
        if (
            batch["status"] == "in_progress"
            and batch.get("done")
            and time.monotonic() >= batch["ready_at"] + self.completion_delay_s
        ):
            if "poll" not in self._gates:
                batch["status"] = view["status"] = "completed"
                batch["completed_at"] = view["completed_at"] = int(time.time())
        return view

    def _work(self, batch: dict[str, Any], path: Path) -> None:
        with self._lock:
            failing, self.fail_next = self.fail_next > 0, max(0, self.fail_next - 1)
        if failing:  # the whole batch fails its validation: no output, the reason in ``errors``
            message = "mock validation failure: the input file was refused"
            batch["errors"] = {
                "object": "list",
                "data": [{"code": "invalid_file", "message": message, "line": 1}],
            }
            batch["failed_at"] = int(time.time())
            batch["status"] = "failed"
            return
        out_path = self._dir / f"{batch['id']}-output.jsonl"
        err_path = self._dir / f"{batch['id']}-errors.jsonl"
        batch["status"] = "in_progress"
        twice: list[dict[str, Any]] = []
        with path.open("rb") as src, out_path.open("wb") as out, err_path.open("wb") as errors:
            for raw in iter(lambda: src.readline(MAX_INPUT_LINE_BYTES + 1), b""):
                if not raw.strip():
                    continue
                if batch["cancel"]:
                    break
                line, ok = self._answer_line(raw)
                if self.hostile and ok and not batch["counts"][1]:
                    first = line
                    message = line["response"]["body"]["choices"][0]["message"]
                    message["content"] = f"{message['content']} (your key: {batch['key']})"
                (out if ok else errors).write(json.dumps(line).encode("utf-8") + b"\n")
                batch["counts"][0] += 1
                batch["counts"][1 if ok else 2] += 1
                if ok and _draw(line["custom_id"], "twice") < self.duplicate_share and self._first(line):
                    twice.append(line)
            if self.hostile and batch["counts"][1]:
                out.write(b"".join(junk_lines(first)))
            for line in twice:  # a second, different answer to the same request
                out.write(json.dumps(other_answer(line)).encode("utf-8") + b"\n")
        for target, key, purpose in (
            (out_path, "output_file_id", "batch_output"),
            (err_path, "error_file_id", "batch_output"),
        ):
            if target.stat().st_size:
                batch[key] = self._add_file(target, target.name, purpose)["id"]
        if batch["cancel"]:
            batch["status"] = "cancelled"
        batch["done"] = True

    def _first(self, line: dict[str, Any]) -> bool:
        with self._lock:
            return self.submissions[line["custom_id"]] == 1

    def _answer_line(self, raw: bytes) -> tuple[dict[str, Any], bool]:
        """One output line for one input line: the chat route's answer, or an error."""
        try:
            line = json.loads(raw) if len(raw) <= MAX_INPUT_LINE_BYTES else None
        except (ValueError, RecursionError):
            line = None
        custom_id = line.get("custom_id") if isinstance(line, dict) else None
        body = line.get("body") if isinstance(line, dict) else None
        out: dict[str, Any] = {
            "id": self._next_id("batch_req"),
            "custom_id": custom_id,
            "response": None,
            "error": None,
        }
        if (
            not isinstance(custom_id, str)
            or not isinstance(body, dict)
            or not isinstance(body.get("messages"), list)
        ):
            out["error"] = {"code": "invalid_request", "message": "a line needs a custom_id and a chat body"}
            return out, False
        with self._lock:
            self.submissions[custom_id] += 1
            first = self.submissions[custom_id] == 1
        if first and _draw(custom_id) < self.failure_share:
            payload = error_body("openai", 500, "mock batch failure", "server_error")
            out["response"] = {"status_code": 500, "request_id": out["id"], "body": payload}
            return out, False
        req = MockRequest(
            api="openai",
            model=str(body.get("model", "")),
            messages=body["messages"],
            body=body,
            index=0,
            seen=0,
        )
        reply = self.server._answer(req)
        if reply.body is not None:  # an exact body: sent as it is (JSON when it is JSON)
            try:
                payload = json.loads(reply.body)
            except (ValueError, RecursionError, UnicodeDecodeError):
                payload = reply.body.decode("utf-8", "replace")
        elif reply.status != 200:
            payload = error_body(
                "openai", reply.status, reply.error or f"mock error {reply.status}", reply.error_code
            )
        else:
            self.server._bill(req, reply)
            payload, literals = openai_body(req, answer_of(req, reply), reply)
            if literals:
                payload = json.loads(with_literals(json.dumps(payload), literals))
            if self.served_model is not None and isinstance(payload, dict):
                payload["model"] = self.served_model
        out["response"] = {"status_code": reply.status, "request_id": out["id"], "body": payload}
        return out, reply.status == 200


def _draw(custom_id: str, salt: str = "") -> float:
    """A number in [0, 1) drawn from a custom_id (the same every time)."""
    return int(hashlib.sha256((salt + custom_id).encode()).hexdigest()[:8], 16) / 2**32


def other_answer(line: dict[str, Any]) -> dict[str, Any]:
    """A copy of an answer line whose answer is another grade (0, or 3 when it was 0)."""
    other = json.loads(json.dumps(line))
    message = other["response"]["body"]["choices"][0]["message"]
    grade = "3" if str(message.get("content", "")).rstrip().endswith("0") else "0"
    message["content"] = f"##final score: {grade}"
    other["id"] = f"{other['id']}-again"
    return other


def junk_lines(first: dict[str, Any]) -> list[bytes]:
    """What a hostile batch adds to its output file: lines that are not JSON, not objects, nested
    200,000 deep, longer than any line a client should read (9 MiB), an answer to a request nobody
    made, and a second, different answer to the first request."""
    other = json.loads(json.dumps(first))
    other["response"]["body"]["choices"][0]["message"]["content"] = "##final score: 0"
    stranger = {**other, "custom_id": "e" * 64}
    return [
        b"{not json\n",
        b"[1, 2, 3]\n",
        b"[" * 200_000 + b"\n",
        b'{"custom_id": "' + b"a" * (9 * 1024 * 1024) + b'"}\n',
        json.dumps(stranger).encode() + b"\n",
        json.dumps(other).encode() + b"\n",
    ]


def _public(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k != "path"}


def read_body(handler: Any, target: Path, limit: int) -> int:
    """Spool a request body (Content-Length or chunked) to ``target``; its size. ValueError when
    it is larger than ``limit``."""
    size = 0
    with target.open("wb") as out:
        if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                header = handler.rfile.readline(100)
                length = int(header.split(b";")[0].strip() or b"0", 16)
                if length == 0:
                    handler.rfile.readline(100)
                    break
                size += length
                if size > limit:
                    raise ValueError("the upload is too large")
                _copy(handler.rfile, out, length)
                handler.rfile.readline(10)
        else:
            size = int(handler.headers.get("Content-Length") or 0)
            if size > limit:
                raise ValueError("the upload is too large")
            _copy(handler.rfile, out, size)
    return size


def _copy(src: Any, dst: Any, length: int) -> None:
    while length > 0:
        chunk = src.read(min(length, 1 << 20))
        if not chunk:
            raise ValueError("the upload ended early")
        dst.write(chunk)
        length -= len(chunk)


def parse_multipart(
    content_type: str, path: Path, size: int
) -> tuple[dict[str, str], tuple[str, int, int] | None]:
    """(small form fields, (file name, start, end) of the file part) of a spooled multipart body,
    found without reading it into memory."""
    boundary = None
    for piece in content_type.split(";"):
        name, _, value = piece.strip().partition("=")
        if name.lower() == "boundary":
            boundary = value.strip('"').encode("latin-1")
    fields: dict[str, str] = {}
    if not boundary or size == 0:
        return fields, None
    file_part = None
    delimiter = b"--" + boundary
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        at = data.find(delimiter)
        while at >= 0:
            head_start = at + len(delimiter)
            if data[head_start : head_start + 2] == b"--":
                break
            head_end = data.find(b"\r\n\r\n", head_start)
            if head_end < 0:
                break
            headers = data[head_start:head_end].decode("latin-1")
            body_start = head_end + 4
            nxt = data.find(b"\r\n" + delimiter, body_start)
            if nxt < 0:
                break
            disposition = next(
                (h for h in headers.split("\r\n") if h.lower().startswith("content-disposition")), ""
            )
            params = dict(
                (k.strip().lower(), v.strip().strip('"'))
                for k, _, v in (p.partition("=") for p in disposition.split(";")[1:])
            )
            if "filename" in params:
                file_part = (params["filename"], body_start, nxt)
            elif "name" in params and nxt - body_start <= 4096:
                fields[params["name"]] = data[body_start:nxt].decode("utf-8", "replace")
            at = nxt + 2
    return fields, file_part
