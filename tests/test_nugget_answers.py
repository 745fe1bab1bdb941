"""Nugget evaluation of generated answers (``judge run --method nuggets --answers FILE...``) end to
end against the mock LLM server: nuggets made once per topic and assigned to each system's answer,
records with the answer's provenance, per-topic and per-system scores checked against nuggetizer's
formulas, resume and re-run without calls, a changed answer judged again, echoed prompts never
labelling, the dry run exact in calls, the mock that follows the human grade, and bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reljudge.cli import app
from reljudge.datasets import load_dataset
from reljudge.errors import EXIT_BAD_INPUT, InputError
from reljudge.io.answer_nugget_scores import read_answer_scores, read_topic_scores_csv
from reljudge.io.judgments import read_judgments
from reljudge.io.rundir import RunDir
from reljudge.testing import AutoResponder, MockLLMServer, MockReply
from reljudge.testing.grades import GradeBook

MODEL = "openai/mock-model"
ASSIGN = "nugget-assignment"


@pytest.fixture(scope="module")
def server():
    with MockLLMServer() as srv:
        yield srv


@pytest.fixture()
def srv(server):
    server.responder = AutoResponder()
    server.reset()
    return server


@pytest.fixture(scope="module")
def sample():
    """dl19-sample: two topics, each with a grade-3, a grade-1 and a grade-0 passage as answers."""
    data = load_dataset("dl19-sample")
    picks = {}
    for qid, docs in data.qrels.items():
        by_grade = {g: sorted(d for d, v in docs.items() if v == g and d in data.corpus) for g in (3, 1, 0)}
        if all(by_grade.values()):
            picks[qid] = {g: by_grade[g][0] for g in (3, 1, 0)}
        if len(picks) == 2:
            break
    assert len(picks) == 2
    return data, picks


def _answers(
    tmp_path: Path, sample, systems=(("a", 3), ("b", 1), ("c", 0)), name="answers.tsv", prefix=""
) -> Path:
    """An answers TSV: each system answers each topic with the text of its passage of grade g."""
    data, picks = sample
    path = tmp_path / name
    lines = [
        f"{s}\t{q}\t{prefix}{' '.join(data.corpus[p[g]].split())}"
        for s, g in systems
        for q, p in picks.items()
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def run(srv: MockLLMServer, out: Path, *args: str, dataset: str = "dl19-sample") -> tuple[int, str]:
    argv = ["run", "--method", "nuggets", "--model", MODEL, "--base-url", srv.openai_url]
    argv += ["--dataset", dataset, "--output", str(out), "--cache", str(out.parent / "cache.sqlite")]
    argv += ["--no-progress", *args]
    result = CliRunner().invoke(app, argv, env={"OPENAI_API_KEY": "sk-test-nuggets-answers"})
    if isinstance(result.exception, InputError):
        return EXIT_BAD_INPUT, f"error: {result.exception}"
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def _nuggetizer_scores(labels: list[tuple[str, str]]) -> dict[str, float | None]:
    """castorini/nuggetizer's ``calculate_nugget_scores`` (strict: support only; else partial 0.5),
    written again here from its source, with reljudge's None for Vital without a vital nugget and
    TREC RAG 2024's Weighted (vital 1, okay 0.5)."""
    credit = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}
    strict = {k: float(k == "support") for k in credit}
    vital = [a for imp, a in labels if imp == "vital"]
    okay = [a for imp, a in labels if imp == "okay"]
    allv = [a for _, a in labels]

    def mean(xs, table):
        return sum(table[x] for x in xs) / len(xs) if xs else None

    def weighted(table):
        return (sum(table[x] for x in vital) + 0.5 * sum(table[x] for x in okay)) / (
            len(vital) + 0.5 * len(okay)
        )

    return {
        "all": mean(allv, credit), "all-strict": mean(allv, strict),
        "vital": mean(vital, credit), "vital-strict": mean(vital, strict),
        "weighted": weighted(credit), "weighted-strict": weighted(strict),
    }  # fmt: skip


def test_answers_get_the_topic_nuggets_once_and_scores_per_topic_and_system(srv, tmp_path, sample):
    answers = _answers(tmp_path, sample)
    out = tmp_path / "run"
    code, text = run(srv, out, "--answers", str(answers))
    assert code == 0, text
    assert "answer scores:" in text and "all-strict" in text
    records = read_judgments(out / "judgments.jsonl")
    nuggets = [r for r in records if r.method == "nugget" and r.extra.get("selected")]
    by_topic = {q: [n for n in nuggets if n.qid == q] for q in sample[1]}
    assert all(by_topic.values())
    # nuggets made once per topic: each topic's creation windows are asked once, not per system
    windows = [r.item_id for r in records if r.method == "nugget-creation"]
    assert len(windows) == len(set((r.qid, r.item_id) for r in records if r.method == "nugget-creation"))
    assignments = [r for r in records if r.method == ASSIGN]
    assert {r.docid for r in assignments} == {"a", "b", "c"}  # assigned to answers, never to passages
    assert len(assignments) == 3 * sum(len(ns) for ns in by_topic.values())
    for r in assignments:
        assert r.extra["system"] == r.docid and r.extra["answer_file"] == str(answers)
        assert len(r.extra["answer_sha256"]) == 64 and r.provenance.prompt_id == "nuggets/assign"
    # the scores, recomputed from the records with nuggetizer's formulas
    importance = {n.item_id: n.extra["importance"] for n in nuggets}
    table = read_answer_scores(out)
    assert len(table["topics"]) == 6 and [r["system"] for r in table["systems"]] == ["a", "b", "c"]
    for row in table["topics"]:
        labels = [
            (importance[r.item_id], r.extra["assignment"])
            for r in assignments
            if r.qid == row["qid"] and r.docid == row["system"]
        ]
        expected = _nuggetizer_scores(labels)
        for score, value in expected.items():
            assert row[score] == pytest.approx(value) if value is not None else row[score] is None
    for srow in table["systems"]:
        rows = [r for r in table["topics"] if r["system"] == srow["system"]]
        assert srow["topics"] == 2
        assert srow["all"] == pytest.approx(sum(r["all"] for r in rows) / 2)
    # the CSV holds the same rows
    assert read_topic_scores_csv(out / "answer-nuggets-topics.csv") == table["topics"]
    # the same command again: no call, the same scores
    calls = srv.calls
    srv.reset()
    code, text = run(srv, out, "--answers", str(answers))
    assert code == 0, text
    assert srv.calls == 0 and read_answer_scores(out) == table
    assert calls > 0


def test_a_new_system_reuses_the_nuggets_and_a_changed_answer_is_judged_again(srv, tmp_path, sample):
    first = _answers(tmp_path, sample, systems=(("a", 3),), name="a.tsv")
    out = tmp_path / "run"
    assert run(srv, out, "--answers", str(first))[0] == 0
    nuggets = {
        q: sum(1 for r in read_judgments(out / "judgments.jsonl") if r.method == "nugget" and r.qid == q and r.extra.get("selected"))
        for q in sample[1]
    }  # fmt: skip
    second = _answers(tmp_path, sample, systems=(("b", 1), ("c", 0)), name="bc.tsv")
    srv.reset()
    assert run(srv, out, "--answers", str(first), "--answers", str(second))[0] == 0
    # only assignments: S new systems x T topics x ceil(N_t / 10) batches, no creation or scoring
    assert srv.calls == 2 * sum(math.ceil(n / 10) for n in nuggets.values())
    assert all("partial_support" in r.prompt for r in srv.requests)
    # system a's answer to one topic changes: that answer alone is assigned again
    data, picks = sample
    qid = next(iter(picks))
    changed = tmp_path / "a2.tsv"
    changed.write_text(f"a\t{qid}\tA revised answer: {' '.join(data.corpus[picks[qid][1]].split())}\n")
    srv.reset()
    code, text = run(srv, out, "--answers", str(changed), "--answers", str(second))
    assert code == 0, text
    assert srv.calls == math.ceil(nuggets[qid] / 10)
    latest = RunDir(out).judgments(latest=True)
    shas = {
        r.extra["answer_sha256"] for r in latest if r.method == ASSIGN and r.docid == "a" and r.qid == qid
    }
    assert len(shas) == 1  # the new records supersede the old ones


def test_an_echoed_assignment_prompt_never_labels_an_answer(srv, tmp_path, sample):
    auto = AutoResponder()

    def echo_assignments(req):
        if "partial_support" in req.prompt:  # the assignment prompt (not the vital/okay one)
            return MockReply(text=req.last_user)  # the prompt back, with its label words
        return auto(req)

    srv.responder = echo_assignments
    out = tmp_path / "run"
    code, text = run(srv, out, "--answers", str(_answers(tmp_path, sample)), "--max-failure-rate", "1")
    assert code == 0, text
    assignments = [r for r in RunDir(out).judgments(latest=True) if r.method == ASSIGN]
    assert assignments and all(r.status == "unparsed" and r.label is None for r in assignments)
    assert read_answer_scores(out)["topics"] == []


def test_dry_run_is_exact_in_calls_once_the_nuggets_exist(srv, tmp_path, sample):
    out = tmp_path / "run"
    first = _answers(tmp_path, sample, systems=(("a", 3),), name="a.tsv")
    code, text = run(srv, out, "--answers", str(first), "--dry-run", "--json")
    assert code == 0 and "assuming 30 nuggets" in json.loads(text)["estimate"]["note"]
    assert run(srv, out, "--answers", str(first))[0] == 0
    everyone = _answers(tmp_path, sample, systems=(("b", 1), ("d", 3)), name="bd.tsv", prefix="So: ")
    srv.reset()
    code, text = run(srv, out, "--answers", str(first), "--answers", str(everyone), "--dry-run", "--json")
    assert code == 0, text
    estimate = json.loads(text)["estimate"]
    assert srv.calls == 0 and "2 topic(s) with nuggets in the run directory: exact" in estimate["note"]
    assert run(srv, out, "--answers", str(first), "--answers", str(everyone))[0] == 0
    assert srv.calls == estimate["calls"] > 0


def test_the_mock_follows_the_human_grade(srv, tmp_path, sample):
    data, picks = sample
    book = GradeBook(data.paths["qrels"], data.paths["corpus"], data.paths["topics"])
    qid, p = next(iter(picks.items()))
    query, nuggets = data.topics[qid], [f"fact {i}" for i in range(8)]
    assert book.labels(query, data.corpus[p[3]], nuggets) == ["support"] * 8
    ones = book.labels(query, data.corpus[p[1]], [f"fact {i}" for i in range(40)])
    assert set(ones) <= {"support", "partial_support"} and 0 < ones.count("support") < 20
    assert book.labels(query, data.corpus[p[0]], nuggets) == ["not_support"] * 8
    assert book.labels(query, "a text nobody judged", nuggets) == ["not_support"] * 8
    assert book.labels("another query", data.corpus[p[3]], nuggets) == ["not_support"] * 8
    two = [d for d, g in data.qrels[qid].items() if g == 2 and d in data.corpus]
    if two:
        labels = book.labels(query, data.corpus[two[0]], [f"fact {i}" for i in range(40)])
        assert set(labels) <= {"support", "partial_support"} and labels.count("support") > 20
    # through the pipeline: a (grade 3) > b (grade 1) > c (grade 0), strict and not
    auto = AutoResponder()
    rule = book.rule()
    auto.register(rule.name, rule.match, rule.reply)
    srv.responder = auto
    out = tmp_path / "run"
    assert run(srv, out, "--answers", str(_answers(tmp_path, sample)))[0] == 0
    systems = {r["system"]: r for r in read_answer_scores(out)["systems"]}
    assert systems["a"]["all"] == 1.0 > systems["b"]["all"] > 0.5 and systems["c"]["all"] == 0.0
    assert systems["a"]["all-strict"] == 1.0 > systems["b"]["all-strict"] > systems["c"]["all-strict"] == 0.0


def test_bad_answer_files_are_file_line_errors_and_write_nothing(srv, tmp_path, sample):
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\t156493\tan answer\nb\tonly two columns\n")
    out = tmp_path / "run"
    code, text = run(srv, out, "--answers", str(bad))
    assert code == EXIT_BAD_INPUT and f"{bad}:2:" in text
    assert not out.exists() and srv.calls == 0
    twice = _answers(tmp_path, sample, systems=(("a", 3),), name="again.tsv")
    code, text = run(srv, out, "--answers", str(twice), "--answers", str(twice))
    assert code == EXIT_BAD_INPUT and not out.exists()
    assert f"error: {twice}:1: system 'a' answers topic" in text and f"already in {twice}:1" in text
    code, text = run(srv, out, "--answers", str(twice), "--method", "umbrela")
    assert code == EXIT_BAD_INPUT and "--answers is for --method citation-support or nuggets" in text


EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "answers" / "rag24-example.jsonl"
#: a two-topic collection for the TREC RAG 2024 example's topics (passages written for this test)
MINI_PASSAGES = {
    "msmarco_v2.1_doc_45_546308869#11_963663453": "A landlord who fails to repair broken locks may be liable "
    "when an intruder injures a tenant, because the crime was foreseeable.",
    "msmarco_v2.1_doc_45_546308869#10_963661464": "Courts ask whether the landlord was negligent: "
    "inadequate lighting, locks or security after earlier break-ins can make the landlord responsible.",
    "d-landlord-0": "Tenants must pay rent on the first day of each month unless the lease says otherwise.",
    "msmarco_v2.1_doc_52_1105998034#2_2241452829": "Vicarious trauma is the cumulative effect of hearing "
    "about other people's trauma; supervision, peer support and self-care help professionals cope.",
    "d-trauma-1": "Secondary traumatic stress affects nurses, therapists and first responders.",
}


def _mini_collection(tmp_path: Path) -> list[str]:
    (tmp_path / "topics.tsv").write_text(
        "23287\tare landlords liable if someone breaks in a hurts tenant\n"
        "2024-145979\twhat is vicarious trauma and how can it be coped with?\n"
    )
    (tmp_path / "qrels.txt").write_text(
        "23287 0 msmarco_v2.1_doc_45_546308869#11_963663453 3\n"
        "23287 0 msmarco_v2.1_doc_45_546308869#10_963661464 2\n"
        "23287 0 d-landlord-0 0\n"
        "2024-145979 0 msmarco_v2.1_doc_52_1105998034#2_2241452829 3\n"
        "2024-145979 0 d-trauma-1 1\n"
    )
    (tmp_path / "passages.tsv").write_text("".join(f"{d}\t{t}\n" for d, t in MINI_PASSAGES.items()))
    return ["--topics", str(tmp_path / "topics.tsv"), "--qrels", str(tmp_path / "qrels.txt")] + [
        "--corpus",
        str(tmp_path / "passages.tsv"),
    ]


def _run_files(srv: MockLLMServer, out: Path, *args: str) -> tuple[int, str]:
    argv = [
        "run",
        "--method",
        "nuggets",
        "--model",
        MODEL,
        "--base-url",
        srv.openai_url,
        "--output",
        str(out),
    ]
    argv += ["--cache", str(out.parent / "cache.sqlite"), "--no-progress", *args]
    result = CliRunner().invoke(app, argv, env={"OPENAI_API_KEY": "sk-test-nuggets-answers"})
    if isinstance(result.exception, InputError):
        return EXIT_BAD_INPUT, f"error: {result.exception}"
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def test_trec_rag24_answers_round_trip_to_per_topic_scores(srv, tmp_path):
    from reljudge.io.answers import read_rag24
    from reljudge.judges.nuggets.answers import answer_table

    files = _mini_collection(tmp_path)
    out = tmp_path / "run"
    code, text = _run_files(srv, out, *files, "--answers", str(EXAMPLE))
    assert code == 0, text
    answers = {a.qid: a for a in read_rag24(EXAMPLE)}
    # each answer is judged as nuggetizer sends it: its sentences joined by spaces
    assigned = [r for r in srv.requests if "partial_support" in r.prompt]
    for qid, answer in answers.items():
        assert any(f"Passage: {answer.text}\n" in r.last_user for r in assigned), qid
    written = read_answer_scores(out)
    recomputed = answer_table(RunDir(out).judgments(latest=True))
    assert written["topics"] == recomputed.topics and written["systems"] == recomputed.systems
    assert {(r["system"], r["qid"]) for r in written["topics"]} == {
        ("bm25_rank-zephyr-rho_gpt-4o", "23287"),
        ("bm25_rank-zephyr-rho_gpt-4o", "2024-145979"),
    }
    assert read_topic_scores_csv(out / "answer-nuggets-topics.csv") == written["topics"]


def test_malformed_trec_rag24_files_are_file_line_errors_exit_2(srv, tmp_path):
    files = _mini_collection(tmp_path)
    lines = EXAMPLE.read_text().splitlines()
    bad_citation = json.loads(lines[1])
    bad_citation["answer"][0]["citations"] = [5]  # outside the references
    cases = {
        "citation.jsonl": [lines[0], json.dumps(bad_citation)],
        "json.jsonl": [lines[0], lines[1][:-10]],
        "missing.jsonl": [
            lines[0],
            json.dumps({k: v for k, v in json.loads(lines[1]).items() if k != "answer"}),
        ],
    }
    for name, content in cases.items():
        path = tmp_path / name
        path.write_text("\n".join(content) + "\n")
        out = tmp_path / f"run-{name}"
        code, text = _run_files(srv, out, *files, "--answers", str(path))
        assert code == EXIT_BAD_INPUT and f"{path}:2:" in text, (name, text)
        assert not out.exists()
    assert srv.calls == 0
    # through the command line itself: one line on stderr, exit code 2
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "reljudge", "run", "--method", "nuggets", "--model", MODEL, "--base-url"]
        + [
            srv.openai_url,
            *files,
            "--answers",
            str(tmp_path / "citation.jsonl"),
            "--out",
            str(tmp_path / "x"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == EXIT_BAD_INPUT and done.stderr.startswith(
        f"error: {tmp_path / 'citation.jsonl'}:2:"
    )


def test_a_run_without_answers_is_unchanged(srv, tmp_path):
    """Regression: --answers left out must parse to None (its parser once iterated None)."""
    code, text = run(srv, tmp_path / "run", "--dry-run", "--json")
    assert code == 0, text
    estimate = json.loads(text)["estimate"]
    assert "(passages; assuming 30 nuggets per topic" in estimate["note"] and srv.calls == 0


def test_mock_server_grades_from_needs_a_corpus_and_the_auto_responder(tmp_path):
    data = load_dataset("dl19-sample")
    runner = CliRunner()
    for extra, message in (
        ([], "--grades-from needs --corpus"),
        (
            ["--corpus", str(data.paths["corpus"]), "--responder", "echo"],
            "--grades-from works with --responder auto",
        ),
        (["--corpus", str(tmp_path / "missing.tsv")], "--grades-from:"),
    ):
        result = runner.invoke(app, ["mock-server", "--grades-from", str(data.paths["qrels"]), *extra])
        assert isinstance(result.exception, InputError) and message in str(result.exception), result.output
    for extra, message in ((["--corpus", str(data.paths["corpus"])], "go with --grades-from"),):
        result = runner.invoke(app, ["mock-server", *extra])
        assert isinstance(result.exception, InputError) and message in str(result.exception), result.output


def test_topics_limit_keeps_the_first_answered_topics_and_limit_is_refused(srv, tmp_path, sample):
    answers = _answers(tmp_path, sample)
    out = tmp_path / "run"
    code, text = run(srv, out, "--answers", str(answers), "--topics-limit", "1")
    assert code == 0, text
    records = RunDir(out).judgments(latest=True)
    first = next(q for q in load_dataset("dl19-sample").topics if q in sample[1])  # topics order
    assert {r.qid for r in records} == {first}
    assert {r["qid"] for r in read_answer_scores(out)["topics"]} == {first}
    code, text = run(srv, tmp_path / "other", "--answers", str(answers), "--limit", "5")
    assert code == EXIT_BAD_INPUT and "--topics-limit" in text


def test_an_answer_to_a_topic_without_judgments_is_recorded_skipped(srv, tmp_path, sample):
    answers = _answers(tmp_path, sample, systems=(("a", 3),))
    with answers.open("a") as handle:
        handle.write("a\tno-such-topic\tan answer to a topic nobody judged\n")
    out = tmp_path / "run"
    code, text = run(srv, out, "--answers", str(answers))
    assert code == 0, text
    skipped = [r for r in RunDir(out).judgments(latest=True) if r.qid == "no-such-topic"]
    assert len(skipped) == 1 and skipped[0].status == "skipped" and "not evaluated" in skipped[0].error


def test_a_run_over_answers_is_not_mixed_with_one_over_passages(srv, tmp_path, sample):
    out = tmp_path / "run"
    assert run(srv, out, "--answers", str(_answers(tmp_path, sample, systems=(("a", 3),))))[0] == 0
    code, text = run(srv, out)
    assert code == EXIT_BAD_INPUT and "answers was True, now False" in text
    spaced = tmp_path / "spaced.tsv"  # a system name is the records' document id: no whitespace
    spaced.write_text(f"my run\t{next(iter(sample[1]))}\tan answer\n")
    code, text = run(srv, tmp_path / "other", "--answers", str(spaced))
    assert code == EXIT_BAD_INPUT and "whitespace" in text


def test_a_partly_reassigned_answer_is_incomplete_not_a_mix_of_two_texts(srv, tmp_path, sample):
    """Regression: the nugget scores of answers had no newest-SHA filter, so an answer whose new
    text was only partly assigned (an interrupted run) was scored from the old and new records."""
    from reljudge.judges.nuggets.answers import answer_table, render_table

    first = _answers(tmp_path, sample, systems=(("a", 3),), name="a.tsv")
    out = tmp_path / "run"
    assert run(srv, out, "--answers", str(first))[0] == 0
    data, picks = sample
    qid = next(iter(picks))
    changed = tmp_path / "a2.tsv"
    changed.write_text(f"a\t{qid}\tA revised answer: {' '.join(data.corpus[picks[qid][0]].split())}\n")
    assert run(srv, out, "--answers", str(changed))[0] == 0
    # the new text's last assignment record is lost (as if the run had stopped before it)
    path = out / "judgments.jsonl"
    lines = path.read_text().splitlines()
    new_sha = {
        r.extra["answer_sha256"]
        for r in RunDir(out).judgments(latest=True)
        if r.method == ASSIGN and r.docid == "a" and r.qid == qid
    }
    assert len(new_sha) == 1
    last = max(i for i, line in enumerate(lines) if next(iter(new_sha)) in line)
    path.write_text("\n".join(lines[:last] + lines[last + 1 :]) + "\n")
    records = RunDir(out).judgments(latest=True)
    shas = {
        r.extra["answer_sha256"] for r in records if r.method == ASSIGN and r.docid == "a" and r.qid == qid
    }
    assert len(shas) == 2  # one old record still stands for the lost key
    table = answer_table(records)
    assert (qid, "a") in table.incomplete
    assert all(row["qid"] != qid for row in table.topics)
    assert f"a/{qid}" in render_table(table)
    # the run resumes: the lost assignment is made again and the answer is scored from one text
    code, text = run(srv, out, "--answers", str(changed), "--json")
    assert code == 0, text
    payload = json.loads(text)
    assert payload["answers"]["incomplete"] == [] and [
        r["topics"] for r in payload["answers"]["systems"]
    ] == [2]
    table = answer_table(RunDir(out).judgments(latest=True))
    assert table.incomplete == [] and any(row["qid"] == qid for row in table.topics)
