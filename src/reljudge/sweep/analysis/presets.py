"""Named sets of analysis conventions (``judge sweep --from-judgments --preset NAME``).

``thesis-table-4.5``: the conventions under which the prompt-sensitivity table of the thesis
(Arabzadeh, Table 4.5) reproduces from the published release (seed-methods-specs S1): prompt ids
7 (human) and 16 (LLM) left out besides the authors' exclusions (12 + 12 prompts), dl20 and dl21
pooled into one distribution of 24 values per (model, task, group), population variance, binary κ
with human grade >= 1 relevant, and invalid labels kept as a category of their own. Its binary and
pairwise columns reproduce; its graded column does not reproduce under any convention tried.
"""

from __future__ import annotations

from typing import Any

from reljudge.errors import InputError
from reljudge.sweep.analysis.conventions import INVALID_POLICIES, Conventions

VARIANCES: dict[str, int] = {"sample": 1, "population": 0}

PRESETS: dict[str, dict[str, Any]] = {
    "thesis-table-4.5": {
        "excluded_prompts": ("7", "16"),
        "pool_datasets": True,
        "variance_ddof": 0,
        "threshold": 1.0,
        "invalid": "category",
    },
}


def preset(name: str) -> dict[str, Any]:
    """The conventions of preset ``name`` (a fresh dict); `KeyError` naming the known presets."""
    try:
        return dict(PRESETS[name])
    except KeyError:
        raise KeyError(f"unknown preset {name!r} (known: {', '.join(PRESETS)})") from None


def conventions_with(
    name: str | None = None,
    *,
    threshold: float | None = None,
    excluded_prompts: str | tuple[str, ...] | None = None,
    pool_datasets: bool | None = None,
    variance: str | None = None,
    invalid: str | None = None,
) -> Conventions:
    """`Conventions` from preset ``name`` (none: today's defaults), each option given (not None)
    overriding it; a bad value is an `InputError` naming the option."""
    settings: dict[str, Any] = {}
    if name is not None:
        try:
            settings = preset(name)
        except KeyError as err:
            raise InputError(f"--preset: {err.args[0]}") from None
    if threshold is not None:
        settings["threshold"] = float(threshold)
    if excluded_prompts is not None:
        ids = excluded_prompts.split(",") if isinstance(excluded_prompts, str) else excluded_prompts
        settings["excluded_prompts"] = tuple(i.strip() for i in ids if i.strip())
    if pool_datasets is not None:
        settings["pool_datasets"] = pool_datasets
    if variance is not None:
        if variance not in VARIANCES:
            raise InputError(f"--variance: {variance!r} (expected {' or '.join(VARIANCES)})")
        settings["variance_ddof"] = VARIANCES[variance]
    if invalid is not None:
        if invalid not in INVALID_POLICIES:
            raise InputError(f"--invalid: {invalid!r} (expected {' or '.join(INVALID_POLICIES)})")
        settings["invalid"] = invalid
    return Conventions(**settings)
