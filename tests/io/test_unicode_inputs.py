"""Every reader of text input refuses text no file can be written with: a JSON or YAML escape of
half a surrogate pair (``\\udc80``) and raw bytes that are not UTF-8 are ``FILE:LINE`` errors
(`reljudge.io.lines.loads_json` / `check_unicode`), never a traceback at a later write or hash."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from _cli import judge
from reljudge.errors import InputError
from reljudge.io.answers import read_answers
from reljudge.io.corpus import load_corpus
from reljudge.io.judgments import read_judgments
from reljudge.io.lines import loads_json
from reljudge.io.trec import read_qrels, read_run, read_topics
from reljudge.io.yamlsafe import load_yaml
from reljudge.sweep.yamlines import load_file_with_lines

#: a JSON string holding a lone (low) surrogate, escaped: valid JSON, not valid Unicode
LONE = "bad \\udc80 text"
#: the same half pair as raw (CESU-style) UTF-8 bytes, which no UTF-8 decoder accepts
RAW = b"bad \xed\xb2\x80 text"

RAG24 = {
    "run_id": "r1",
    "topic_id": "1",
    "topic": "q",
    "references": ["d1"],
    "response_length": 2,
    "answer": [{"text": "fine text", "citations": [0]}],
}
RECORD = {"qid": "1", "docid": "d1", "method": "umbrela", "label": 2}


def _rag24(text: str) -> str:
    """A TREC RAG line with ``text`` (holding ``\\u`` escapes) as its second sentence."""
    line = json.dumps(
        {**RAG24, "answer": [{"text": "ok", "citations": []}, {"text": text, "citations": [0]}]}
    )
    return line.replace("\\\\u", "\\u")


def _judgment(text: str) -> str:
    return json.dumps({**RECORD, "raw": text}).replace("\\\\u", "\\u")


# (file name, second line of the file with the hostile text spliced in as a JSON escape, reader)
def _passage(field: str) -> Callable[[str], str]:
    """A corpus line with ``text`` (holding ``\\u`` escapes) spliced into ``field``."""
    fields = {"docid": "d2", "text": "x", field: "@"}
    return lambda text: json.dumps(fields).replace("@", text)


JSON_READERS: list[tuple[str, Callable[[str], str], Callable[[Path], Any]]] = [
    ("corpus.jsonl", _passage("text"), lambda p: load_corpus(p)),
    ("corpus-wanted.jsonl", _passage("text"), lambda p: load_corpus(p, docids={"d2"})),
    ("corpus-title.jsonl", _passage("title"), lambda p: load_corpus(p)),
    ("corpus-id.jsonl", _passage("docid"), lambda p: load_corpus(p)),
    ("answers.jsonl", _rag24, read_answers),
    ("judgments.jsonl", _judgment, read_judgments),
]
FIRST_LINE = {
    "corpus": '{"docid": "d1", "text": "fine"}',
    "answers": json.dumps({**RAG24, "topic_id": "0"}),
    "judgments": json.dumps(RECORD | {"docid": "d0"}),
}


@pytest.mark.parametrize(("name", "line", "read"), JSON_READERS, ids=[r[0] for r in JSON_READERS])
def test_a_lone_surrogate_escape_is_an_error_at_its_line(
    tmp_path: Path, name: str, line: Callable[[str], str], read: Callable[[Path], Any]
) -> None:
    path = tmp_path / name
    first = FIRST_LINE[name.split("-")[0].split(".")[0]]
    hostile = line(LONE)
    assert "\\udc80" in hostile
    path.write_text(f"{first}\n{hostile}\n", encoding="utf-8")
    with pytest.raises(InputError, match="lone surrogate \\\\udc80") as err:
        read(path)
    assert err.value.line == 2
    # a proper pair (one astral character) is fine
    pair = line("ok \\ud83d\\ude00")
    path.write_text(f"{first}\n{pair}\n", encoding="utf-8")
    read(path)


TEXT_READERS: list[tuple[str, bytes, Callable[[Path], Any]]] = [
    ("corpus.tsv", b"d1\tfine\nd2\t" + RAW + b"\n", load_corpus),
    (
        "corpus.jsonl",
        b'{"docid": "d1", "text": "fine"}\n{"docid": "d2", "text": "' + RAW + b'"}\n',
        load_corpus,
    ),
    ("answers.tsv", b"s1\t1\tfine\ns1\t2\t" + RAW + b"\n", read_answers),
    ("topics.tsv", b"1\tfine\n2\t" + RAW + b"\n", read_topics),
    ("qrels.txt", b"1 0 d1 1\n1 0 " + RAW.replace(b" ", b"") + b" 1\n", read_qrels),
    ("run.txt", b"1 Q0 d1 1 2.0 r\n1 Q0 " + RAW.replace(b" ", b"") + b" 2 1.0 r\n", read_run),
    ("judgments.jsonl", json.dumps(RECORD).encode() + b'\n{"raw": "' + RAW + b'"}\n', read_judgments),
]


@pytest.mark.parametrize(("name", "data", "read"), TEXT_READERS, ids=[r[0] for r in TEXT_READERS])
def test_raw_bytes_of_a_surrogate_are_not_utf8_at_their_line(
    tmp_path: Path, name: str, data: bytes, read: Callable[[Path], Any]
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError, match="not valid UTF-8") as err:
        read(path)
    assert err.value.line == 2


def test_yaml_readers_refuse_a_lone_surrogate_escape(tmp_path: Path) -> None:
    text = 'name: fine\nprompt: "bad \\udc80 text"\n'
    with pytest.raises(InputError, match="lone surrogate \\\\udc80 in prompt") as err:
        load_yaml(text, "prompt.yaml")
    assert err.value.line == 2
    path = tmp_path / "sweep.yaml"
    path.write_text('models:\n  - name: m\n    system: "\\U0000DC80"\n', encoding="utf-8")
    with pytest.raises(InputError, match="lone surrogate") as err:
        load_file_with_lines(path)
    assert err.value.line == 3


def test_loads_json_names_the_field_and_refuses_bad_json() -> None:
    with pytest.raises(InputError, match=r"f\.xs\[1\]"):
        loads_json('{"f": {"xs": ["a", "\\ud800"]}}', "f.json", 7)
    with pytest.raises(InputError, match="in a key|lone surrogate"):
        loads_json('{"\\udfff": 1}', "f.json", 1)
    with pytest.raises(InputError, match="not valid JSON"):
        loads_json("{", "f.json", 1)
    with pytest.raises(InputError, match="nested too deeply"):
        loads_json("[" * 100_000, "f.json", 1)
    assert loads_json('"\\\\udc80"') == "\\udc80"  # an escaped backslash: six plain characters


def test_answers_check_and_convert_refuse_a_lone_surrogate(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text(_rag24(LONE) + "\n", encoding="utf-8")
    ran = judge("answers", "check", str(path), cwd=tmp_path)
    assert ran.returncode == 2, ran.output
    assert f"{path}:1: a lone surrogate \\udc80 in answer[1].text" in ran.stderr
    out = tmp_path / "out.tsv"
    ran = judge("answers", "convert", str(path), "--out", str(out), cwd=tmp_path)
    assert ran.returncode == 2, ran.output
    assert "Traceback" not in ran.output
    assert not out.exists()
