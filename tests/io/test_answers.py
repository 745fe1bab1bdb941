"""Generated answers: the TREC RAG 2024 reader/writer and the TSV, round trips and `file:line`
errors for malformed files."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from reljudge.errors import InputError
from reljudge.io import answers as A

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "answers" / "rag24-example.jsonl"


def _line(**over: object) -> str:
    rec: dict[str, object] = {
        "run_id": "r1",
        "topic_id": 7,
        "topic": "what is x",
        "references": ["d0", "d1"],
        "response_length": 4,
        "answer": [{"text": "X is y.", "citations": [1]}, {"text": " Yes ", "citations": []}],
    }
    rec.update(over)
    return json.dumps(rec)


def _write(tmp_path: Path, *lines: str, name: str = "run.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_example_file_reads_as_documented() -> None:
    answers = A.read_rag24(EXAMPLE)
    assert [a.qid for a in answers] == ["23287", "2024-145979"]
    first = answers[0]
    assert first.system == "bm25_rank-zephyr-rho_gpt-4o"
    assert first.topic.startswith("are landlords liable")
    assert first.references[1] == "msmarco_v2.1_doc_45_546308869#10_963661464"
    assert first.sentences[1].citations == (1,)
    assert first.sentences[2].citations == (1, 0)
    assert first.length == first.declared_length == 76
    assert first.text.startswith("Landlords can be held liable") and "  " not in first.text


def test_rag24_round_trip(tmp_path: Path) -> None:
    answers = A.read_rag24(EXAMPLE)
    out = tmp_path / "again.jsonl"
    assert A.write_rag24(answers, out) == 2
    again = A.read_rag24(out)
    assert again == answers
    # the JSON written is the documented object, field for field (topic ids as text)
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert list(first) == list(A.RAG24_FIELDS)
    assert first["topic_id"] == "23287"


def test_rag24_gzip_and_read_answers_dispatch(tmp_path: Path) -> None:
    gz = tmp_path / "run.jsonl.gz"
    gz.write_bytes(gzip.compress(EXAMPLE.read_bytes()))
    assert A.read_answers(gz) == A.read_rag24(EXAMPLE)


def test_tsv_round_trip_and_from_rag24(tmp_path: Path) -> None:
    answers = A.read_rag24(EXAMPLE)
    tsv = tmp_path / "answers.tsv"
    assert A.write_answers_tsv(answers, tsv) == 2
    back = A.read_answers(tsv)
    assert [(a.system, a.qid, a.text) for a in back] == [(a.system, a.qid, a.text) for a in answers]
    # a second write of what was read gives the same bytes
    tsv2 = tmp_path / "again.tsv"
    A.write_answers_tsv(back, tsv2)
    assert tsv2.read_bytes() == tsv.read_bytes()


def test_tsv_writer_keeps_an_answer_on_one_line(tmp_path: Path) -> None:
    tsv = tmp_path / "a.tsv"
    A.write_answers_tsv({"gen": {"q1": "line one\n\nline\ttwo  ", "q2": "ok"}}, tsv)
    assert tsv.read_text(encoding="utf-8") == "gen\tq1\tline one line two\ngen\tq2\tok\n"
    with pytest.raises(ValueError):
        A.write_answers_tsv({"gen": {"q1": " \n "}}, tmp_path / "b.tsv")
    assert not (tmp_path / "b.tsv").exists()  # nothing half-written


def test_tsv_answer_may_hold_a_tab(tmp_path: Path) -> None:
    path = tmp_path / "a.tsv"
    path.write_text("s\tq\tleft\tright\n\ns\tq2\tx\n", encoding="utf-8")
    got = A.read_answers_tsv(path)
    assert [a.text for a in got] == ["left\tright", "x"]


@pytest.mark.parametrize(
    ("lines", "line", "what"),
    [
        (["{not json"], 1, "not valid JSON"),
        (["[1, 2]"], 1, "expected a JSON object"),
        ([_line(), _line(topic_id=8, response_length=None)], 2, "'response_length'"),
        ([json.dumps({"run_id": "r1"})], 1, "missing field 'topic_id'"),
        ([_line(), _line(topic_id=8, run_id="r2")], 2, "run_id"),
        ([_line(), "", _line()], 3, "answered twice"),
        ([_line(answer=[{"text": "a", "citations": [2]}])], 1, "outside the 2 references"),
        ([_line(answer=[{"text": "a", "citations": [-1]}])], 1, "outside the 2 references"),
        ([_line(answer=[{"text": "a", "citations": ["0"]}])], 1, "not an integer"),
        ([_line(answer=[{"text": "a"}])], 1, "missing field 'citations'"),
        ([_line(answer=[{"text": "  ", "citations": []}])], 1, "no text"),
        ([_line(answer="a string")], 1, "'answer' must be a list"),
        ([_line(references="d0")], 1, "'references' must be a list"),
        ([_line(references=["d0", 3])], 1, "references[1]"),
        ([_line(references=["d0", "d0"])], 1, "listed twice"),
        ([_line(topic_id=True)], 1, "'topic_id'"),
        ([_line(topic_id="a b")], 1, "whitespace"),
        ([_line(run_id="")], 1, "'run_id'"),
        ([_line(topic=None)], 1, "'topic' must be a string"),
        (["[" * 100_000], 1, "not valid JSON"),
    ],
)
def test_rag24_malformed_lines(tmp_path: Path, lines: list[str], line: int, what: str) -> None:
    path = _write(tmp_path, *lines)
    with pytest.raises(InputError) as err:
        A.read_rag24(path)
    assert err.value.path == str(path) and err.value.line == line
    assert what in err.value.message
    assert str(err.value).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ("s\tq\n", 1, "3 tab-separated columns"),
        ("s\tq\tok\ns q x\n", 2, "3 tab-separated columns"),
        ("s\tq\t   \n", 1, "empty answer"),
        ("\tq\tx\n", 1, "non-empty"),
        ("s\tq\ta\ns\tq\tb\n", 2, "twice"),
        ("s x\tq\ta\n", 1, "whitespace"),
    ],
)
def test_tsv_malformed_lines(tmp_path: Path, text: str, line: int, what: str) -> None:
    path = tmp_path / "a.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        A.read_answers_tsv(path)
    assert (err.value.line, err.value.path) == (line, str(path))
    assert what in err.value.message


def test_empty_and_missing_files(tmp_path: Path) -> None:
    empty = _write(tmp_path, "", name="e.jsonl")
    with pytest.raises(InputError, match="empty"):
        A.read_rag24(empty)
    with pytest.raises(InputError, match="file not found"):
        A.read_answers(tmp_path / "none.tsv")


def test_a_hostile_endless_line_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        handle.write(_line() + "\n")
        handle.write('{"run_id": "' + "x" * (A.MAX_LINE_BYTES * 3) + '"}\n')
    with pytest.raises(InputError) as err:
        A.read_rag24(path)
    assert err.value.line == 2 and "longer than" in err.value.message
    tsv = tmp_path / "big.tsv"
    tsv.write_text("s\tq\t" + "y" * (A.MAX_LINE_BYTES + 5), encoding="utf-8")
    with pytest.raises(InputError, match="longer than") as err:
        A.read_answers_tsv(tsv)
    assert err.value.line == 1


def test_answer_length_is_bounded(tmp_path: Path) -> None:
    many = [{"text": "w" * 1000, "citations": []}] * (A.MAX_ANSWER_CHARS // 1000 + 2)
    path = _write(tmp_path, _line(answer=many))
    with pytest.raises(InputError, match="answer longer than") as err:
        A.read_rag24(path)
    assert err.value.line == 1
    tsv = tmp_path / "long.tsv"
    tsv.write_text("s\tq\t" + "z" * (A.MAX_ANSWER_CHARS + 1) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="answer longer than"):
        A.read_answers_tsv(tsv)


def test_write_rag24_refuses_two_systems(tmp_path: Path) -> None:
    a = A.Answer("s1", "q", (A.Sentence("x"),))
    b = A.Answer("s2", "q", (A.Sentence("y"),))
    with pytest.raises(ValueError, match="one run per file"):
        A.write_rag24([a, b], tmp_path / "x.jsonl")
    assert not (tmp_path / "x.jsonl").exists()


def test_answers_by_system() -> None:
    a = A.Answer("s1", "q1", (A.Sentence("x"),))
    b = A.Answer("s2", "q1", (A.Sentence("y"),))
    assert A.answers_by_system([a, b]) == {"s1": {"q1": a}, "s2": {"q1": b}}
