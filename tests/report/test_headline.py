"""Reports open with their key numbers (`reljudge.report.headline`): the headline section is the
first of the page and holds the numbers a reader came for; an evaluation's τ and κ tables come
before its figures (before, the summary held two facts and the τ table came last)."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from reljudge.report import collect, render_html
from reljudge.report.headline import factor_spread

INTERVAL = "95% CI: t interval with the bootstrap standard error (1000 resamples of the topics)"


def _evaluation(directory: Path, *, runs: bool = True) -> Path:
    directory.mkdir()
    ranking = {"runs": 8, "kendall_tau_b": 0.857, "kendall_ci_low": 0.462, "kendall_ci_high": 1.0}
    data = {
        "settings": {
            "human_threshold": 2,
            "n_boot": 1000,
            "ranking_interval": INTERVAL,
            "relevance_level_source": "declared by dataset dl19-sample",
            "measure_definitions": {"ndcg_cut_10": "nDCG@10"},
        },
        "measure": "ndcg_cut_10",
        "topics": 5,
        "human_measure": {f"run{i}": {"1": 0.5} for i in range(8)} if runs else {},
        "sets": [
            {
                "name": "umbrela.dl19",
                "labels": 684,
                "topics": 5,
                "kappa": {"binary": 0.532, "judge_threshold": ">= 2", "graded_quadratic": 0.653},
                "ranking_agreement": ranking if runs else {},
                "qrels_ranking_agreement": {"ndcg_cut_10": {**ranking, "kendall_tau_b": 0.929}}
                if runs
                else {},
            },
            {
                "name": "exam-binary.dl19",
                "labels": 684,
                "topics": 5,
                "kappa": {"binary": 0.337, "judge_threshold": "> 0"},
                "ranking_agreement": {**ranking, "kendall_tau_b": 0.714} if runs else {},
                "qrels_ranking_note": "ndcg_cut_10: the values are not gains",
            },
        ],
    }
    (directory / "evaluation.json").write_text(json.dumps(data))
    (directory / "alignment.csv").write_text("set,agree\numbrela.dl19,0.9\n")
    (directory / "kappa.csv").write_text("set,binary\numbrela.dl19,0.532\n")
    if runs:
        (directory / "ranking.csv").write_text("set,kendall_tau_b\numbrela.dl19,0.857\n")
    (directory / "scales.csv").write_text("set,meaning\numbrela.dl19,grades\n")
    (directory / "alignment.png").write_bytes(_tiny_png())
    return directory


def _tiny_png() -> bytes:
    """A 1×1 PNG."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    idat = chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + idat + chunk(b"IEND", b"")


def _sections(text: str) -> list[str]:
    """The ids or headings of the page's sections, in order."""
    main = text.split("<main>", 1)[1]
    found = []
    for match in re.finditer(r'<section(?: id="([^"]+)")?(?: class="[^"]*")?><h2>([^<]*)</h2>', main):
        found.append(match.group(1) or match.group(2))
    return found


def test_an_evaluation_opens_with_tau_and_kappa_then_its_tables_then_figures(tmp_path):
    page = collect(_evaluation(tmp_path / "evaluation"))
    headline = page.headline
    assert headline is not None
    cards = {c.what: c.value for c in headline.cards}
    assert cards["topics"] == "5" and cards["runs ranked"] == "8" and cards["judgment sets"] == "2"
    rows = {row[0]: row for row in headline.rows}
    assert rows["umbrela.dl19"][3] == "0.929 [0.462, 1.000]"  # the set as qrels, with its interval
    assert rows["umbrela.dl19"][4] == "0.857 [0.462, 1.000]"  # compatibility
    assert rows["umbrela.dl19"][5] == "0.532" and rows["umbrela.dl19"][6] == ">= 2"
    assert rows["exam-binary.dl19"][3] == "–"
    text = " ".join(headline.lines)
    assert INTERVAL in text  # what the interval is
    assert "grade >= 2" in text and "declared by dataset dl19-sample" in text
    assert "not computed for exam-binary.dl19" in text

    html = render_html(page)
    order = _sections(html)
    assert order[0] == "headline" and order[1] == "summary"
    assert order.index("ranking.csv") < order.index("kappa.csv") < order.index("alignment.csv")
    assert order.index("alignment.csv") < order.index("figures") < order.index("scales.csv")
    headline_html = html.split('<section id="headline">', 1)[1].split("</section>", 1)[0]
    assert "0.929 [0.462, 1.000]" in headline_html and "0.532" in headline_html


def test_an_evaluation_without_runs_says_there_is_no_tau(tmp_path):
    headline = collect(_evaluation(tmp_path / "evaluation", runs=False)).headline
    assert headline is not None
    runs = next(c for c in headline.cards if c.what == "runs ranked")
    assert runs.value == "none" and runs.bad and "--runs" in runs.note
    assert any("without --runs" in line for line in headline.lines)


def _cells(path: Path, values: dict[tuple[str, str], float]) -> None:
    columns = ["dataset", "model", "task", "prompt", "group", "items", "invalid", "metric", "value"]
    columns += ["calls", "cost_usd"]
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for (model, prompt), value in values.items():
            writer.writerow(["dl19", model, "binary", prompt, "g", 10, 1, "kappa", value, 10, 0.01])


def test_a_sweep_opens_with_its_cells_cost_and_its_most_sensitive_factor(tmp_path):
    sweep = tmp_path / "sweep"
    (sweep / "analysis").mkdir(parents=True)
    (sweep / "sweep.json").write_text(json.dumps({"name": "prompts", "config": "sweep.yaml"}))
    # the prompt moves κ by 0.5, the model by 0.1
    values = {("m1", "p1"): 0.8, ("m1", "p2"): 0.3, ("m2", "p1"): 0.7, ("m2", "p2"): 0.2}
    _cells(sweep / "analysis" / "cells.csv", values)
    rows = list(csv.DictReader((sweep / "analysis" / "cells.csv").open()))
    assert factor_spread(rows, "prompt") == pytest.approx(0.5)
    assert factor_spread(rows, "model") == pytest.approx(0.1)
    for directory in (sweep, sweep / "analysis"):  # the sweep's own directory or its analysis
        page = collect(directory)
        assert page.kind == "sweep" and page.headline is not None
        cards = {c.what: (c.value, c.note) for c in page.headline.cards}
        assert cards["cells"][0] == "4" and cards["calls"][0] == "40" and cards["cost"][0] == "$0.0400"
        assert cards["invalid answers"] == ("10.0%", "4 of 40 items")
        assert cards["most sensitive to"][0] == "the prompt" and cards["least sensitive to"][0] == "the model"
        (row,) = page.headline.rows
        assert row[3] == "p1 (0.750)" and row[4] == "p2 (0.250)"
        html = render_html(page)
        assert _sections(html)[0] == "headline" and "the prompt" in html
    assert collect(sweep).title == "reljudge report: sweep prompts"


def test_one_set_gets_its_kappa_and_tau_as_cards(tmp_path):
    directory = _evaluation(tmp_path / "evaluation")
    data = json.loads((directory / "evaluation.json").read_text())
    data["sets"] = data["sets"][:1]
    (directory / "evaluation.json").write_text(json.dumps(data))
    cards = {c.what: c.value for c in collect(directory).headline.cards}
    assert cards["Kendall τ-b (nDCG@10, set as qrels)"] == "0.929 [0.462, 1.000]"
    assert cards["Cohen's κ (binary)"] == "0.532"
    data["human_measure"], data["sets"][0]["ranking_agreement"] = {}, {}
    data["sets"][0]["qrels_ranking_agreement"] = {}
    (directory / "evaluation.json").write_text(json.dumps(data))
    cards = {c.what: c.value for c in collect(directory).headline.cards}
    assert "Cohen's κ (binary)" in cards and not any(w.startswith("Kendall") for w in cards)  # no τ, no card
