"""A credential given as a request field (``--param api_key=...``) would be written in clear to
batch request files (and uploaded), to ``judge batch export`` files and into cache keys: it is
refused before anything is written or sent (`reljudge.io.redact.credential_field`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from _cli import judge
from reljudge.errors import InputError
from reljudge.io.redact import credential_field
from reljudge.llm.types import ClientConfig
from reljudge.run.options import request_field_list
from reljudge.testing import MockLLMServer

SECRET = "SECRETXYZ"


def _files_holding(root: Path, text: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


@pytest.mark.slow
@pytest.mark.parametrize(
    "param",
    [f"api_key={SECRET}", f"token={SECRET}", f"extra_headers={{Authorization: Bearer {SECRET}}}"],
)
def test_a_credential_param_is_refused_by_batch_run_and_export_and_never_written(tmp_path, param):
    with MockLLMServer(models=("gpt-4o-mini",)) as srv:
        common = [
            "--model", "openai/gpt-4o-mini", "--base-url", srv.openai_url, "--dataset", "dl19-sample",
            "--method", "umbrela", "--limit", "3", "--no-progress", "--param", param,
        ]  # fmt: skip
        ran = judge("run", *common, "--batch", "--batch-poll", "0.02", "--output", str(tmp_path / "run"),
                    "--cache", str(tmp_path / "run.sqlite"), cwd=tmp_path)  # fmt: skip
        assert ran.returncode == 2, ran.output
        assert "credential" in ran.stderr and "--api-key-env" in ran.stderr and SECRET not in ran.output
        ran = judge("batch", "export", *common, "--output", str(tmp_path / "exp"), "--cache",
                    str(tmp_path / "exp.sqlite"), "--requests", str(tmp_path / "req.jsonl"), cwd=tmp_path)  # fmt: skip
        assert ran.returncode == 2, ran.output
        assert "credential" in ran.stderr and SECRET not in ran.output
        assert srv.calls == 0 and not srv.batches.files  # nothing sent, nothing uploaded
    assert _files_holding(tmp_path, SECRET) == []


def test_what_counts_as_a_credential_field():
    assert credential_field({"api_key": "x"}) == "api_key"
    assert credential_field({"extra_body": {"auth": {"password": "x"}}}) == "extra_body.auth"
    assert credential_field({"user": "sk-" + "a" * 30}) == "user"
    for fine in ({"max_tokens": 5, "top_k": 3}, {"prompt_cache_key": "run-1"}, {"api_key_env": "MY_KEY"}, {}):
        assert credential_field(fine) is None
    with pytest.raises(InputError, match="--param api_key: a credential"):
        request_field_list([f"api_key={SECRET}"])
    assert request_field_list(["temperature=0.5", "prompt_cache_key=a"]) == {
        "temperature": 0.5,
        "prompt_cache_key": "a",
    }
    with pytest.raises(ValueError, match="credential"):
        ClientConfig(model="gpt-4o-mini", extra_params={"api_key": SECRET})
