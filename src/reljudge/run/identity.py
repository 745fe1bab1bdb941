"""The identity of a job -- the settings its records depend on -- and the run directory's check
on resume: a directory holding records made with other settings is never added to."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reljudge.errors import InputError
from reljudge.run.config import RunConfig

if TYPE_CHECKING:
    from reljudge.io.rundir import RunDir
    from reljudge.judges.base import Judge

#: identity fields added after run directories were first written, with what a manifest that
#: lacks one (written before the field existed) is taken to have meant: ``base_url`` is unknown
#: (accepted, and recorded from then on); anything else was the default (None)
ADDED_IDENTITY_FIELDS: dict[str, Callable[[Any], bool]] = {
    "base_url": lambda now: True,
    "scores": lambda now: now == "labels",
    "samples": lambda now: now == 1,
    "constrain": lambda now: now == "off",
    "answers": lambda now: now is False,
}


#: identity fields that a run directory holding no successful record may change: where the model
#: is served, not what its labels mean (a first attempt at a wrong --base-url, re-pointed)
REPOINTABLE = ("base_url",)


def job_identity(config: RunConfig, judge: Judge) -> dict[str, Any]:
    """`RunConfig.identity` plus the SHA-256 of every prompt the judge may send
    (`Judge.prompts`), so that an edited prompt file is not mixed with the records of the old one."""
    identity = config.identity()
    identity["prompt_sha256"] = {name: template.sha256 for name, template in judge.prompts().items()}
    return identity


def sanitise(name: str) -> str:
    """A string safe as one path component (``ollama/llama3.2:3b`` -> ``ollama-llama3.2-3b``)."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")
    return cleaned or "x"


def default_output_dir(config: RunConfig, dataset_name: str) -> Path:
    """``runs/<dataset>-<method>-<model>`` (each part made safe as a file name)."""
    return config.runs_root / f"{sanitise(dataset_name)}-{sanitise(config.method)}-{sanitise(config.model)}"


def _is_none(value: Any) -> bool:
    return value is None


def check_identity(rundir: RunDir, identity: Mapping[str, Any]) -> dict[str, Any]:
    """Refuse to add records made with other settings to an existing run directory.
    Returns the earlier manifest (empty for a new directory)."""
    manifest = rundir.read_manifest()
    if not manifest:
        if rundir.exists() and rundir.judgments_path.stat().st_size > 0:
            raise InputError(
                f"holds judgments but no {rundir.manifest_path.name}, so how they were made is unknown; "
                "use another --output",
                rundir.path,
            )
        return {}
    earlier = (manifest.get("extra") or {}).get("identity")
    if not isinstance(earlier, Mapping):
        raise InputError(
            "not written by 'judge run' (no identity); use another --output", rundir.manifest_path
        )
    from reljudge.io.redact import scrub_secrets

    now = scrub_secrets(dict(identity))  # as the manifest has it (a secret --param is masked there)
    diffs = [
        name
        for name in now
        if (
            earlier[name] != now[name]
            if name in earlier
            else not ADDED_IDENTITY_FIELDS.get(name, _is_none)(now[name])
        )
    ]
    if diffs and set(diffs) <= set(REPOINTABLE) and not _has_success(rundir):
        return manifest  # re-pointed: the job says so and judges the failed items again (`repointed`)
    if diffs:
        shown = "; ".join(f"{n} was {earlier.get(n)!r}, now {now.get(n)!r}" for n in diffs)
        raise InputError(
            f"holds a run made with other settings ({shown}); refusing to mix them. "
            "Give the same settings to resume it, or another --output for a new run"
            + (
                " (only a directory without a successful record may change its --base-url)"
                if set(diffs) <= set(REPOINTABLE)
                else ""
            ),
            rundir.path,
        )
    return manifest


def _has_success(rundir: RunDir) -> bool:
    """Whether any record of the directory (replaced ones too) holds a label (status ok)."""
    from reljudge.io.judgments import scan_judgments

    path = rundir.judgments_path
    if not path.exists():
        return False
    return any(record.ok for _, record in scan_judgments(path))


def repointed(manifest: Mapping[str, Any], identity: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    """The `REPOINTABLE` fields whose value differs from the earlier manifest's (field -> (was,
    now)); `check_identity` let them through, so the directory holds no successful record."""
    earlier = (manifest.get("extra") or {}).get("identity") or {}
    return {
        name: (earlier[name], identity[name])
        for name in REPOINTABLE
        if name in earlier and name in identity and earlier[name] != identity[name]
    }
