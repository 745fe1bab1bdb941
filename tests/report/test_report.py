"""`judge report`: the HTML report of a run, an evaluation, a sweep or any output directory.

The run is made by `judge run` against the project's mock LLM server; hostile answers (HTML and
script in a raw answer) are appended as later records of the same keys. The optional browser
test loads the pages in headless Chromium (skipped when it is not installed)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from _cli import judge
from reljudge.errors import InputError
from reljudge.io.judgments import read_judgments
from reljudge.report import collect, render_html, write_html_report
from reljudge.testing import MockLLMServer

HOSTILE = (
    '</script><script>window.PWNED=1</script><img src=x onerror="window.PWNED=2"> &amp; ##final score: 3'
)


@pytest.fixture(scope="module")
def rundir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report") / "run"
    with MockLLMServer() as srv:
        argv = ["run", "--method", "umbrela", "--model", "openai/mock", "--base-url", srv.openai_url]
        argv += ["--dataset", "dl19-sample", "--limit", "40", "--no-cache", "--output", str(out)]
        result = judge(*argv, env={"OPENAI_API_KEY": "sk-test"})
        assert result.returncode == 0, result.output
    records = read_judgments(out)
    # two later records of the same keys: an unparsed hostile answer and an API error
    first, second = records[0], records[1]
    bad = first.model_copy(update={"status": "unparsed", "label": None, "raw": HOSTILE, "parse": None})
    err = second.model_copy(
        update={"status": "api_error", "label": None, "raw": None, "error": "HTTP 503", "parse": None}
    )
    with (out / "judgments.jsonl").open("a") as handle:
        handle.write(bad.to_json() + "\n" + err.to_json() + "\n")
    return out


def test_run_page_lists_latest_records_with_human_grades_and_prompts(rundir):
    page = collect(rundir)
    assert page.kind == "run"
    items = page.items
    assert items is not None and items.total == 40 and items.shown == 40
    assert items.status_counts == {"ok": 38, "unparsed": 1, "api_error": 1}
    assert items.human_known == 40  # dl19-sample has qrels for every pooled passage
    rows = {(r["qid"], r["docid"]): r for r in items.rows}
    records = read_judgments(rundir)
    assert rows[(records[0].qid, records[0].docid)]["status"] == "unparsed"
    ok = [r for r in items.rows if r["status"] == "ok"]
    # every label agrees or disagrees with the human grade by the binary rule at grade 2
    for row in ok:
        assert row["disagrees"] == ((row["human"] >= 2) != (row["label"] >= 2))
    assert items.disagreements == sum(bool(r["disagrees"]) for r in items.rows)
    # the prompt rendered again is byte for byte what was sent
    assert all(r["prompt_check"].startswith("the same messages as sent") for r in ok)
    assert all(r["query"] and r["passage"] and "--- user ---" in r["prompt"] for r in ok)


def test_run_page_opens_with_its_records_by_status_calls_and_cost(rundir):
    """The headline comes first: records by status (the failures marked), calls, cost, state,
    disagreements with the humans; the details and the items after it."""
    page = collect(rundir)
    assert page.headline is not None
    cards = {c.what: c for c in page.headline.cards}
    assert cards["records"].value == "40" and cards["records"].note == "ok 38, api_error 1, unparsed 1"
    assert cards["records"].bad and cards["failure share"].value == "5.0%"
    assert cards["calls"].value == "40" and cards["cost"].value.startswith("$")
    assert cards["state"].value == "finished"
    disagreements = page.items.disagreements
    assert cards["disagreements with the humans"].value == f"{disagreements} of 40"
    assert page.headline.lines == ["umbrela with openai/mock on dl19-sample (pool: qrels)"]
    text = render_html(page)
    main = text.split("<main>", 1)[1]
    assert (
        main.index('<section id="headline">')
        < main.index('<section id="summary">')
        < main.index('id="browser"')
    )
    assert re.search(r'<section id="headline">.*ok 38, api_error 1, unparsed 1', main, re.S)


def test_hostile_answer_is_text_not_markup(rundir):
    text = render_html(collect(rundir))
    assert "window.PWNED" in text  # the answer is on the page ...
    assert "<script>window.PWNED" not in text and "<img src=x" not in text  # ... never as markup
    # exactly the scripts of the page: the items data, the browser code and the figure check
    assert len(re.findall(r"<script\b", text)) == 3
    data = re.search(r'<script type="application/json" id="items-data">(.*?)</script>', text, re.S)
    assert data is not None
    rows = json.loads(data.group(1))["rows"]
    assert any(r["raw"] == HOSTILE for r in rows)
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    assert not re.search(r"""(src|href)=["']?https?:""", text)  # nothing fetched from a network


def test_max_items_keeps_failures_first(rundir):
    items = collect(rundir, max_items=3).items
    assert items is not None and items.total == 40 and items.shown == 3
    statuses = [r["status"] for r in items.rows]
    assert {"api_error", "unparsed"} <= set(statuses)
    assert [r for r in items.rows if r["status"] == "ok"][0]["disagrees"] is True  # then a disagreement
    assert any("3 of 40 items shown" in n for n in items.notes)


def test_given_qrels_override_and_missing_inputs_are_said(rundir, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(rundir, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["config"]["dataset"] = str(tmp_path / "gone")
    (copy / "manifest.json").write_text(json.dumps(manifest))
    page = collect(copy)
    assert page.items is not None and page.items.total == 40
    assert page.items.human_known == 0 and all(r["prompt"] == "" for r in page.items.rows)
    assert any("not found again" in n for n in page.notes)
    record = read_judgments(copy)[2]
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(f"{record.qid} 0 {record.docid} 3\n")
    page = collect(copy, qrels=qrels)
    assert page.items is not None and page.items.human_known == 1


def test_directory_of_tables_and_figures(tmp_path):
    out = tmp_path / "evaluation"
    out.mkdir()
    (out / "evaluation.json").write_text(json.dumps({"measure": "ndcg_cut_10", "sets": {"a": {}}}))
    (out / "kappa.csv").write_text("set,kappa\n" + "".join(f"s{i},0.{i}\n" for i in range(2500)))
    (out / "fake.png").write_text("<svg onload=alert(1)>")
    png = _tiny_png()
    (out / "plots").mkdir()
    (out / "plots" / "one.png").write_bytes(png)
    page = collect(out)
    assert page.kind == "evaluation"
    assert [t.title for t in page.tables] == ["kappa.csv"]
    assert page.tables[0].total_rows == 2500 and len(page.tables[0].rows) == 2000
    assert [f.title for f in page.figures] == ["plots/one.png"]
    assert any("fake.png: not a PNG" in n for n in page.notes)
    text = render_html(page)
    assert "first 2,000 of 2,500 rows" in text and "data:image/png;base64," in text
    path = write_html_report(out)
    assert path == out / "report.html" and path.read_text() == text


def test_bad_directories_exit_2(tmp_path):
    with pytest.raises(InputError):
        collect(tmp_path / "missing")
    with pytest.raises(InputError, match="no run, evaluation or sweep outputs"):
        collect(tmp_path)
    result = judge("report", str(tmp_path))
    assert result.returncode == 2 and "no run, evaluation or sweep outputs" in result.stderr  # an InputError
    broken = tmp_path / "run"
    broken.mkdir()
    (broken / "judgments.jsonl").write_text("{not json\n{}\n")
    (broken / "manifest.json").write_text("{}")
    with pytest.raises(InputError, match="judgments.jsonl:1"):
        collect(broken)


def test_cli_writes_report(rundir, tmp_path):
    target = tmp_path / "r.html"
    result = judge("report", str(rundir), "--out", str(target), "--max-items", "10")
    assert result.returncode == 0, result.output
    assert target.read_text().startswith("<!DOCTYPE html>")


def _tiny_png() -> bytes:
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def _dom(page: Path, fragment: str = "") -> str:
    """The page's DOM after its script ran, in headless Chromium."""
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000"]
    args += ["--dump-dom", page.as_uri() + fragment]
    return subprocess.run(args, capture_output=True, text=True, timeout=120, check=True).stdout


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
@pytest.mark.slow
def test_browser_renders_and_filters(rundir, tmp_path):
    path = write_html_report(rundir, tmp_path / "report.html")
    dom = _dom(path)
    assert "40 of 40 items match" in dom
    assert len(re.findall(r"<tr[ >]", dom.split('id="items"')[1].split("</table>")[0])) == 41  # header + rows
    dom = _dom(path, "#status=unparsed&open=1")
    assert "1 of 40 items match" in dom
    detail = dom.split('id="detail"')[1]
    assert "Raw answer" in detail and "window.PWNED=1" in detail  # shown as text in the detail
    assert '<img src="x"' not in dom and "<script>window.PWNED" not in dom  # never as markup
    dom = _dom(path, "#disagrees=1")
    disagreements = collect(rundir).items.disagreements
    assert f"{disagreements} of 40 items match" in dom
    shot = tmp_path / "shot.png"
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,900"]
    subprocess.run(
        [*args, f"--screenshot={shot}", path.as_uri()], capture_output=True, timeout=120, check=True
    )
    assert shot.stat().st_size > 10_000


def test_outputs_follow_the_umask(tmp_path):
    """Atomic writes give the mode a plain open() would (issue 17: they were 0600 whatever the umask)."""
    import os
    import stat

    from reljudge.io.atomic import write_text_atomic

    old = os.umask(0o022)
    try:
        write_text_atomic(tmp_path / "a.txt", "x")
        assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o644
        os.umask(0o077)
        write_text_atomic(tmp_path / "b.txt", "x")
        assert stat.S_IMODE((tmp_path / "b.txt").stat().st_mode) == 0o600
        (tmp_path / "a.txt").chmod(0o640)  # a replaced file keeps its mode
        write_text_atomic(tmp_path / "a.txt", "y")
        assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o640
    finally:
        os.umask(old)


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
@pytest.mark.slow
def test_browser_renders_evaluation_and_sweep_pages(rundir, tmp_path):
    """An evaluation (of the mock run against the sample's qrels, with figures) and a sweep (the
    bundled example against the mock server): tables and images render in a real browser."""
    pytest.importorskip("matplotlib")
    evaluation = tmp_path / "evaluation"
    result = judge(
        "evaluate", "--dataset", "dl19-sample", "--judgments", str(rundir), "--plot", "--out", str(evaluation)
    )
    assert result.returncode == 0, result.output
    dom = _dom(write_html_report(evaluation))
    assert dom.count('data-ok="1"') == len(list(evaluation.glob("*.png"))) >= 1
    assert 'data-ok="0"' not in dom and "kappa.csv" in dom and "alignment.csv" in dom

    example = Path(__file__).resolve().parents[2] / "examples" / "sweep-sample.yaml"
    with MockLLMServer() as srv:
        config = tmp_path / "sweep.yaml"
        text = example.read_text().replace("http://127.0.0.1:8765/v1", srv.openai_url)
        config.write_text(text.replace("../runs/sweep-dl19-sample", "sweep/dl19-sample"))
        result = judge(
            "sweep", str(config), "--only", "task=binary", env={"RELJUDGE_CACHE": str(tmp_path / "c.sqlite")}
        )
        assert result.returncode == 0, result.output
    analysis = tmp_path / "sweep" / "dl19-sample" / "analysis"
    dom = _dom(write_html_report(analysis))
    assert collect(analysis).kind == "sweep"
    pngs = list(analysis.rglob("*.png"))
    assert pngs and dom.count('data-ok="1"') == len(pngs)
    assert "cells.csv" in dom and "summary.csv" in dom


@pytest.mark.shared
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
@pytest.mark.slow
def test_browser_renders_a_dl21_evaluation(shared_data, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "dl21"
    argv = [
        "evaluate",
        "--dataset",
        str(shared_data / "trec-dl21"),
        "--runs",
        str(shared_data / "trec-dl21" / "runs"),
    ]
    argv += ["--judgments", str(shared_data / "llm-judgments" / "gpt-4o" / "umbrela.dl21.qrels")]
    argv += ["--bootstrap", "0", "--plot", "--out", str(out)]
    result = judge(*argv)
    assert result.returncode == 0, result.output
    dom = _dom(write_html_report(out))
    pngs = list(out.glob("*.png"))
    assert len(pngs) >= 2 and dom.count('data-ok="1"') == len(pngs)  # alignment.png, compatibility.png, ...
    assert "compatibility.csv" in dom and "qrels_ranking.csv" in dom


def test_figures_are_bounded_in_total(tmp_path, monkeypatch):
    import reljudge.report.contents as contents

    png = _tiny_png()
    for i in range(5):
        (tmp_path / f"f{i}.png").write_bytes(png)
    monkeypatch.setattr(contents, "MAX_TOTAL_FIGURE_BYTES", 3 * len(png))
    page = collect(tmp_path)
    assert len(page.figures) == 3
    assert sum("not embedded (the page holds at most" in n for n in page.notes) == 2


def test_an_oversized_manifest_is_not_read(rundir, tmp_path, monkeypatch):
    """The report reads a run's manifest through `RunDir.read_manifest`, which bounds its size."""
    import reljudge.io.rundir as rundir_module

    copy = tmp_path / "run"
    shutil.copytree(rundir, copy)
    monkeypatch.setattr(rundir_module, "MAX_MANIFEST_BYTES", 100)
    with pytest.raises(InputError, match="larger than"):
        collect(copy)


@pytest.mark.slow
def test_human_checks_beside_the_llm_labels(rundir, tmp_path):
    task = tmp_path / "task.jsonl"
    ran = judge("select", rundir, "--budget", "12", "-o", task)
    assert ran.returncode == 0, ran.output
    items = [json.loads(line) for line in task.read_text().splitlines()[1:]]
    people = tmp_path / "people.jsonl"
    rows = []
    for n, it in enumerate(items):
        label = it["llm_label"] if n % 3 else (it["llm_label"] + 1) % 4  # every third one differs
        rows.append({"item": it["item"], "qid": it["qid"], "docid": it["docid"], "label": label,
                     "llm_label": it["llm_label"], "assessor": "<b>ann</b>", "seconds": 2.0, "seq": n})  # fmt: skip
    people.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "r.html"
    ran = judge("report", rundir, "--out", out, "--assessments", people, "--task", task)
    assert ran.returncode == 0, ran.output
    page = out.read_text()
    assert "human checks by stratum" in page and "human checks: disagreements" in page
    assert "&lt;b&gt;ann&lt;/b&gt;: " in page and "<b>ann</b>" not in page
    report = collect(rundir, assessments=[people], task=task)
    by_stratum = report.tables[0]
    assert by_stratum.rows[-1][:2] == ["all", "12"]
    assert report.tables[1].total_rows == 4
    people.write_text(people.read_text() + "{torn")  # a torn last line: the checks before it stand
    assert judge("report", rundir, "--out", out, "-a", people, "--task", task).returncode == 0
    people.write_text("{bad\n" + people.read_text())
    ran = judge("report", rundir, "--out", out, "-a", people, "--task", task)
    assert ran.returncode == 2 and f"{people}:1:" in ran.stderr
