"""The assessment page: one HTML document, its script and style inline under a strict
Content-Security-Policy (`content_security_policy`: nothing but this page's own nonced script and
style, requests only to the page's own server, no frames, no forms, no images).

Every text of the task (query, passage or answer, the LLM's answer, the reason an item was chosen)
travels as JSON in a non-executed ``<script type="application/json">`` block (``<``, ``>`` and
``&`` escaped, so no text can close it) and is put on the page with ``textContent``, never parsed
as HTML: a passage holding ``<script>`` shows those characters. In blind mode the page is not
given the LLM's label, answer or the reason at all.

Keys: a digit gives its label (the k-th label of the scale when the scale is not 0-9), Enter
accepts the LLM's label in post-edit mode, → / ↓ / j the next item, ← / ↑ / k the previous one,
u undoes the last judgment. A label counts once the server says it is on disk (the status line
says so, or says it was NOT saved); keys pressed meanwhile wait their turn.
"""

from __future__ import annotations

import json
from typing import Any


def content_security_policy(nonce: str) -> str:
    return (
        f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; "
        "connect-src 'self'; img-src 'none'; font-src 'none'; media-src 'none'; object-src 'none'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )


def _json_for_script(value: Any) -> str:
    """JSON that cannot end the ``<script>`` element holding it (nor start a comment in it)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


STYLE = """
:root { color-scheme: light; --line: #d0d4da; --accent: #1f5fbf; }
body { font: 16px/1.45 system-ui, sans-serif; margin: 0; color: #1b1f24; background: #f6f7f9; }
header { display: flex; gap: 1em; align-items: center; padding: .6em 1.2em; background: #fff;
  border-bottom: 1px solid var(--line); flex-wrap: wrap; }
header b { font-weight: 600; }
progress { width: 14em; }
main { max-width: 60em; margin: 0 auto; padding: .8em 1.2em 2em; }
section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .6em 1em;
  margin: .8em 0; }
h2 { font-size: .8em; text-transform: uppercase; letter-spacing: .06em; color: #5b636e; margin: .2em 0; }
h2 small { text-transform: none; letter-spacing: 0; font-weight: 400; margin-left: .5em; }
.query { font-size: 1.15em; font-weight: 600; margin: .2em 0 .4em; }
.text, pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: .2em 0 .4em; }
pre { font: inherit; color: #3a414a; max-height: 12em; overflow: auto; }
.missing { color: #b3261e; font-style: italic; }
.why { color: #5b636e; font-size: .9em; margin: .2em 0; }
.labels { display: flex; gap: .5em; flex-wrap: wrap; }
.labels button { font: inherit; padding: .45em .9em; border: 1px solid var(--line); border-radius: 5px;
  background: #fff; cursor: pointer; }
.labels button.suggested { border: 2px dashed var(--accent); }
.labels button.chosen { background: var(--accent); color: #fff; border-color: var(--accent); }
#status { min-height: 1.4em; margin: .5em 0 0; color: #2e6b34; }
#status.bad { color: #b3261e; font-weight: 600; }
.keys { color: #5b636e; font-size: .85em; }
kbd { border: 1px solid var(--line); border-radius: 3px; padding: 0 .3em; background: #fff; }
"""

BODY = """
<header>
  <b>reljudge · assess</b>
  <span id="who"></span>
  <span id="pos"></span>
  <progress id="bar" value="0" max="1"></progress>
  <span id="count"></span>
</header>
<main>
  <section><h2>Query<small id="qid"></small></h2><p id="query" class="query"></p></section>
  <section><h2 id="text-title">Passage<small id="docid"></small></h2><div id="text" class="text"></div></section>
  <section id="llm"><h2>LLM</h2>
    <p>label: <b id="llm-label"></b></p><pre id="llm-answer"></pre><p id="why" class="why"></p>
  </section>
  <section><h2>Your label</h2><div id="labels" class="labels"></div><p id="status" role="status"></p></section>
  <p class="keys" id="keys"></p>
</main>
"""

SCRIPT = r"""
"use strict";
(() => {
  const D = JSON.parse(document.getElementById("data").textContent);
  const items = D.items;
  const labels = D.labels;
  const $ = (id) => document.getElementById(id);
  const digits = D.scale.every((v) => v >= 0 && v <= 9);
  let pos = D.start;
  let shownAt = performance.now();
  let queue = Promise.resolve();
  let pending = 0;

  const named = (v) => {
    const n = D.scale_names ? D.scale_names[String(v)] : undefined;
    return n ? `${v} · ${n}` : String(v);
  };
  const has = (item) => labels[item] !== undefined && labels[item] !== null;

  $("who").textContent = `${D.assessor} · ${D.mode} mode`;
  if (D.mode === "blind") $("llm").hidden = true;
  for (const v of D.scale) {
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.label = String(v);
    b.textContent = named(v);
    b.addEventListener("click", () => { b.blur(); act(() => judge(v)); });
    $("labels").appendChild(b);
  }
  const keyOf = (v, i) => (digits ? String(v) : String(i + 1));
  $("keys").textContent =
    `keys: ${D.scale.map((v, i) => keyOf(v, i)).join(" ")} label` +
    (D.mode === "post-edit" ? " · Enter accept the LLM's label" : "") +
    " · → or j next · ← or k previous · u undo the last judgment";

  function render() {
    const it = items[pos];
    $("pos").textContent = `item ${pos + 1} of ${items.length}`;
    $("qid").textContent = `topic ${it.qid}`;
    $("query").textContent = it.query || "(the task holds no query text)";
    $("docid").textContent = it.docid;
    $("text").textContent = it.text || "(the task holds no text for this item)";
    $("text").classList.toggle("missing", !it.text);
    if (D.mode !== "blind") {
      $("llm-label").textContent = it.llm_label === null ? "none (no label from the LLM)" : named(it.llm_label);
      $("llm-answer").textContent = it.llm_answer === null ? "" : it.llm_answer;
      $("llm-answer").hidden = it.llm_answer === null;
      $("why").textContent = it.why ? `chosen: ${it.why}` : "";
    }
    const mine = has(it.item) ? labels[it.item] : null;
    for (const b of $("labels").children) {
      const v = Number(b.dataset.label);
      b.classList.toggle("chosen", mine === v);
      b.classList.toggle("suggested", D.mode === "post-edit" && mine === null && it.llm_label === v);
    }
    const n = items.filter((x) => has(x.item)).length;
    $("bar").max = items.length;
    $("bar").value = n;
    $("count").textContent = `${n} of ${items.length} judged` + (n === items.length ? " · all done" : "");
    document.body.dataset.item = it.item;
    document.body.dataset.judged = String(n);
    shownAt = performance.now();
  }

  function say(text, bad) {
    $("status").textContent = text;
    $("status").classList.toggle("bad", Boolean(bad));
  }

  async function post(path, body) {
    const r = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Assess-Token": D.token },
      body: JSON.stringify(body),
      cache: "no-store",
      credentials: "same-origin",
    });
    let reply = null;
    try { reply = await r.json(); } catch (e) { reply = null; }
    if (!r.ok || reply === null) throw new Error(reply && reply.error ? reply.error : `HTTP ${r.status}`);
    return reply;
  }

  async function judge(v) {
    const it = items[pos];
    const seconds = (performance.now() - shownAt) / 1000;
    const reply = await post("/api/judge", { item: it.item, label: v, seconds: seconds });
    labels[it.item] = reply.label;
    say(`saved: topic ${it.qid}, ${it.docid} → ${named(v)} (line ${reply.seq} of your file)`);
    if (pos < items.length - 1) pos += 1;
    render();
  }

  async function undo() {
    const reply = await post("/api/undo", {});
    if (reply.item === null) { say("nothing to undo"); return; }
    labels[reply.item] = reply.label;
    const i = items.findIndex((x) => x.item === reply.item);
    if (i >= 0) pos = i;
    render();
    say(`undone: this item is ${reply.label === null ? "unjudged" : named(reply.label)} again (line ${reply.seq})`);
  }

  function move(step) {
    pos = Math.min(items.length - 1, Math.max(0, pos + step));
    render();
  }

  function act(fn) {
    pending += 1;
    document.body.dataset.pending = String(pending);
    queue = queue.then(fn).catch((e) => say(`NOT saved: ${e.message}`, true)).then(() => {
      pending -= 1;
      document.body.dataset.pending = String(pending);
    });
  }

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || e.repeat) return;
    const k = e.key;
    if (/^[0-9]$/.test(k)) {
      const v = digits ? Number(k) : D.scale[Number(k) - 1];
      if (v !== undefined && D.scale.includes(v)) { e.preventDefault(); act(() => judge(v)); }
    } else if (k === "Enter" && D.mode === "post-edit") {
      e.preventDefault();
      act(() => {
        const it = items[pos];
        if (it.llm_label === null) { say("the LLM gave no label here: choose one", true); return null; }
        return judge(it.llm_label);
      });
    } else if (k === "ArrowRight" || k === "ArrowDown" || k === "j") {
      e.preventDefault(); act(() => move(1));
    } else if (k === "ArrowLeft" || k === "ArrowUp" || k === "k") {
      e.preventDefault(); act(() => move(-1));
    } else if (k === "u") {
      e.preventDefault(); act(undo);
    }
  });

  document.body.dataset.pending = "0";
  render();
  say(D.resumed ? `resumed: ${D.resumed} judgments on file` : "");
})();
"""


def render_page(data: dict[str, Any], nonce: str) -> str:
    """The page for ``data`` (`reljudge.analyses.assess.server.AssessApp.page_data`)."""
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        "<title>reljudge · assess</title>\n"
        f'<style nonce="{nonce}">{STYLE}</style>\n</head>\n<body>{BODY}'
        f'<script id="data" type="application/json">{_json_for_script(data)}</script>\n'
        f'<script nonce="{nonce}">{SCRIPT}</script>\n</body></html>\n'
    )
