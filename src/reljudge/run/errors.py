"""How a job ends early: a run directory that cannot be written (`OutputError`), a provider that
cannot serve the job (`find_provider_abort`), an input error raised inside the judge's tasks."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from reljudge.errors import InputError

if TYPE_CHECKING:
    from reljudge.llm.budget import BudgetExhausted
    from reljudge.llm.types import ProviderAbort

E = TypeVar("E", bound=BaseException)


class OutputError(InputError):
    """The run directory cannot be written (a full disk, a read-only file system, a path under
    a file): ``error: PATH: cannot write: ...``, exit code 2; the records written so far stay."""


@contextlib.contextmanager
def writing(path: Path) -> Iterator[None]:
    """Turn an `OSError` while writing the run directory into an `OutputError` naming the file."""
    try:
        yield
    except OSError as err:
        where = err.filename if isinstance(err.filename, str) else path
        what = err.strerror or str(err)
        raise OutputError(
            f"cannot write: {what}; the records written so far are kept: make room (or give a "
            "writable --output) and re-run the same command to resume",
            where,
        ) from None


def close_writer(writer: Any) -> OSError | None:
    """Close the judgments writer; the `OSError` closing raised (a full disk), if any."""
    try:
        writer.close()
    except OSError as err:
        return err
    return None


def first_input_error(err: BaseException) -> InputError | None:
    """``err`` when it is an `InputError`, or the first one inside its exception groups."""
    if isinstance(err, InputError):
        return err
    if isinstance(err, BaseExceptionGroup):
        for inner in err.exceptions:
            found = first_input_error(inner)
            if found is not None:
                return found
    return None


def find_provider_abort(err: BaseException) -> ProviderAbort | None:
    """The `ProviderAbort` that ended a job: ``err`` itself or one inside the exception groups
    of the judge's task groups; None when the job ended for another reason."""
    from reljudge.llm.types import ProviderAbort

    return _find(err, ProviderAbort)


def find_budget_exhausted(err: BaseException) -> BudgetExhausted | None:
    """The `BudgetExhausted` that ended a job at its cost cap (``err`` or one inside its
    exception groups); None when the job ended for another reason."""
    from reljudge.llm.budget import BudgetExhausted

    return _find(err, BudgetExhausted)


def _find(err: BaseException, kind: type[E]) -> E | None:
    if isinstance(err, kind):
        return err
    if isinstance(err, BaseExceptionGroup):
        for inner in err.exceptions:
            found = _find(inner, kind)
            if found is not None:
                return found
    return None
