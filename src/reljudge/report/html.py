"""A `Page` as one self-contained HTML file: inline style and script, figures as data URIs, no
request to any server (a Content-Security-Policy forbids them). Every text taken from a file or a
model answer is escaped; the items travel as JSON inside a ``<script type="application/json">``
block (with ``<``, ``>`` and ``&`` escaped) and are put on the page with ``textContent`` only, so
an answer holding HTML or script shows as text."""

from __future__ import annotations

import html
import json
from typing import Any

from reljudge.report.contents import Page, Table
from reljudge.report.headline import Headline

CSP = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "base-uri 'none'; form-action 'none'"
)

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d232b;background:#f6f7f9}
header{background:#23364d;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}
main{padding:16px 24px;max-width:1500px}section{background:#fff;border:1px solid #dde1e6;border-radius:6px;
padding:12px 16px;margin:0 0 16px}h2{font-size:16px;margin:0 0 8px}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #e1e4e8;padding:3px 8px;text-align:left;
vertical-align:top}th{background:#eef1f4;position:sticky;top:0}.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:4px 18px}
.fact .k{color:#66707a;margin-right:4px}.fact .k:after{content:":"}.fact.wide{grid-column:1/-1;word-break:break-all}
.wrap{max-height:420px;overflow:auto}.note{color:#8a4b00}.muted{color:#66707a}
.status-ok{color:#1f6f3f}.status-bad{color:#a3271d;font-weight:600}
figure{display:inline-block;margin:0 12px 12px 0;vertical-align:top}figure img{max-width:100%;border:1px solid #dde1e6}
figcaption{font-size:12px;color:#66707a}
#filters label{margin-right:14px}#items tbody tr{cursor:pointer}#items tbody tr:hover{background:#f0f5fb}
#items tbody tr.sel{background:#dbe9f8}tr.dis td.label{background:#fde8e6}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;border:1px solid #e1e4e8;padding:8px;
max-height:360px;overflow:auto;margin:4px 0 10px}#detail h3{font-size:14px;margin:10px 0 2px}
.split{display:grid;grid-template-columns:minmax(0,11fr) minmax(0,9fr);gap:16px;align-items:start}
.split .wrap{max-height:640px}#detail pre{max-height:260px}
.counts span{display:inline-block;margin-right:16px}
#headline{border-left:4px solid #23364d}.cards{display:flex;flex-wrap:wrap;gap:10px;margin:0 0 10px}
.card{border:1px solid #dde1e6;border-radius:6px;padding:8px 12px;flex:1 1 170px;max-width:320px;background:#fbfcfd}
.card .what{font-size:12px;color:#66707a}.card .value{font-size:22px;font-weight:600;line-height:1.25}
.card .cnote{font-size:12px;color:#66707a}.card.bad .value{color:#a3271d}
#headline table td{font-variant-numeric:tabular-nums;white-space:nowrap}.table td:first-child{white-space:nowrap}
#headline .lines{font-size:12px;color:#4a545e;margin:8px 0 0;max-width:1100px}#headline .lines p{margin:2px 0}
"""

SCRIPT = """
(function(){
const data=JSON.parse(document.getElementById('items-data').textContent);
const rows=data.rows, pageSize=200; let shown=pageSize, selected=null;
const fStatus=document.getElementById('f-status'), fTopic=document.getElementById('f-topic'),
 fDis=document.getElementById('f-dis'), fText=document.getElementById('f-text'),
 body=document.querySelector('#items tbody'), count=document.getElementById('f-count'),
 more=document.getElementById('f-more');
function opt(sel,v){const o=document.createElement('option');o.value=v;o.textContent=v;sel.appendChild(o);}
[...new Set(rows.map(r=>r.status))].sort().forEach(v=>opt(fStatus,v));
[...new Set(rows.map(r=>r.qid))].sort().forEach(v=>opt(fTopic,v));
function keep(r){
 if(fStatus.value && r.status!==fStatus.value) return false;
 if(fTopic.value && r.qid!==fTopic.value) return false;
 if(fDis.checked && r.disagrees!==true) return false;
 const t=fText.value.trim().toLowerCase();
 if(t && !(r.raw+' '+r.docid+' '+r.docid_b+' '+r.item+' '+r.query).toLowerCase().includes(t)) return false;
 return true;}
function cell(tr,text,cls){const td=document.createElement('td');td.textContent=text;if(cls)td.className=cls;tr.appendChild(td);}
function fmt(v){return v===null||v===undefined?'':String(v);}
function render(){
 const kept=rows.filter(keep); body.textContent='';
 kept.slice(0,shown).forEach(r=>{
  const tr=document.createElement('tr'); if(r.disagrees===true) tr.className='dis';
  cell(tr,r.qid);cell(tr,r.docid+(r.docid_b?' vs '+r.docid_b:''));cell(tr,r.item);
  cell(tr,r.status,r.status==='ok'?'status-ok':'status-bad');cell(tr,fmt(r.label),'label');
  cell(tr,fmt(r.human));cell(tr,r.parse);cell(tr,r.raw.length>90?r.raw.slice(0,90)+'…':r.raw);
  tr.addEventListener('click',()=>{document.querySelectorAll('#items tr.sel').forEach(x=>x.classList.remove('sel'));
   tr.classList.add('sel');detail(r);});
  body.appendChild(tr);});
 count.textContent=kept.length+' of '+rows.length+' items match'+(kept.length>shown?' ('+shown+' listed)':'');
 more.style.display=kept.length>shown?'inline':'none';}
function detail(r){
 const d=document.getElementById('detail'); d.textContent='';
 const h=document.createElement('h2'); h.textContent='Topic '+r.qid+(r.docid?' · '+r.docid:'')+(r.docid_b?' vs '+r.docid_b:'')+(r.item?' · '+r.item:''); d.appendChild(h);
 const parts=[['status',r.status],['label',fmt(r.label)],['human grade',fmt(r.human)],['parse rule',r.parse],
  ['error',r.error],['prompt id',r.prompt_id],['cached',String(r.cached)],['prompt',r.prompt_check]];
 const p=document.createElement('p'); p.className='muted';
 p.textContent=parts.filter(x=>x[1]!=='').map(x=>x[0]+': '+x[1]).join(' · '); d.appendChild(p);
 [['Query',r.query],['Passage',r.passage],['Prompt as sent',r.prompt],['Raw answer',r.raw]].forEach(x=>{
  if(!x[1]) return; const t=document.createElement('h3');t.textContent=x[0];d.appendChild(t);
  const pre=document.createElement('pre');pre.textContent=x[1];d.appendChild(pre);});}
function fromHash(){const h=new URLSearchParams(location.hash.slice(1));
 fStatus.value=h.get('status')||'';fTopic.value=h.get('topic')||'';fDis.checked=h.get('disagrees')==='1';
 fText.value=h.get('q')||'';return h.get('open')==='1';}
function openFirst(){const tr=body.querySelector('tr');if(tr)tr.click();}
function toHash(){const h=new URLSearchParams();if(fStatus.value)h.set('status',fStatus.value);
 if(fTopic.value)h.set('topic',fTopic.value);if(fDis.checked)h.set('disagrees','1');if(fText.value)h.set('q',fText.value);
 history.replaceState(null,'','#'+h.toString());}
function changed(){shown=pageSize;toHash();render();}
[fStatus,fTopic,fDis].forEach(e=>e.addEventListener('change',changed));
fText.addEventListener('input',changed);
more.addEventListener('click',()=>{shown+=pageSize*5;render();});
window.addEventListener('hashchange',()=>{const o=fromHash();shown=pageSize;render();if(o)openFirst();});
const open=fromHash();render();if(open)openFirst();
})();
"""


#: marks each figure once decoded (``data-ok="1"``, or ``"0"`` for a broken one): the browser test reads it
FIGURE_CHECK = """
document.querySelectorAll('figure img').forEach(function(img){
 function mark(){img.dataset.ok=img.naturalWidth>0?'1':'0';}
 if(img.complete){mark();}else{img.addEventListener('load',mark);img.addEventListener('error',mark);}
});
"""


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _json_for_script(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _table(table: Table) -> str:
    head = "".join(f"<th>{esc(c)}</th>" for c in table.columns)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in table.rows)
    more = (
        f'<p class="muted">first {len(table.rows):,} of {table.total_rows:,} rows</p>'
        if table.total_rows > len(table.rows)
        else ""
    )
    return (
        f'<section class="table"><h2>{esc(table.title)}</h2><div class="wrap"><table>'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>{more}</section>"
    )


def _headline(headline: Headline | None) -> str:
    """The top section: key numbers as cards, a small table, lines saying what they are."""
    if headline is None:
        return ""
    cards = "".join(
        f'<div class="card{" bad" if c.bad else ""}"><div class="what">{esc(c.what)}</div>'
        f'<div class="value">{esc(c.value)}</div><div class="cnote">{esc(c.note)}</div></div>'
        for c in headline.cards
    )
    table = ""
    if headline.rows:
        head = "".join(f"<th>{esc(c)}</th>" for c in headline.columns)
        body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in headline.rows)
        table = f'<div class="wrap"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
    lines = "".join(f"<p>{esc(line)}</p>" for line in headline.lines)
    return (
        f'<section id="headline"><h2>{esc(headline.title)}</h2><div class="cards">{cards}</div>'
        f'{table}<div class="lines">{lines}</div></section>'
    )


def _items(page: Page) -> str:
    if page.items is None:
        return ""
    data = {"rows": [_clean(r) for r in page.items.rows]}
    return f"""<section id="browser"><h2>Items</h2>
<div id="filters">
<label>status <select id="f-status"><option value="">all</option></select></label>
<label>topic <select id="f-topic"><option value="">all</option></select></label>
<label><input type="checkbox" id="f-dis"> disagrees with the humans</label>
<label>search <input type="search" id="f-text" placeholder="answer, docid, query"></label>
<span id="f-count" class="muted"></span> <button id="f-more" type="button">show more</button>
</div>
<div class="split"><div class="wrap"><table id="items"><thead><tr><th>topic</th><th>passage</th><th>item</th><th>status</th>
<th>label</th><th>human</th><th>parse</th><th>answer</th></tr></thead><tbody></tbody></table></div>
<div id="detail"><p class="muted">Click an item to see its query, passage, prompt and answer.</p></div></div>
</section>
<script type="application/json" id="items-data">{_json_for_script(data)}</script>
<script>{SCRIPT}</script>"""


def _clean(row: dict[str, Any]) -> dict[str, Any]:
    """JSON-safe values (a NaN label becomes null)."""
    out = {}
    for key, value in row.items():
        if isinstance(value, float) and value != value:
            value = None
        out[key] = value
    return out


def render_html(page: Page) -> str:
    facts = "".join(
        f'<div class="fact{" wide" if k == "command" else ""}"><span class="k">{esc(k)}</span> {esc(v)}</div>'
        for k, v in page.facts
    )
    counts = ""
    if page.status_counts:
        spans = "".join(
            f'<span class="{"status-ok" if s == "ok" else "status-bad"}">{esc(s)}: {n:,}</span>'
            for s, n in sorted(page.status_counts.items())
        )
        counts = f'<p class="counts" id="status-counts">{spans}</p>'
    notes = "".join(f'<p class="note">{esc(n)}</p>' for n in page.notes)
    figures = "".join(
        f'<figure><img alt="{esc(f.title)}" src="data:image/png;base64,{f.png_base64}">'
        f"<figcaption>{esc(f.title)}</figcaption></figure>"
        for f in page.figures
    )
    figure_section = f'<section id="figures"><h2>Figures</h2>{figures}</section>' if figures else ""
    key_tables = "".join(_table(t) for t in page.tables if t.key)
    tables = "".join(_table(t) for t in page.tables if not t.key)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(page.title)}</title><style>{STYLE}</style></head>
<body><header><h1>{esc(page.title)}</h1></header><main>
{_headline(page.headline)}
<section id="summary"><h2>{"Details" if page.headline else "Summary"}</h2><div class="facts">{facts}</div>{counts}{notes}</section>
{_items(page)}{key_tables}{figure_section}{tables}
</main><script>{FIGURE_CHECK}</script></body></html>
"""
