"""Prices from litellm's model cost map (read offline), the user's prices on top, batch prices."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from _cli import judge
from reljudge.errors import InputError
from reljudge.llm import price_map
from reljudge.llm.price_map import Price, PriceMap, parse_map, read_map
from reljudge.llm.pricing import PriceTable, batch_cost, load_prices, model_cost, price_cost

SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.mark.parametrize(
    ("model", "key", "figures"),
    [
        # (input, output, cached_input, batch_input, batch_output) per 1M tokens, as litellm
        # 1.106.2's map lists them
        ("gpt-4o", "gpt-4o", (2.5, 10.0, 1.25, 1.25, 5.0)),
        ("gpt-4o-mini", "gpt-4o-mini", (0.15, 0.6, 0.075, 0.075, 0.3)),
        ("gpt-4o-2024-08-06", "gpt-4o-2024-08-06", (2.5, 10.0, 1.25, 1.25, 5.0)),
        ("openai/gpt-4.1-mini", "gpt-4.1-mini", (0.4, 1.6, 0.1, 0.2, 0.8)),
        ("litellm/openai/gpt-4o-mini", "gpt-4o-mini", (0.15, 0.6, 0.075, 0.075, 0.3)),
        ("gpt-4o-mini-2099-01-01", "gpt-4o-mini", (0.15, 0.6, 0.075, 0.075, 0.3)),  # longest key
        ("litellm/anthropic/claude-haiku-4-5", "claude-haiku-4-5", (1.0, 5.0, 0.1, 0.5, 2.5)),
        ("litellm/azure/gpt-4o", "azure/gpt-4o", (2.5, 10.0, 1.25, None, None)),  # no batch price
    ],
)
def test_real_model_names_resolve_in_the_installed_map(model, key, figures):
    quote = PriceTable().quote(model)
    assert quote.price == Price(*figures)
    assert quote.source.startswith("litellm 1.106") and quote.source.endswith(f"model cost map: {key}")


def test_unknown_models_are_unpriced_and_ollama_stays_free():
    table = PriceTable()
    # the installed map lists claude-3-5-haiku only under bedrock/vertex_ai, not under anthropic
    for model in ("anthropic/claude-3-5-haiku-latest", "openai/mystery-7b", "Qwen/Qwen2.5-7B"):
        quote = table.quote(model)
        assert quote.price is None and not quote.known and "not in the litellm" in quote.source
        assert model_cost(model, 1000, 1000, table) == (0.0, False)
    assert table.quote("ollama/llama3.2").known and model_cost("ollama/llama3.2", 10**6, 10**6, table) == (
        0.0,
        True,
    )
    assert table.quote("ollama/llama3:8b").price == Price(0.0, 0.0)  # listed, at 0


def test_the_map_is_read_without_importing_litellm():
    code = (
        "import sys; from reljudge.llm.pricing import PriceTable; "
        "q = PriceTable().quote('gpt-4o'); assert q.price.input == 2.5, q; "
        "assert 'litellm' not in sys.modules; print('ok')"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env={"PYTHONPATH": SRC}, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_a_user_entry_overrides_the_map_field_by_field(tmp_path):
    path = tmp_path / "prices.yaml"
    path.write_text("gpt-4o: {input: 2.0}\nmy-model: {input: 1, output: 2}\nllama-x: {batch_input: 0.1}\n")
    table = load_prices(path)
    quote = table.quote("gpt-4o-2024-08-06")  # the map's own key is more specific than the user's
    assert quote.price.input == 2.5
    quote = table.quote("gpt-4o")
    assert quote.price == Price(2.0, 10.0, 1.25, 1.25, 5.0)
    assert quote.source.endswith(f"model cost map: gpt-4o, with input from --prices {path}")
    assert table.quote("gpt-4o-mini").price.input == 0.15  # the user's gpt-4o does not price it
    assert table.quote("openai/my-model").source == f"--prices {path}: my-model"
    with pytest.raises(InputError, match="needs both input and output"):
        table.quote("llama-x")
    path.write_text("gpt-4o: {input: 1, colour: 2}\n")
    with pytest.raises(InputError, match="price of 'gpt-4o' must be"):
        load_prices(path)


def test_a_partial_entry_for_an_unlisted_model_is_refused_before_the_run(tmp_path):

    prices = tmp_path / "prices.yaml"
    prices.write_text("mystery-7b: {input: 1}\n")
    result = judge(
        "run", "--method", "umbrela", "--model", "mystery-7b", "--dataset", "dl19-sample", "--limit", "2",
        "--prices", str(prices), "--dry-run", "--out", str(tmp_path / "run"),
    )  # fmt: skip
    # an InputError: main prints its line last, exit 2
    assert result.returncode == 2 and result.stderr.splitlines()[-1].startswith("error: "), result.output
    assert "needs both input and output" in result.stderr and not (tmp_path / "run").exists()


def test_batch_cost_uses_the_batch_prices_and_falls_back_to_the_synchronous_ones():
    gpt4o = Price(2.5, 10.0, 1.25, 1.25, 5.0)
    assert batch_cost(gpt4o, "openai", 1_000_000, 100_000) == (pytest.approx(1.75), True)
    assert price_cost(gpt4o, "openai", 1_000_000, 100_000) == (pytest.approx(3.5), True)
    unlisted = Price(2.5, 10.0, 1.25)
    assert batch_cost(unlisted, "openai", 1000, 10) == price_cost(unlisted, "openai", 1000, 10)
    # cached prompt tokens in a batch: the lower of the cached and the batch input price
    assert batch_cost(Price(2.0, 8.0, 0.5, 1.0, 4.0), "openai", 1000, 0, 400)[0] == pytest.approx(
        (600 * 1.0 + 400 * 0.5) / 1e6
    )
    assert batch_cost(None, "openai", 1, 1) == (0.0, False) and batch_cost(None, "ollama", 1, 1) == (
        0.0,
        True,
    )
    table = PriceTable()
    assert model_cost("gpt-4o", 10**6, 10**6, table, batch=True)[0] == pytest.approx(6.25)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "cannot read"),
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "holds no priced text model"),
        (b"[" * 100_000 + b"]" * 100_000, "not valid JSON"),
    ],
)
def test_a_missing_or_malformed_map_leaves_models_unpriced_with_a_warning(
    tmp_path, monkeypatch, caplog, content, problem
):
    path = tmp_path / price_map.MAP_FILE
    if content is not None:
        path.write_bytes(content)
    monkeypatch.setattr(price_map, "map_file", lambda: (path, "0.0-test"))
    price_map.litellm_map.cache_clear()
    try:
        with caplog.at_level(logging.WARNING, logger="reljudge.llm.price_map"):
            table = PriceTable()
            assert table.quote("gpt-4o").price is None and not table.quote("gpt-4o").known
            assert table.quote("ollama/llama3.2").known  # local: free
            table.quote("gpt-4o-mini")  # read once: one warning
        warnings = [r.getMessage() for r in caplog.records]
        assert len(warnings) == 1 and problem in warnings[0] and "--prices" in warnings[0]
        user = tmp_path / "prices.yaml"
        user.write_text("gpt-4o: {input: 1, output: 2}\n")
        assert load_prices(user).quote("gpt-4o").price == Price(1.0, 2.0)  # --prices still works
    finally:
        price_map.litellm_map.cache_clear()


def test_an_oversized_map_is_not_read(tmp_path, monkeypatch):
    path = tmp_path / price_map.MAP_FILE
    path.write_text(
        json.dumps({"m": {"mode": "chat", "input_cost_per_token": 1e-6, "output_cost_per_token": 1e-6}})
    )
    monkeypatch.setattr(price_map, "MAX_MAP_BYTES", 10)
    assert "larger than 10 bytes" in read_map(path, "x").problem
    monkeypatch.setattr(price_map, "MAX_MAP_BYTES", 10_000)
    assert read_map(path, "x").entries["m"].price == Price(1.0, 1.0)


def test_hostile_entries_are_skipped():
    data = {
        "ok": {"mode": "chat", "input_cost_per_token": 2.5e-06, "output_cost_per_token": 1e-05},
        "embedding": {"mode": "embedding", "input_cost_per_token": 1e-07, "output_cost_per_token": 0},
        "nan": {"input_cost_per_token": float("nan"), "output_cost_per_token": 1e-6},
        "negative": {"input_cost_per_token": -1e-6, "output_cost_per_token": 1e-6},
        "huge": {"input_cost_per_token": 1e300, "output_cost_per_token": 1e-6},
        "string": {"input_cost_per_token": "1e-6", "output_cost_per_token": 1e-6},
        "bool": {"input_cost_per_token": True, "output_cost_per_token": 1e-6},
        "no-output": {"input_cost_per_token": 1e-6},
        "not-a-dict": [1, 2],
        "bad-batch": {
            "input_cost_per_token": 1e-6,
            "output_cost_per_token": 2e-6,
            "input_cost_per_token_batches": "cheap",
            "litellm_provider": ["x"],
        },
    }
    entries = parse_map(data)
    assert set(entries) == {"ok", "bad-batch"}
    assert entries["ok"].price == Price(2.5, 10.0)  # 2.5e-06 * 1e6 is 2.5, not 2.4999999999999996
    assert entries["bad-batch"].price == Price(1.0, 2.0) and entries["bad-batch"].provider == ""
    table = PriceTable(builtin=PriceMap(entries, "t"))
    assert table.quote("ok-2024").price == Price(2.5, 10.0) and table.quote("okay").price is None


def test_dry_run_shows_the_batch_cost_and_where_the_price_came_from(tmp_path):

    args = ["run", "--method", "umbrela", "--model", "gpt-4o", "--dataset", "dl19-sample", "--limit", "10"]
    result = judge(*args, "--dry-run", "--out", str(tmp_path / "r"))
    assert result.returncode == 0, result.output
    assert "synchronous" in result.output and "through the Batch API" in result.output
    assert "price: litellm 1.106" in result.output and "model cost map: gpt-4o (input $2.5" in result.output
    result = judge(*args, "--dry-run", "--json", "--out", str(tmp_path / "r"))
    est = json.loads(result.output)["estimate"]
    assert est["cost_usd"] == est["cost_usd_sync"] and est["batch"] is False
    assert est["cost_usd_batch"] == pytest.approx(est["cost_usd_sync"] / 2)
    assert est["price"]["input"] == 2.5 and est["price"]["batch_input"] == 1.25


def test_the_manifest_says_where_the_price_came_from(tmp_path):

    from reljudge.testing import MockLLMServer

    with MockLLMServer(models=("gpt-4o-mini",)) as srv:
        argv = ["run", "--method", "umbrela", "--model", "openai/gpt-4o-mini", "--base-url", srv.openai_url]
        argv += ["--dataset", "dl19-sample", "--limit", "2", "--no-cache", "--out", str(tmp_path / "r")]
        result = judge(*argv, env={"OPENAI_API_KEY": "sk-test"})
    assert result.returncode == 0, result.output
    price = json.loads((tmp_path / "r" / "manifest.json").read_text())["extra"]["price"]
    assert price["source"].startswith("litellm 1.106") and price["source"].endswith("map: gpt-4o-mini")
    assert price["known"] and price["input"] == 0.15 and price["batch_output"] == 0.3


def test_a_price_from_another_models_entry_is_named_as_such():
    table = PriceTable()
    assert table.quote("gpt-4o-mnii").stand_in == "gpt-4o"  # a typo: only starts with gpt-4o
    assert table.quote("gpt-4o-mnii").as_dict()["priced_as"] == "gpt-4o"
    for own in ("gpt-4o", "gpt-4o-2024-08-06", "openai/gpt-4o-mini", "ollama/llama3.2", "openai/mylocal"):
        assert table.quote(own).stand_in is None and "priced_as" not in table.quote(own).as_dict()


@pytest.mark.slow
def test_a_misspelt_model_is_priced_with_one_warning_naming_both_models_and_a_did_you_mean(tmp_path):
    args = ["run", "--method", "umbrela", "--dataset", "dl19-sample", "--limit", "5", "--dry-run"]
    ran = judge(*args, "--model", "gpt-4o-mnii", "--out", tmp_path / "r")
    assert ran.returncode == 0, ran.output
    warned = [line for line in ran.stderr.splitlines() if line.startswith("warning:")]
    assert len(warned) == 1, ran.stderr
    assert "'gpt-4o-mnii'" in warned[0] and "priced as 'gpt-4o'" in warned[0]
    assert "did you mean 'gpt-4o-mini'?" in warned[0]
    est = json.loads(judge(*args, "--json", "--model", "gpt-4o-mnii", "--out", tmp_path / "r").stdout)
    assert est["estimate"]["price"]["priced_as"] == "gpt-4o"
    # an unknown name is not refused (self-hosted names are legitimate); a close one gets a hint
    ran = judge(*args, "--model", "gpt4o", "--out", tmp_path / "r")
    assert ran.returncode == 0 and "did you mean 'gpt-4o'?" in ran.stderr
    for fine in ("gpt-4o", "openai/my-own-llm"):
        ran = judge(*args, "--model", fine, "--out", tmp_path / "r")
        assert ran.returncode == 0 and "warning:" not in ran.stderr, ran.stderr


def test_the_manifest_records_a_price_taken_from_another_model(tmp_path):
    from reljudge.testing import MockLLMServer

    with MockLLMServer() as srv:
        argv = ["run", "--method", "umbrela", "--model", "openai/gpt-4o-mnii", "--base-url", srv.openai_url]
        argv += ["--dataset", "dl19-sample", "--limit", "2", "--no-cache", "--out", str(tmp_path / "r")]
        result = judge(*argv, env={"OPENAI_API_KEY": "sk-test"})
    assert result.returncode == 0, result.output
    assert result.stderr.count("priced as 'gpt-4o'") == 1
    price = json.loads((tmp_path / "r" / "manifest.json").read_text())["extra"]["price"]
    assert price["priced_as"] == "gpt-4o" and price["input"] == 2.5
