"""`judge combine`: consensus rules (with the tie rule), agreement, α and provenance, on small files
and (marked ``shared``) on the published prompt-sensitivity judgments."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from _cli import judge
from reljudge.aggregation.consensus import combine_scores, majority


def test_majority_tie_goes_to_the_lowest_label():
    assert majority([1, 0, 1]) == (1, 2 / 3)
    assert majority([1, 0]) == (0, 0.5)
    assert majority([3, 2, 2, 3, 1]) == (2, 0.4)


def test_combine_rules_and_agreement():
    members = {
        "a": {"q": {"d1": 1, "d2": 0, "d3": 3}},
        "b": {"q": {"d1": 1, "d2": 1, "d3": 1}},
        "c": {"q": {"d1": 0, "d2": 1}},
    }
    maj = combine_scores(members, "majority")
    assert maj.scores == {"q": {"d1": 1, "d2": 1, "d3": 1}}
    assert maj.agreement[("q", "d1")] == pytest.approx(2 / 3)
    assert maj.agreement[("q", "d3")] == 0.5  # c casts no vote on d3; 3 vs 1 ties to 1
    assert maj.values[("q", "d3")] == [3.0, 1.0, None]
    assert combine_scores(members, "mean").scores["q"]["d3"] == 2.0
    assert combine_scores(members, "min").scores["q"]["d1"] == 0
    assert combine_scores(members, "max").scores["q"]["d2"] == 1
    with pytest.raises(ValueError):
        combine_scores({"a": members["a"]})


def _write(path: Path, rows: list[tuple[str, str, int]]) -> Path:
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in rows))
    return path


def test_cli_combine_writes_consensus_with_provenance(tmp_path):
    human = _write(tmp_path / "human.txt", [("q", "d1", 3), ("q", "d2", 0), ("q", "d3", 2), ("q", "d4", 0)])
    a = _write(tmp_path / "a.qrels", [("q", "d1", 1), ("q", "d2", 0), ("q", "d3", 1), ("q", "d4", 1)])
    b = _write(tmp_path / "b.qrels", [("q", "d1", 1), ("q", "d2", 1), ("q", "d3", 1), ("q", "d4", 0)])
    c = _write(tmp_path / "c.qrels", [("q", "d1", 1), ("q", "d2", 0), ("q", "d3", 0), ("q", "d4", 9)])
    out = tmp_path / "out"
    result = judge(
        "combine", str(a), str(b), str(c), "--scale", "0-1", "--qrels", str(human), "--out", str(out)
    )
    assert result.returncode == 0, result.output
    assert "1 labels outside the scale were left out" in result.output
    qrels = sorted((out / "qrels.txt").read_text().split("\n")[:-1])
    # d4: a says 1, b says 0, c's 9 is invalid -> a tie, which goes to 0
    assert qrels == ["q 0 d1 1", "q 0 d2 0", "q 0 d3 1", "q 0 d4 0"]
    info = json.loads((out / "combine.json").read_text())
    assert [m["name"] for m in info["members"]] == ["a", "b", "c"]
    assert all(len(m["sha256"]) == 64 for m in info["members"])
    assert info["members"][2]["invalid"] == 1
    assert info["kappa"]["consensus"]["binary"] == pytest.approx(1.0)
    assert "nominal" in info["alpha"]
    items = (out / "items.tsv").read_text().splitlines()
    assert items[0].split("\t") == ["qid", "docid", "consensus", "n", "agreement", "a", "b", "c"]
    # one member is not an ensemble
    one = judge("combine", str(a), "--out", str(tmp_path / "o2"))
    assert one.returncode != 0


@pytest.mark.shared
@pytest.mark.slow
def test_prompt_ensemble_on_the_published_judgments(shared_data, tmp_path, monkeypatch):
    monkeypatch.setenv("RELJUDGE_DATA_DIR", str(shared_data))
    with tarfile.open(shared_data / "prompt-sensitivity" / "judgments.tar.gz") as tar:
        members = [
            m for m in tar.getmembers() if m.name.startswith("./llama3.2/binary/llama3.2_binary_dl20_")
        ]
        tar.extractall(tmp_path, members=members, filter="data")
    files = sorted(str(p) for p in (tmp_path / "llama3.2" / "binary").glob("*.txt"))
    files = [
        f for f in files if Path(f).stem.rsplit("_", 1)[1] not in {"4", "6", "13", "23", "27", "30", "32"}
    ]
    out = tmp_path / "out"
    result = judge(
        "combine",
        *files,
        "--dataset",
        "trec-dl20",
        "--scale",
        "0-1",
        "--duplicates",
        "last",
        "--out",
        str(out),
    )
    assert result.returncode == 0, result.output
    info = json.loads((out / "combine.json").read_text())
    assert info["kappa"]["llama3.2_binary_dl20_0"]["binary"] == pytest.approx(0.291, abs=5e-4)
    # the measured result of the README table: the prompt ensemble beats its median member
    assert info["kappa"]["consensus"]["binary"] > info["median_member_kappa"]["binary"]
