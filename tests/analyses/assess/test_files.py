"""The task reader, the assessment files (append, torn tail, lock, mode) and the export of
``judge assess``: every bad input a ``FILE:LINE`` error, nothing a person judged lost."""

from __future__ import annotations

import hashlib
import json
import logging
import re

import pytest

from _assess import assessment, default_items, item, write_task
from _cli import judge
from reljudge.analyses.assess.consensus import RULE, exported_label
from reljudge.analyses.assess.files import (
    AssessmentWriter,
    check_task_matches_run,
    default_assessment_path,
    read_assessments,
    read_task,
)
from reljudge.errors import InputError
from reljudge.io.judgments import read_judgments
from reljudge.io.trec import read_qrels

I1, I2, I3, I4 = (f"{i['qid']}\t{i['docid']}" for i in default_items())


def test_a_task_reads_with_its_header_and_items(tmp_path):
    task = read_task(write_task(tmp_path / "task.jsonl"))
    assert task.scale == (0, 1, 2, 3) and task.scale_names and task.scale_names[2] == "Highly relevant"
    assert [i.item for i in task.items] == [I1, I2, I3, I4]
    assert task.item(I3).llm_label == 3 and task.item(I3).line == 4


def test_fields_beyond_the_contract_are_ignored_and_a_missing_text_is_null(tmp_path):
    items = [item("1", "a", text=None, query=None), item("1", "b", note="kept out")]
    task = read_task(write_task(tmp_path / "task.jsonl", items, stratify_by="llm_label", method="umbrela"))
    assert (task.items[0].text, task.items[0].query) == ("", "")
    assert task.items[1].text == "a passage"


@pytest.mark.parametrize(
    ("lines", "items", "message"),
    [
        (["{not json"], None, ":6: not valid JSON"),
        ([], [item("1", "a"), item("1", "a")], ":3: item '1\\ta' is already on line 2"),
        ([], [item("1", "a", llm_label=7)], ":2: 'llm_label' 7 is not on the task's scale [0, 1, 2, 3]"),
        ([], [{k: v for k, v in item("1", "a").items() if k != "text"}], ":2: missing field 'text'"),
        ([], [item("1", "a", item="1 a")], ":2: 'item' '1 a' is not '<qid>\\t<docid>'"),
        ([], [item("1", "a b", item="1\ta b")], ":2: 'docid' 'a b' holds whitespace"),
        ([], [item("1", "a", inclusion_prob=0)], ":2: 'inclusion_prob' must be in (0, 1]"),
        ([], [], ":1: the task has no items"),
        ([json.dumps([1, 2])], None, ":6: expected a JSON object (one task item), got list"),
    ],
)
def test_a_bad_task_line_is_an_error_at_its_line(tmp_path, lines, items, message):
    path = write_task(tmp_path / "task.jsonl", items, lines)
    with pytest.raises(InputError) as err:
        read_task(path)
    assert f"{path}{message}" in str(err.value)


def test_a_bad_header_is_an_error_at_line_1(tmp_path):
    path = write_task(tmp_path / "task.jsonl", mode="wild")
    with pytest.raises(InputError, match=r"task.jsonl:1: 'mode' must be one of judge, post-edit, blind"):
        read_task(path)
    path.write_text(json.dumps({"qid": "1"}) + "\n")
    with pytest.raises(InputError, match=r":1: not a reljudge task file"):
        read_task(path)
    write_task(path, scale=[0, 1, 1])
    with pytest.raises(InputError, match=r":1: 'scale' must be a list of distinct integers"):
        read_task(path)


def test_a_task_that_does_not_match_its_run_is_refused(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "judgments.jsonl").write_text('{"qid": "1", "docid": "a", "method": "umbrela", "label": 2}\n')
    digest = hashlib.sha256((run / "judgments.jsonl").read_bytes()).hexdigest()
    check_task_matches_run(read_task(write_task(tmp_path / "ok.jsonl", fingerprint=digest)), run)
    other = write_task(tmp_path / "other.jsonl")
    with pytest.raises(InputError, match=r"other.jsonl:1: the task was made from a run whose judgments"):
        check_task_matches_run(read_task(other), run)
    ran = judge("assess", other, "--run", run, "--port", "0")
    assert ran.returncode == 2 and f"{other}:1: the task was made from a run" in ran.output


def test_each_judgment_is_one_line_on_disk_and_a_later_line_supersedes(tmp_path):
    task = read_task(write_task(tmp_path / "task.jsonl"))
    path = default_assessment_path(tmp_path / "task.jsonl", "ann")
    assert path.name == "task.assess-ann.jsonl"
    with AssessmentWriter(path, task, "ann", "judge") as w:
        w.append(task.item(I1), 2, 3.25)
        assert len(path.read_bytes().splitlines()) == 1  # on disk before the writer returns
        w.append(task.item(I1), None, 0.0)
        w.append(task.item(I2), 0, 1.0)
    lines = read_assessments(path, task)
    assert [(a.item, a.label, a.seq) for a in lines] == [(I1, 2, 1), (I1, None, 2), (I2, 0, 3)]
    assert lines[0].seconds == 3.25 and lines[0].llm_label == 2 and lines[0].mode == "judge"
    with AssessmentWriter(path, task, "ann", "judge") as w:  # resumes: the sequence goes on
        assert w.append(task.item(I3), 3, 1.0).seq == 4


def test_a_short_write_is_cut_back_so_later_judgments_stay_readable(tmp_path, monkeypatch):
    """A full disk writes half a line: the judgment is reported unsaved, the half line is cut off,
    and the judgments the page saves after it are whole lines that read back."""
    import reljudge.analyses.assess.files as files

    task_path = write_task(tmp_path / "task.jsonl")
    task = read_task(task_path)
    path = default_assessment_path(task_path, "ann")
    real, calls = files.os.write, []

    def half_once(fd: int, data: bytes) -> int:
        calls.append(len(data))
        return real(fd, data[: len(data) // 2] if len(calls) == 2 else data)

    monkeypatch.setattr(files.os, "write", half_once)
    with AssessmentWriter(path, task, "ann", "judge") as writer:
        writer.append(task.items[0], 2, 1.0)
        with pytest.raises(OSError, match="wrote"):
            writer.append(task.items[1], 0, 1.0)
        writer.append(task.items[2], 3, 1.0)
        writer.append(task.items[3], 1, 1.0)
    monkeypatch.setattr(files.os, "write", real)
    got = read_assessments(path, task)
    assert [(a.item, a.label) for a in got] == [(I1, 2), (I3, 3), (I4, 1)]
    with AssessmentWriter(path, task, "ann", "judge") as writer:  # the page opens it again
        assert len(writer.lines) == 3


def test_a_torn_last_line_is_skipped_then_set_aside_never_a_complete_line(tmp_path, caplog):
    task = read_task(write_task(tmp_path / "task.jsonl"))
    path = tmp_path / "a.jsonl"
    whole = assessment(I1, 2, 1) + "\n" + assessment(I2, 1, 2) + "\n"
    path.write_text(whole + assessment(I3, 3, 3)[:40])
    with caplog.at_level(logging.WARNING):
        assert [a.item for a in read_assessments(path, task)] == [I1, I2]
    assert "a.jsonl:3: skipped a torn last line" in caplog.text
    with AssessmentWriter(path, task, "ann", "judge") as w:
        w.append(task.item(I4), 1, 1.0)
    assert path.read_text().startswith(whole)  # both complete lines kept as they were
    assert [a.item for a in read_assessments(path, task)] == [I1, I2, I4]
    assert (tmp_path / "a.jsonl.torn").read_text() == assessment(I3, 3, 3)[:40] + "\n"
    # a complete last line that only lost its newline is kept
    path.write_text(assessment(I1, 2, 1))
    with AssessmentWriter(path, task, "ann", "judge") as w:
        w.append(task.item(I2), 0, 1.0)
    assert [(a.item, a.label) for a in read_assessments(path, task)] == [(I1, 2), (I2, 0)]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (assessment(I1, 5, 2), ":2: 'label' 5 is not on the task's scale [0, 1, 2, 3]"),
        (assessment("9\tzz", 1, 2), ":2: item '9\\tzz' is not in the task"),
        (assessment(I1, 1, 2, assessor="bob"), ":2: assessor 'bob' in the file of 'ann'"),
        ("{broken", ":2: not valid JSON"),
        ("", ":2: an empty line"),
    ],
)
def test_a_bad_assessment_line_is_an_error_at_its_line(tmp_path, line, message):
    task = read_task(write_task(tmp_path / "task.jsonl"))
    path = tmp_path / "a.jsonl"
    path.write_text(assessment(I2, 1, 1) + "\n" + line + "\n" + assessment(I3, 1, 3) + "\n")
    with pytest.raises(InputError) as err:
        read_assessments(path, task)
    assert f"{path}{message}" in str(err.value)
    with pytest.raises(InputError):  # the writer refuses the file too: it never appends to it
        AssessmentWriter(path, task, "ann", "judge")


def test_one_writer_per_file_and_one_mode_per_assessor(tmp_path):
    task = read_task(write_task(tmp_path / "task.jsonl"))
    path = tmp_path / "a.jsonl"
    with AssessmentWriter(path, task, "ann", "blind") as w:
        w.append(task.item(I1), 1, 1.0)
        with pytest.raises(InputError, match="another judge assess is writing this file"):
            AssessmentWriter(path, task, "ann", "blind")
    with pytest.raises(InputError, match=r"a.jsonl:1: judged in blind mode, this page is post-edit"):
        AssessmentWriter(path, task, "ann", "post-edit")
    assert len(path.read_text().splitlines()) == 1


def test_the_exported_label_is_the_majority_ties_to_the_lower():
    assert exported_label([2]) == 2
    assert exported_label([3, 1, 3]) == 3
    assert exported_label([3, 1]) == 1
    assert exported_label([0, 2, 2, 0, 3]) == 0
    assert "tie" in RULE and "lower" in RULE


def _two_assessors(tmp_path):
    task_path = write_task(tmp_path / "task.jsonl")
    (tmp_path / "task.assess-ann.jsonl").write_text(
        "\n".join([assessment(I1, 2, 1), assessment(I2, 0, 2), assessment(I3, 3, 3), assessment(I3, None, 4)])
        + "\n"
    )
    (tmp_path / "task.assess-bob.jsonl").write_text(
        "\n".join(
            assessment(i, lab, n, assessor="bob", mode="blind")
            for n, (i, lab) in enumerate([(I1, 1), (I2, 0), (I4, 1)], 1)
        )
        + "\n"
    )
    return task_path


@pytest.mark.slow
def test_export_writes_qrels_and_records_that_evaluate_combine_and_calibrate_read(tmp_path):
    task_path = _two_assessors(tmp_path)
    ran = judge(
        "assess", "export", task_path, "--qrels", tmp_path / "h.qrels", "--records", tmp_path / "h.jsonl"
    )
    assert ran.returncode == 0, ran.output
    # I1: ann 2, bob 1 -> a tie -> 1; I2: 0 and 0; I3: ann withdrew it -> not exported; I4: bob 1
    assert read_qrels(tmp_path / "h.qrels") == {"19335": {"d1": 1, "d2": 0}, "47923": {"d4": 1}}
    assert (tmp_path / "h.qrels").read_text().splitlines()[0] == "19335 0 d1 1"
    records = read_judgments(tmp_path / "h.jsonl")
    assert [(r.qid, r.docid, r.label, r.method) for r in records] == [
        ("19335", "d1", 1, "human"),
        ("19335", "d2", 0, "human"),
        ("47923", "d4", 1, "human"),
    ]
    assert records[0].extra["assessors"] == {"ann": 2, "bob": 1} and records[0].extra["llm_label"] == 2
    assert f"exported label: {RULE}" in ran.stdout
    assert "agreement ann vs bob on 2 items: 50.0 % same label, Cohen's kappa" in ran.stdout
    assert "Krippendorff's alpha over 2 items labelled by 2+ of 2 assessors" in ran.stdout
    assert "not labelled (not exported): 1" in ran.stdout
    # the records are judgments the analyses read: the LLM's labels as qrels, the people as the judge
    llm = tmp_path / "llm.qrels"
    llm.write_text("".join(f"{i['qid']} 0 {i['docid']} {i['llm_label']}\n" for i in default_items()))
    ev = judge("evaluate", "--judgments", tmp_path / "h.jsonl", "--qrels", llm, cwd=tmp_path)
    assert ev.returncode == 0, ev.output
    assert re.search(r"^h\s+>= 1\s+0.400", ev.stdout, re.M), ev.stdout  # the set "h" has its kappa row
    co = judge("combine", tmp_path / "h.jsonl", llm, "--out", tmp_path / "comb")
    assert co.returncode == 0, co.output
    assert "of 2 members over 4 items" in co.output
    ca = judge("calibrate", "--judgments", tmp_path / "h.jsonl", "--qrels", llm)
    assert ca.returncode == 0, ca.output
    assert "h: 3 labelled pairs on 2 topics" in ca.stdout


def test_export_refuses_a_file_of_another_task_and_an_assessor_twice(tmp_path):
    task_path = _two_assessors(tmp_path)
    other = tmp_path / "other.jsonl"
    other.write_text(assessment("1\tx", 1, 1, assessor="cy") + "\n")
    out = ("--qrels", tmp_path / "h.qrels", "--records", tmp_path / "h.jsonl")
    ran = judge("assess", "export", task_path, "--assessments", other, *out)
    assert ran.returncode == 2 and f"{other}:1: item '1\\tx' is not in the task" in ran.output
    assert not (tmp_path / "h.qrels").exists() and not (tmp_path / "h.jsonl").exists()
    twice = tmp_path / "twice.jsonl"
    twice.write_text((tmp_path / "task.assess-ann.jsonl").read_text())
    ran = judge("assess", "export", task_path, "--assessments", tmp_path / "task.assess-ann.jsonl",
                "--assessments", twice, *out)  # fmt: skip
    assert ran.returncode == 2 and "assessor 'ann' is also in" in ran.output


def test_an_export_does_not_depend_on_the_order_of_the_assessment_files(tmp_path):
    """The records' time stamp is an item's latest judgment, whichever file is given first."""
    from reljudge.analyses.assess.pipeline import export_assessments

    task_path = write_task(tmp_path / "task.jsonl")
    files = []
    for who, at in (("ann", "2026-01-01T00:00:00.000Z"), ("bob", "2026-06-01T00:00:00.000Z")):
        line = json.loads(assessment(I1, 2, 1, assessor=who))
        files.append(tmp_path / f"task.assess-{who}.jsonl")
        files[-1].write_text(json.dumps({**line, "at": at}) + "\n", encoding="utf-8")
    got = [export_assessments(task_path, order).records for order in (files, files[::-1])]
    assert [r.provenance.timestamp for r in got[0]] == ["2026-06-01T00:00:00.000Z"]
    assert [r.model_dump() for r in got[0]] == [r.model_dump() for r in got[1]]
