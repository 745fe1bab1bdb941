"""`judge select` and `judge estimate`: strategies, order independence, the task and assessment
files (torn last line, FILE:LINE errors, undo), a task that does not match its run."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from _cli import judge
from reljudge.analyses.humans.design import allocate, stratified_sample, top_by_score, uncertainty_score
from reljudge.analyses.humans.files import read_assessments, read_task
from reljudge.errors import InputError
from reljudge.io.judgments import write_judgments
from reljudge.records import Judgment

TOPICS = [f"q{t}" for t in range(6)]
DOCS = [f"d{j:02d}" for j in range(20)]


def _grades(q: str, d: str) -> tuple[int, int]:
    """(human, llm) grade of a pair, fixed by its name."""
    h = (int(q[1:]) * 7 + int(d[1:]) * 3) % 4
    llm = h if int(d[1:]) % 3 else (h + 1) % 4
    return h, llm


def _run(tmp_path: Path, *, shuffle: int | None = None) -> Path:
    rows = []
    for q in TOPICS:
        for d in DOCS:
            h, llm = _grades(q, d)
            sure = 0.9 if int(d[1:]) % 3 else 0.4
            p = {str(g): (sure if g == llm else (1 - sure) / 3) for g in range(4)}
            rows.append(
                Judgment(
                    qid=q,
                    docid=d,
                    method="umbrela",
                    label=llm,
                    raw=f"##final score: {llm}",
                    extra={"expected": {"p": p}},
                )
            )
    rows.append(Judgment(qid="q0", docid="dx", method="umbrela", status="unparsed", raw="?"))
    if shuffle is not None:
        random.Random(shuffle).shuffle(rows)
    run = tmp_path / f"run{'' if shuffle is None else shuffle}"
    run.mkdir(exist_ok=True)
    write_judgments(rows, run / "judgments.jsonl")
    return run


def _topics(tmp_path: Path) -> Path:
    path = tmp_path / "topics.tsv"
    path.write_text("".join(f"{q}\tquery {q}\n" for q in TOPICS))
    corpus = tmp_path / "passages.tsv"
    corpus.write_text("".join(f"{d}\tpassage <script>alert({d!r})</script>\n" for d in DOCS))
    return path


def _runs_dir(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    runs.mkdir()
    for s in range(3):
        lines = []
        for q in TOPICS:
            scored = sorted(DOCS, key=lambda d: -((_grades(q, d)[0] * (s + 1)) + int(d[1:]) % 5))
            lines += [f"{q} Q0 {d} {r + 1} {100 - r} sys{s}\n" for r, d in enumerate(scored)]
        (runs / f"sys{s}.run").write_text("".join(lines))
    return runs


def _assess(task: Path, out: Path, *, undo: str | None = None, torn: bool = False) -> None:
    lines = task.read_text().splitlines()[1:]
    with out.open("w") as f:
        for n, line in enumerate(lines):
            it = json.loads(line)
            h, _ = _grades(it["qid"], it["docid"])
            row = {"item": it["item"], "qid": it["qid"], "docid": it["docid"], "label": h, "llm_label": it["llm_label"],
                   "assessor": "ann", "mode": "post-edit", "seconds": 2.5, "at": "2026-01-01T00:00:00Z", "seq": n}  # fmt: skip
            f.write(json.dumps(row) + "\n")
            if it["item"] == undo:
                f.write(json.dumps({**row, "label": None, "seq": n + 1000}) + "\n")
        if torn:
            f.write('{"item": "q0\\td00", "qid": "q0", "docid": "d00", "lab')


def test_allocation_is_proportional_with_two_each_and_sums_to_the_budget():
    got = allocate({"a": 1000, "b": 10, "c": 90}, 50)
    assert sum(got.values()) == 50 and got["b"] >= 2
    assert allocate({"a": 3, "b": 1}, 10) == {"a": 3, "b": 1}
    assert allocate({"a": 10, "b": 10, "c": 2}, 12, "equal") == {"a": 5, "b": 5, "c": 2}


def test_selection_does_not_depend_on_input_order():
    strata = ["x", "y", "x", "y", "y", "x", "x", "y"] * 5
    assert stratified_sample(strata, 10, 3).items == stratified_sample(strata, 10, 3).items
    keys = [("q", f"d{i}") for i in range(10)]
    scores = [1.0, 0.0] * 5
    a = top_by_score(keys, scores, [""] * 10, 3, 0, "u").items
    perm = list(reversed(range(10)))
    b = top_by_score([keys[i] for i in perm], [scores[i] for i in perm], [""] * 10, 3, 0, "u").items
    assert sorted(keys[i] for i in a) == sorted(keys[perm[i]] for i in b)


def test_uncertainty_signals():
    assert uncertainty_score({"expected": {"p": {"0": 0.5, "1": 0.5}}})[0] == pytest.approx(0.6931, abs=1e-4)
    assert uncertainty_score({"agreement": 0.6})[0] == pytest.approx(0.4)
    assert uncertainty_score({}, [1, 1, 0])[0] == pytest.approx(1 / 3)
    assert uncertainty_score({}) == (0.0, "no uncertainty signal")


@pytest.mark.slow
def test_select_dry_run_and_task_file_same_for_shuffled_records(tmp_path):
    topics = _topics(tmp_path)
    ran = judge("select", _run(tmp_path, shuffle=0), "--budget", "30", "--dry-run")
    assert ran.returncode == 0, ran.output
    assert "label=0:" in ran.stdout and "total: 30 items" in ran.stdout
    tasks = []
    for shuffle in (None, 7):
        out = tmp_path / f"task{shuffle}.jsonl"
        ran = judge("select", _run(tmp_path, shuffle=shuffle), "--budget", "30", "--seed", "4", "--topics", topics,
                    "--corpus", tmp_path / "passages.tsv", "-o", out)  # fmt: skip
        assert ran.returncode == 0, ran.output
        tasks.append(read_task(out))
    assert [i["item"] for i in tasks[0].items] == [i["item"] for i in tasks[1].items]
    assert tasks[0].header["run_fingerprint"] != tasks[1].header["run_fingerprint"]  # the file differs
    item = tasks[0].items[0]
    assert item["query"] == f"query {item['qid']}" and "<script>" in item["text"]
    assert item["llm_answer"].startswith("##final score") and 0 < item["inclusion_prob"] <= 1


def test_uncertainty_picks_the_unsure_items(tmp_path):
    out = tmp_path / "task.jsonl"
    ran = judge("select", _run(tmp_path), "--strategy", "uncertainty", "--budget", "10", "-o", out)
    assert ran.returncode == 0, ran.output
    task = read_task(out)
    assert all(int(i["docid"][1:]) % 3 == 0 for i in task.items)  # the 0.4-sure ones
    assert task.header["strata"] == {
        "uncertain": {"size": 10, "sampled": 10},
        "rest": {"size": 110, "sampled": 0},
    }
    assert "entropy" in task.items[0]["why"]


def test_influence_needs_runs_and_picks_items_the_systems_rank(tmp_path):
    run = _run(tmp_path)
    assert (
        judge("select", run, "--strategy", "influence", "--budget", "5", "-o", tmp_path / "t").returncode == 2
    )
    out = tmp_path / "task.jsonl"
    ran = judge(
        "select", run, "--strategy", "influence", "--budget", "5", "--runs", _runs_dir(tmp_path), "-o", out
    )
    assert ran.returncode == 0, ran.output
    assert "swaps" in read_task(out).items[0]["why"]


@pytest.mark.slow
def test_estimate_end_to_end_with_undo_and_a_torn_last_line(tmp_path):
    run = _run(tmp_path)
    task = tmp_path / "task.jsonl"
    assert judge("select", run, "--budget", "40", "-o", task).returncode == 0
    first = read_task(task).items[0]["item"]
    ann = tmp_path / "ann.jsonl"
    _assess(task, ann, undo=first, torn=True)
    found = read_assessments([ann], read_task(task))
    assert len(found) == 39 and first not in {a.item for a in found}
    out = tmp_path / "est.json"
    ran = judge("estimate", task, "-a", ann, "--runs", _runs_dir(tmp_path), "-o", out)
    assert ran.returncode == 0, ran.output
    assert "relevant share" in ran.stdout and "nDCG@10" in ran.stdout and "P@10" in ran.stdout
    report = json.loads(out.read_text())
    assert report["labelled_by_people"] == 39
    assert set(report["systems"]) == {"sys0", "sys1", "sys2"}
    share = report["relevant_share"]
    assert share["low"] <= share["estimate"] <= share["high"]


def test_a_bad_assessment_line_is_file_line(tmp_path):
    run = _run(tmp_path)
    task = tmp_path / "task.jsonl"
    judge("select", run, "--budget", "20", "-o", task)
    ann = tmp_path / "ann.jsonl"
    _assess(task, ann)
    lines = ann.read_text().splitlines()
    lines[3] = "{not json"
    ann.write_text("\n".join(lines) + "\n")
    ran = judge("estimate", task, "-a", ann)
    assert ran.returncode == 2 and f"{ann}:4:" in ran.stderr
    lines[3] = json.dumps({"item": "q9\td99", "qid": "q9", "docid": "d99", "label": 1})
    ann.write_text("\n".join(lines) + "\n")
    ran = judge("estimate", task, "-a", ann)
    assert ran.returncode == 2 and f"{ann}:4: item q9 d99 is not in the task" in ran.stderr
    first = json.loads(lines[0])
    lines[3] = json.dumps({**first, "label": 7})
    ann.write_text("\n".join(lines) + "\n")
    ran = judge("estimate", task, "-a", ann)
    assert ran.returncode == 2 and f"{ann}:4: label 7 is not on the task's scale (0, 1, 2, 3)" in ran.stderr


@pytest.mark.slow
def test_a_task_that_does_not_match_its_run_is_refused(tmp_path):
    run = _run(tmp_path)
    task = tmp_path / "task.jsonl"
    judge("select", run, "--budget", "20", "-o", task)
    ann = tmp_path / "ann.jsonl"
    _assess(task, ann)
    with (run / "judgments.jsonl").open("a") as f:
        f.write(Judgment(qid="q0", docid="d00", method="umbrela", label=3).to_json() + "\n")
    ran = judge("estimate", task, "-a", ann)
    assert ran.returncode == 2 and f"{task}:1: the run's labels" in ran.stderr and "changed" in ran.stderr
    other = _run(tmp_path, shuffle=3)
    ran = judge("estimate", task, "-a", ann, "--run", other)
    assert ran.returncode == 2 and f"{task}:1:" in ran.stderr
    uncertain = tmp_path / "u.jsonl"
    judge("select", other, "--strategy", "uncertainty", "--budget", "5", "-o", uncertain)
    ran = judge("estimate", uncertain, "-a", ann)
    assert ran.returncode == 2 and "not at random" in ran.stderr


def test_read_task_errors(tmp_path):
    bad = tmp_path / "t.jsonl"
    bad.write_text('{"reljudge_task": 1, "run": "r", "run_fingerprint": "x", "strategy": "stratified", "strata": {}}\n'
                   '{"item": "q\\td", "qid": "q", "docid": "d", "inclusion_prob": 0.5}\n'
                   '{"item": "q\\td", "qid": "q", "docid": "d", "inclusion_prob": 0.5}\n')  # fmt: skip
    with pytest.raises(InputError, match=r"t.jsonl:3: item q d is listed twice"):
        read_task(bad)
    bad.write_text('{"run": "r"}\n')
    with pytest.raises(InputError, match=r"t.jsonl:1: line 1 is not a reljudge task header"):
        read_task(bad)


@pytest.mark.slow
def test_select_on_dl21_published_labels(shared_data, tmp_path):
    labels = shared_data / "llm-judgments" / "gpt-4o" / "umbrela.dl21.qrels"
    ran = judge("select", labels, "--budget", "300", "--dry-run")
    assert ran.returncode == 0, ran.output
    assert "label=3: 50 of 1781 items" in ran.stdout
    out = tmp_path / "task.jsonl"
    ran = judge("select", labels, "--budget", "50", "--topics", shared_data / "trec-dl21" / "topics.tsv",
                "--corpus", shared_data / "trec-dl21" / "passages.tsv", "-o", out)  # fmt: skip
    assert ran.returncode == 0, ran.output
    assert all(i["text"] and i["query"] for i in read_task(out).items)


def test_uncertainty_from_an_ensemble_of_label_files(tmp_path):
    a = tmp_path / "a.qrels"
    b = tmp_path / "b.qrels"
    a.write_text("".join(f"q 0 {d} {g}\n" for d, g in [("d1", 1), ("d2", 0), ("d3", 2)]))
    b.write_text("".join(f"q 0 {d} {g}\n" for d, g in [("d1", 1), ("d2", 1), ("d3", 2)]))
    out = tmp_path / "task.jsonl"
    ran = judge("select", a, "--strategy", "uncertainty", "--members", b, "--budget", "1", "-o", out)
    assert ran.returncode == 0, ran.output
    (item,) = read_task(out).items
    assert item["docid"] == "d2" and "1 of 2 ensemble members disagree" in item["why"]
    ran = judge("select", a, "--strategy", "uncertainty", "--budget", "1", "-o", out)
    assert ran.returncode == 2 and "no uncertainty signal" in ran.stderr


@pytest.mark.slow
def test_strata_by_depth_need_the_runs_again(tmp_path):
    run, runs = _run(tmp_path), _runs_dir(tmp_path)
    task = tmp_path / "task.jsonl"
    argv = [
        "select",
        run,
        "--budget",
        "40",
        "--runs",
        runs,
        "--depth",
        "3",
        "--allocation",
        "top",
        "-o",
        task,
    ]
    ran = judge(*argv)
    assert ran.returncode == 0, ran.output
    header = read_task(task).header
    assert header["stratify_by"] == "depth+llm_label" and header["depth"] == 3
    top = {k: v for k, v in header["strata"].items() if k.startswith("top3/")}
    # 80 % of the budget would be 32: the 24 items some system ranks in its top 3 are all taken
    assert sum(v["size"] for v in top.values()) == 24 and all(v["sampled"] == v["size"] for v in top.values())
    ann = tmp_path / "ann.jsonl"
    _assess(task, ann)
    ran = judge("estimate", task, "-a", ann)
    assert ran.returncode == 2 and "give their runs (--runs DIR)" in ran.stderr
    ran = judge("estimate", task, "-a", ann, "--runs", runs, "--measure", "P@3")
    assert ran.returncode == 0, ran.output
    assert "P@3" in ran.stdout


@pytest.mark.slow
def test_estimate_on_dl21_covers_the_nist_share(shared_data, tmp_path):
    from reljudge.io.trec import read_qrels

    labels = shared_data / "llm-judgments" / "gpt-4o" / "umbrela.dl21.qrels"
    task = tmp_path / "task.jsonl"
    assert judge("select", labels, "--budget", "300", "--seed", "1", "-o", task).returncode == 0
    nist = read_qrels(shared_data / "trec-dl21" / "qrels.txt")
    people = tmp_path / "people.jsonl"
    rows = [
        {"item": it["item"], "qid": it["qid"], "docid": it["docid"], "label": nist[it["qid"]][it["docid"]]}
        for it in read_task(task).items
    ]
    people.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "e.json"
    ran = judge("estimate", task, "-a", people, "-o", out)
    assert ran.returncode == 0, ran.output
    share = json.loads(out.read_text())["relevant_share"]
    truth = sum(g >= 2 for docs in nist.values() for g in docs.values()) / sum(len(d) for d in nist.values())
    assert share["low"] <= truth <= share["high"]
    assert share["high"] - share["low"] < 0.1


def test_the_scale_people_grade_on_is_printed_and_can_be_wider_than_the_runs_labels(tmp_path):
    """A run that never gave a 3 would leave people no 3: the default scale (0 to the run's highest
    label) is printed with how to widen it, and ``--scale`` declares the method's scale."""
    labels = tmp_path / "binary.qrels"
    labels.write_text("".join(f"q1 0 d{j} {j % 2}\n" for j in range(12)), encoding="utf-8")
    ran = judge("select", labels, "--budget", "6", "-o", tmp_path / "t1")
    assert ran.returncode == 0, ran.output
    assert "people grade on 0-1 (from 0 to the run's highest label; --scale LO-HI to widen it)" in ran.output
    assert read_task(tmp_path / "t1").header["scale"] == [0, 1]
    ran = judge("select", labels, "--budget", "6", "--scale", "0-3", "-o", tmp_path / "t2")
    assert ran.returncode == 0 and read_task(tmp_path / "t2").header["scale"] == [0, 1, 2, 3]
    for bad in ("3", "2-1", "a-b"):
        ran = judge("select", labels, "--budget", "6", "--scale", bad, "-o", tmp_path / "t3")
        assert ran.returncode == 2 and "--scale" in ran.output and not (tmp_path / "t3").exists()
    ran = judge("select", labels, "--budget", "6", "--scale", "2-3", "-o", tmp_path / "t3")
    assert ran.returncode == 2 and "labels outside it (0, 1)" in ran.output
