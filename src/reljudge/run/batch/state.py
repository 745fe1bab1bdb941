"""The state of a run's batches, in ``batch/state.json`` (written atomically after every step).

Each wave is one request file sent as one batch. Its ``step`` says how far it got, and the step
is written *before* the remote action it names, so that a process killed at any point knows what
may have happened: ``uploading`` (a file may exist at the provider: look for it by its name
before uploading again), ``creating`` (a batch may exist: look for it by its metadata or its
input file before creating another), ``lost`` (a create failed in a way that may have come after
the provider made the batch, and the batch could not be found: it is not created again unless the
user says so, ``--batch-resend-lost``), ``sent`` (its batch id is known: poll it), ``ingested``
(done). Names, metadata and the create's idempotency key are deterministic: the run's id (made
once, kept here) and the wave's number.

The ids a provider sends are checked before they are saved (`reljudge.llm.batch.service.is_provider_id`:
they go into URL paths); a state file an older version wrote with an id that is not one (``..``)
does not stick the run: the wave goes back to the step that looks its file or batch up again
(`BatchState.repaired` says which).
"""

from __future__ import annotations

import json
import secrets
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.io.atomic import atomic_write

STATE_FILE = "state.json"
STEPS = ("prepared", "uploading", "uploaded", "creating", "lost", "sent", "ingested")
#: the largest state file read (a wave is ~300 bytes: millions of waves)
MAX_STATE_BYTES = 256 * 1024 * 1024


@dataclass
class Wave:
    n: int
    file: str  # the request file, in the batch folder
    lines: int
    bytes: int
    step: str = "prepared"
    file_id: str | None = None
    batch_id: str | None = None
    status: str | None = None  # the batch's status at the provider
    total: int = 0
    completed: int = 0
    failed: int = 0
    cost_usd: float = 0.0  # what the wave was reserved under the cost cap
    tokens: int = 0  # its tokens as the enqueued-token limit counts them (`reljudge.run.batch.passes`)
    served: dict[str, int] | None = None  # its answers by the ``model`` they name

    @property
    def live(self) -> bool:
        return self.step != "ingested"


@dataclass
class BatchState:
    path: Path
    run: str = field(default_factory=lambda: secrets.token_hex(8))
    waves: list[Wave] = field(default_factory=list)
    #: a ``--retry-failed`` run started a new failure log and has not finished yet: a run started
    #: again after a kill goes on with that log (its lines that failed again are not sent again)
    retrying: bool = False
    #: what `load` set right in a state file holding an id that is not one (said once by the runner)
    repaired: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> BatchState:
        if not path.exists():
            return cls(path)
        try:
            if path.stat().st_size > MAX_STATE_BYTES:
                raise ValueError("too large")
            data = json.loads(path.read_text(encoding="utf-8"))
            waves = [Wave(**w) for w in data["waves"]]
            run = str(data["run"])
            retrying = data.get("retrying") is True
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise InputError(
                f"the batch state cannot be read ({err}); it says which batches were sent", path
            ) from None
        for wave in waves:
            if wave.step not in STEPS:
                raise InputError(f"wave {wave.n} has an unknown step {wave.step!r}", path)
        state = cls(path, run, waves, retrying)
        state.repair()
        return state

    def repair(self) -> None:
        """Send back to the step that looks it up again each wave whose saved file or batch id is
        not an id (`is_provider_id`), noting it in `repaired`."""
        from reljudge.llm.batch.service import is_provider_id

        for wave in self.waves:
            bad_batch = wave.batch_id is not None and not is_provider_id(wave.batch_id)
            bad_file = wave.file_id is not None and not is_provider_id(wave.file_id)
            if not (bad_batch or bad_file):
                continue
            if bad_batch:
                wave.batch_id = None
                if wave.step == "sent":
                    wave.step = "creating"  # its batch is looked for by its metadata and input file
            if bad_file:
                wave.file_id = None
                if wave.step in ("uploaded", "creating", "lost"):
                    wave.step = "uploading"  # its file is looked for by its name
            self.repaired.append(
                f"wave {wave.n}: the batch state held a {'batch' if bad_batch else 'file'} id that is not one "
                f"(saved by an older version); its {'batch' if bad_batch else 'file'} is looked for again"
            )

    def save(self) -> None:
        data: dict[str, Any] = {
            "version": 1,
            "run": self.run,
            "retrying": self.retrying,
            "waves": [asdict(w) for w in self.waves],
        }
        with atomic_write(self.path) as handle:
            json.dump(data, handle, indent=1)

    def step(self, wave: Wave, step: str, **values: Any) -> None:
        """Move ``wave`` to ``step`` (with its new fields) and save, before what the step names; a
        file or batch id that is not one is a `ProviderError` (nothing saved)."""
        from reljudge.llm.batch.service import is_provider_id
        from reljudge.llm.types import ProviderError

        for name in ("file_id", "batch_id"):
            value = values.get(name)
            if value is not None and not is_provider_id(value):
                raise ProviderError("invalid_response", f"the provider sent a {name[:-3]} id that is not one")
        wave.step = step
        for name, value in values.items():
            setattr(wave, name, value)
        self.save()

    def filename(self, wave: Wave) -> str:
        """The name the wave's file is uploaded under (found again by it after a kill)."""
        return f"reljudge-{self.run}-wave{wave.n:05d}.jsonl"

    def metadata(self, wave: Wave) -> dict[str, str]:
        """The metadata of the wave's batch (found again by it after a kill)."""
        return {"reljudge_run": self.run, "reljudge_wave": str(wave.n)}

    def idempotency_key(self, wave: Wave) -> str:
        """The ``Idempotency-Key`` of the create of the wave's batch (the same when sent again)."""
        return f"reljudge-{self.run}-wave{wave.n:05d}"

    @property
    def live(self) -> list[Wave]:
        return [w for w in self.waves if w.live]

    @property
    def spent_usd(self) -> float:
        """What the waves sent were reserved under the cost cap."""
        return sum(w.cost_usd for w in self.waves if w.step not in ("prepared",))


def live_waves(run_dir: Path) -> int:
    """How many waves of the run directory ``run_dir`` are sent and not yet ingested (0 without a
    batch state, or one that cannot be read)."""
    path = Path(run_dir) / "batch" / STATE_FILE
    if not path.exists():
        return 0
    try:
        return len(BatchState.load(path).live)
    except InputError:
        return 0
