"""``--dataset irds:<id>``: ir_datasets collections read offline (a small dataset registered here,
from local files; a dataset whose files are remote gives a clear error and opens no connection)."""

from __future__ import annotations

import socket
import threading

import pytest

from _cli import judge
from reljudge.datasets import load_dataset
from reljudge.errors import InputError
from reljudge.io.irds import grade_scale
from reljudge.io.judgments import read_judgments
from reljudge.testing import MockLLMServer

ir_datasets = pytest.importorskip("ir_datasets")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    """``rjtest/tiny``: 2 queries, 3 passages, 4 graded qrels (TREC DL's 0-3 definitions)."""
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TsvDocs, TsvQueries
    from ir_datasets.util import LocalDownload

    root = tmp_path_factory.mktemp("irds")
    (root / "queries.tsv").write_text("q1\twhat is a cat\nq2\tbest pizza in naples\n")
    (root / "docs.tsv").write_text(
        "d1\tcats are small felines\nd2\tpizza napoletana is great\nd3\tunrelated text\n"
    )
    (root / "qrels").write_text("q1 0 d1 3\nq1 0 d3 0\nq2 0 d2 2\nq2 0 d3 0\n")
    defs = {0: "irrelevant", 1: "related", 2: "highly relevant", 3: "perfectly relevant"}
    name = "rjtest/tiny"
    if name not in ir_datasets.registry:
        ir_datasets.registry.register(
            name,
            Dataset(
                TsvQueries(LocalDownload(root / "queries.tsv")),
                TsvDocs(LocalDownload(root / "docs.tsv")),
                TrecQrels(LocalDownload(root / "qrels"), defs),
            ),
        )
    return name


def test_load_reads_topics_qrels_scale_and_only_wanted_passages(tiny):
    ds = load_dataset(f"irds:{tiny}", passages=False)
    assert ds.name == "irds:rjtest/tiny"
    assert ds.topics == {"q1": "what is a cat", "q2": "best pizza in naples"}
    assert ds.qrels == {"q1": {"d1": 3, "d3": 0}, "q2": {"d2": 2, "d3": 0}}
    assert (ds.min_grade, ds.max_grade, ds.relevant_threshold) == (0, 3, 2)
    assert ds.grade_labels[3] == "perfectly relevant"
    assert dict(ds.passages(["d2", "nope"])) == {"d2": "pizza napoletana is great"}
    with pytest.raises(InputError, match="read by id"):
        _ = ds.corpus


def test_grade_scale_conventions():
    assert grade_scale({0: "a", 1: "b", 2: "c", 3: "d"}, None) == (0, 3, 2)  # TREC DL
    assert grade_scale({1: "a", 2: "b", 3: "c", 4: "d"}, None) == (1, 4, 3)  # ANTIQUE
    assert grade_scale({}, {"q": {"d": 0, "e": 1}}) == (0, 1, 1)  # binary, from the qrels
    assert grade_scale({}, None) == (0, None, 1)


def test_fractional_qrels_grades_give_an_integer_scale(tiny, tmp_path):
    # a qrels file with fractional grades over an irds dataset: the scale is whole grades (as for a
    # dataset directory), so that the grade listing (judge datasets --grades) can count them
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 2.5\nq1 0 d3 0.5\n")
    assert grade_scale({}, {"q": {"d": 0.5, "e": 2.5}}) == (0, 2, 2)
    ds = load_dataset(f"irds:{tiny}", qrels=qrels, passages=False)
    assert (ds.min_grade, ds.max_grade, ds.relevant_threshold) == (0, 2, 2)
    counts = ds.grade_counts()["per_grade"]
    assert [(c["grade"], c["count"]) for c in counts] == [(0, 0), (1, 0), (2, 0), (0.5, 1), (2.5, 1)]


def test_judge_run_on_irds_dataset(tiny, tmp_path):
    out = tmp_path / "run"
    with MockLLMServer() as srv:
        argv = ["run", "--method", "umbrela", "--model", "openai/mock", "--base-url", srv.openai_url]
        argv += ["--dataset", f"irds:{tiny}", "--no-cache", "--output", str(out)]
        result = judge(*argv, env={"OPENAI_API_KEY": "sk-test"})
        assert result.returncode == 0, result.output
        records = read_judgments(out)
        assert sorted((r.qid, r.docid) for r in records) == [
            ("q1", "d1"),
            ("q1", "d3"),
            ("q2", "d2"),
            ("q2", "d3"),
        ]
        assert all(r.status == "ok" for r in records)
        # the passage text reached the model: the prompts the server saw hold it
        assert any("pizza napoletana is great" in str(req.body) for req in srv.requests)
        again = judge(*argv, env={"OPENAI_API_KEY": "sk-test"})
        assert again.returncode == 0 and "0 calls" in again.output


@pytest.fixture()
def listener():
    """A TCP listener on 127.0.0.1 that counts the connections it accepts."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.settimeout(0.2)
    accepted: list[int] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            accepted.append(1)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield sock.getsockname()[1], accepted
    stop.set()
    thread.join(timeout=10)
    sock.close()


def test_missing_cache_is_a_clear_error_without_network(listener, tmp_path, monkeypatch):
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TsvQueries
    from ir_datasets.util import Cache, Download, RequestsDownload

    port, accepted = listener
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "home"))
    url = f"http://127.0.0.1:{port}/queries.tsv"
    name = f"rjtest/remote-{port}"
    queries = Cache(Download([RequestsDownload(url)]), tmp_path / "home" / "queries.tsv")
    qrels = Cache(Download([RequestsDownload(url + ".qrels")]), tmp_path / "home" / "qrels")
    ir_datasets.registry.register(name, Dataset(TsvQueries(queries), TrecQrels(qrels, {0: "no", 1: "yes"})))
    with pytest.raises(InputError) as err:
        load_dataset(f"irds:{name}")
    message = str(err.value)
    assert "not in the ir_datasets cache" in message and url in message
    result = judge(
        "run", "--method", "binary", "--model", "openai/x", "--dataset", f"irds:{name}", "--dry-run"
    )
    # an InputError: main prints its line last, exit 2
    assert result.returncode == 2 and result.stderr.splitlines()[-1].startswith("error: "), result.output
    assert accepted == []  # nothing connected to the "remote" server
    # the download classes are restored afterwards
    assert RequestsDownload.stream is not None and "stream" in vars(RequestsDownload)


def test_unknown_irds_id(tiny):
    with pytest.raises(InputError, match="has no dataset"):
        load_dataset("irds:rjtest/no-such-dataset")
