"""The assessment page in a real headless Chromium, driven over the DevTools protocol
(`tests/_cdp.py`): judging with the keyboard, a reload mid-way, post-edit and blind mode, an
injected ``<script>`` shown as text, the file written after each item, and a SIGKILL of the
server (a real process) losing nothing already answered. The write path's checks (token, Host,
Origin, content type) are tested without a browser.

``RELJUDGE_SCREENSHOTS=DIR`` keeps the page's screenshot (``assess-page.png``) there: the one in
docs/assets was taken so.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from _assess import default_items, item, write_task
from _cdp import Browser, chromium
from reljudge.analyses.assess.files import (
    AssessmentWriter,
    default_assessment_path,
    read_assessments,
    read_task,
)
from reljudge.analyses.assess.server import AssessServer

BROWSER = chromium()
needs_browser = pytest.mark.skipif(
    BROWSER is None, reason="no Chromium on this machine (apt install chromium)"
)

INJECTED = (
    '<script>window.__pwned = 1; document.title = "pwned"</script><img src=x onerror="window.__pwned = 2">'
)
I1, I2, I3, I4 = (f"{i['qid']}\t{i['docid']}" for i in default_items())


def _items_with_injection() -> list[dict]:
    items = default_items()
    items[1] = item("19335", "d2", f"Before {INJECTED} after.", 0, query="a </script><b>bold?</b> query")
    return items


def labels_on_disk(path: Path) -> list[tuple[str, int | None]]:
    return [(a.item, a.label) for a in read_assessments(path)]


def run(coro):
    return asyncio.run(coro)


@needs_browser
@pytest.mark.slow
def test_judging_with_the_keyboard_reload_and_undo_in_judge_mode(tmp_path):
    task_path = write_task(tmp_path / "task.jsonl", _items_with_injection())
    task = read_task(task_path)
    out = tmp_path / "task.assess-ann.jsonl"

    async def session(url: str) -> None:
        async with Browser(BROWSER) as page:
            await page.goto(url)
            assert await page.evaluate("document.body.dataset.item") == I1
            assert await page.text("llm-label") == "2 · Highly relevant"
            assert await page.text("count") == "0 of 4 judged"
            await page.press("2")
            await page.settle()
            assert labels_on_disk(out) == [(I1, 2)]  # on disk as soon as the page says saved
            # the next item holds the injected markup: shown as text, never run
            assert await page.evaluate("document.body.dataset.item") == I2
            assert await page.text("text") == f"Before {INJECTED} after."
            assert await page.text("query") == "a </script><b>bold?</b> query"
            assert await page.evaluate(
                "window.__pwned === undefined && document.title === 'reljudge · assess'"
            )
            assert await page.evaluate("document.querySelectorAll('img, #text *, #query *').length") == 0
            await page.press("0")
            await page.settle()
            assert labels_on_disk(out) == [(I1, 2), (I2, 0)]
            # a reload mid-way resumes at the first item not judged, with the labels so far
            await page.reload()
            assert await page.evaluate("document.body.dataset.item") == I3
            assert await page.text("count") == "2 of 4 judged"
            assert "resumed: 2 judgments on file" in await page.text("status")
            await page.press("k")  # back to item 2, change its label, undo the change
            await page.press("1")
            await page.settle()
            assert labels_on_disk(out)[-1] == (I2, 1)
            await page.press("u")
            await page.settle()
            assert labels_on_disk(out)[-1] == (I2, 0)  # undo is a new line: the label before it
            assert await page.evaluate("document.body.dataset.item") == I2
            assert "undone" in await page.text("status")
            await page.press("ArrowRight")
            await page.press("3")
            await page.press("j")  # no-op at the last item
            await page.press("ArrowLeft")
            await page.press("ArrowRight")
            await page.press("1")
            await page.settle()
            assert await page.text("count") == "4 of 4 judged · all done"
            assert not [m for m in page.messages if "Content Security Policy" in m or "exception" in m], (
                page.messages
            )

    with AssessmentWriter(out, task, "ann", "judge") as writer, AssessServer(task, writer, "judge") as server:
        run(session(server.url))
    lines = read_assessments(out, task)
    assert [(a.item, a.label) for a in lines] == [(I1, 2), (I2, 0), (I2, 1), (I2, 0), (I3, 3), (I4, 1)]
    assert [a.seq for a in lines] == [1, 2, 3, 4, 5, 6]
    assert all(a.mode == "judge" and a.assessor == "ann" for a in lines)
    assert lines[0].seconds > 0 and lines[0].llm_label == 2


@needs_browser
@pytest.mark.slow
def test_post_edit_preselects_the_llm_label_and_blind_mode_shows_nothing_of_the_llm(tmp_path):
    items = default_items()
    items[0] = item(
        "19335",
        "d1",
        "Anthropology is the scientific study of humanity, concerned with human behavior, human biology, "
        "cultures, societies, and linguistics, in both the present and past, including past human species.",
        2,
        query="anthropological definition of environment",
        llm_answer="The passage defines anthropology but says nothing about environment.\n##final score: 2",
        why="uncertain: expected relevance 1.62, entropy 0.94 bits",
    )
    items[2] = item("47923", "d3", "No label from the model here.", None)
    task_path = write_task(tmp_path / "task.jsonl", items, mode="post-edit")
    task = read_task(task_path)
    edit, blind = tmp_path / "edit.jsonl", tmp_path / "blind.jsonl"

    async def post_edit(url: str) -> None:
        async with Browser(BROWSER) as page:
            await page.goto(url)
            suggested = "[...document.querySelectorAll('#labels button.suggested')].map(b => b.dataset.label)"
            assert await page.evaluate(suggested) == ["2"]
            assert "The passage defines anthropology" in await page.text("llm-answer")
            shot = tmp_path / "assess-page.png"
            await page.screenshot(shot)
            if os.environ.get("RELJUDGE_SCREENSHOTS"):
                shutil.copy(shot, Path(os.environ["RELJUDGE_SCREENSHOTS"]) / "assess-page.png")
            await page.press("Enter")  # accept the LLM's 2
            await page.press("1")  # overrule its 0
            await page.settle()
            assert labels_on_disk(edit) == [(I1, 2), (I2, 1)]
            await page.press("Enter")  # the LLM gave no label: nothing is written
            await page.settle()
            assert "the LLM gave no label" in await page.text("status")
            assert await page.evaluate(suggested) == []
            assert len(labels_on_disk(edit)) == 2

    async def blind_session(url: str) -> None:
        async with Browser(BROWSER) as page:
            await page.goto(url)
            assert await page.evaluate("document.getElementById('llm').hidden")
            data = await page.evaluate("document.getElementById('data').textContent")
            assert "final score" not in data and "llm_label" not in data and "entropy" not in data
            assert "Anthropology is the scientific study" in data
            await page.press("Enter")  # no effect in blind mode
            await page.press("3")
            await page.settle()
            assert labels_on_disk(blind) == [(I1, 3)]

    with AssessmentWriter(edit, task, "ann", "post-edit") as w, AssessServer(task, w, "post-edit") as server:
        run(post_edit(server.url))
    with AssessmentWriter(blind, task, "bob", "blind") as w, AssessServer(task, w, "blind") as server:
        run(blind_session(server.url))
    assert {a.mode for a in read_assessments(edit)} == {"post-edit"}
    assert [(a.mode, a.llm_label) for a in read_assessments(blind)] == [("blind", 2)]


@needs_browser
@pytest.mark.slow
def test_a_sigkill_of_the_server_loses_nothing_already_answered(tmp_path):
    task_path = write_task(tmp_path / "task.jsonl")
    out = tmp_path / "task.assess-cy.jsonl"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))

    def start() -> tuple[subprocess.Popen[str], str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "reljudge", "assess", str(task_path), "--assessor", "cy", "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), (
            url,
            proc.stderr.read() if proc.poll() is not None else "",
        )
        return proc, url

    async def first(url: str) -> None:
        async with Browser(BROWSER) as page:
            await page.goto(url)
            for n, key in enumerate("21", start=1):
                await page.press(key)
                await page.settle()
                assert len(labels_on_disk(out)) == n  # written after each item

    async def second(url: str) -> None:
        async with Browser(BROWSER) as page:
            await page.goto(url)
            assert await page.evaluate("document.body.dataset.item") == I3
            assert await page.text("count") == "2 of 4 judged"
            await page.press("0")
            await page.settle()

    proc, url = start()
    try:
        run(first(url))
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert labels_on_disk(out) == [(I1, 2), (I2, 1)]
    proc, url = start()  # the lock died with the process: the assessor resumes
    try:
        run(second(url))
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
    assert labels_on_disk(out) == [(I1, 2), (I2, 1), (I3, 0)]


def _request(server: AssessServer, method: str, path: str, body: bytes | None = None, **headers: str):
    port = int(server.url.rsplit(":", 1)[1].strip("/"))
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    base = {"Host": f"127.0.0.1:{port}"}
    conn.request(
        method, path, body=body, headers={k.replace("_", "-"): v for k, v in (base | headers).items()}
    )
    reply = conn.getresponse()
    data = reply.read()
    conn.close()
    return reply.status, reply.headers, data


def test_the_write_path_wants_the_token_a_json_body_and_this_server_as_host_and_origin(tmp_path):
    task = read_task(write_task(tmp_path / "task.jsonl"))
    out = tmp_path / "a.jsonl"
    with AssessmentWriter(out, task, "ann", "judge") as w, AssessServer(task, w, "judge") as server:
        token = server.app.token
        host = server.url.removeprefix("http://").strip("/")
        body = json.dumps({"item": I1, "label": 2, "seconds": 1.0}).encode()
        ok = {"Content_Type": "application/json", "X_Assess_Token": token}
        status, headers, page = _request(server, "GET", "/")
        csp = headers["Content-Security-Policy"]
        assert status == 200 and "default-src 'none'" in csp and "script-src 'nonce-" in csp
        assert "connect-src 'self'" in csp and "'unsafe-inline'" not in csp
        nonce = csp.split("'nonce-")[1].split("'")[0]
        assert page.count(f'nonce="{nonce}"'.encode()) == 2 and b"http" not in page.split(b"<script id")[0]
        assert _request(server, "GET", "/", Host="evil.example:80")[0] == 403  # DNS rebinding
        refused = [
            {"Content_Type": "application/json"},  # no token
            {"Content_Type": "application/json", "X_Assess_Token": "x" + token[1:]},
            {"Content_Type": "text/plain", "X_Assess_Token": token},  # what a cross-site form can send
            ok | {"Origin": "http://evil.example"},
            ok | {"Host": "evil.example"},
            ok | {"Sec_Fetch_Site": "cross-site"},
        ]
        for headers_ in refused:
            assert _request(server, "POST", "/api/judge", body, **headers_)[0] == 403, headers_
        assert _request(server, "GET", "/api/judge")[0] == 404
        assert _request(server, "PUT", "/api/judge", body, **ok)[0] == 405
        # a body said to be too large is refused before it is read
        assert _request(server, "POST", "/api/judge", b"", **ok, Content_Length="1000000000")[0] == 413
        bad = json.dumps({"item": I1, "label": 9}).encode()
        assert _request(server, "POST", "/api/judge", bad, **ok)[0] == 400
        assert not out.read_bytes()
        status, _, reply = _request(server, "POST", "/api/judge", body, **ok, Origin=f"http://{host}")
        assert status == 200 and json.loads(reply) == {"item": I1, "label": 2, "seq": 1}
        status, _, reply = _request(server, "POST", "/api/undo", b"{}", **ok)
        assert json.loads(reply) == {"item": I1, "label": None, "seq": 2}
    assert labels_on_disk(out) == [(I1, 2), (I1, None)]


def test_two_assessors_write_two_files_side_by_side(tmp_path):
    task_path = write_task(tmp_path / "task.jsonl")
    task = read_task(task_path)
    ann, bob = (default_assessment_path(task_path, name) for name in ("ann", "bob"))
    with (
        AssessmentWriter(ann, task, "ann", "judge") as wa,
        AssessmentWriter(bob, task, "bob", "blind") as wb,
        AssessServer(task, wa, "judge") as sa,
        AssessServer(task, wb, "blind") as sb,
    ):
        for server, label in ((sa, 3), (sb, 1), (sa, 2)):
            ok = {"Content_Type": "application/json", "X_Assess_Token": server.app.token}
            body = json.dumps({"item": I1, "label": label, "seconds": 2.0}).encode()
            assert _request(server, "POST", "/api/judge", body, **ok)[0] == 200
        assert sa.app.token != sb.app.token
    assert labels_on_disk(ann) == [(I1, 3), (I1, 2)] and labels_on_disk(bob) == [(I1, 1)]
