"""The ``judges:`` of a sweep: whole judging methods (built in or plugins) as cells.

A judge entry becomes one cell per dataset × model, run as ``judge run --method NAME`` with the
entry's options on the sweep's sampled items (or its pairs, with ``pairs: true``).
Its cell is listed as a `SweepPrompt` of the entry's ``scale`` task, in the group ``judge``, so the
tables, α and ranking stability treat it like a prompt of that task; its labels are the
document scores its run writes to ``qrels.txt`` (the judge's primary score set).
"""

from __future__ import annotations

from collections.abc import Sequence

from reljudge.errors import InputError
from reljudge.sweep.config import SweepConfig
from reljudge.sweep.prompts import SweepPrompt

GROUP = "judge"


def resolve_judges(config: SweepConfig, prompts: Sequence[SweepPrompt] = ()) -> list[SweepPrompt]:
    """The judge entries as sweep cells' prompts; an unknown method or option, or a name that a
    prompt of the same task already has (``prompts``), is an `InputError` at the entry's line."""
    from reljudge.judges import get_judge

    source = config.source or "<sweep>"
    found = []
    for i, entry in enumerate(config.judges):
        line = config.line("judges", i)
        taken = next((p for p in prompts if (p.task, p.id) == (entry.scale, entry.label)), None)
        if taken is not None:
            raise InputError(
                f"judge name {entry.label!r} is also a {entry.scale} prompt (at {taken.source}); give the judge a 'name'",
                source,
                line,
            )
        try:
            get_judge(entry.method, **entry.options)
        except InputError as err:
            raise InputError(f"judge {entry.label!r}: {err.message}", source, line) from None
        found.append(
            SweepPrompt(
                entry.label,
                entry.scale,
                GROUP,
                "",
                "",
                f"{source}:{line}",
                name=entry.method,
                judge=entry,
            )
        )
    return found
