"""The options of ``judge run`` and ``judge probe``, generated from `RunConfig`'s fields.

A `reljudge.run.RunConfig` field that the command line sets carries a `Flag`
(`reljudge.run.options`): the option's name, help text and the commands that take it. A command
function taking run options is marked with `with_run_options`; its own parameters are the
options only that command has, and its ``**run_options`` receive the generated ones.
`command_function` gives typer the full function: its ``__signature__`` holds one
``typer.Option`` per Flag (type, default and bounds those of the field unless the Flag says
otherwise) besides the command's own, and typer reads ``inspect.signature``. `run_config` turns
the options' values into a validated `RunConfig`.

Importing `RunConfig` costs a few tenths of a second (pydantic, the run package), so it is
imported inside these functions only, when a command that takes run options is used
(`reljudge.cli.deferred`).
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import typer

if TYPE_CHECKING:
    from pydantic.fields import FieldInfo

    from reljudge.run import RunConfig
    from reljudge.run.options import Flag

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class RunOptions:
    """What `with_run_options` notes on a command function: the command whose Flags it takes,
    and where its own options go among the generated ones (own parameter -> the field whose
    option it follows; the others go last)."""

    command: str
    after: Mapping[str, str]


def with_run_options(command: str, *, after: Mapping[str, str] | None = None) -> Callable[[F], F]:
    """Mark a command function whose ``**run_options`` take the options of ``command``'s Flags.

    Until `command_function` adds them, the function's signature holds its own options only (so
    that typer can register it, cheaply, as a `reljudge.cli.deferred.DeferredCommand`)."""

    def mark(function: F) -> F:
        signature = inspect.signature(function, eval_str=True)
        own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
        if len(own) == len(signature.parameters):
            raise TypeError(f"{function.__name__} has no **run_options parameter")
        function.__signature__ = signature.replace(parameters=own)  # type: ignore[attr-defined]
        function.run_options = RunOptions(command, dict(after or {}))  # type: ignore[attr-defined]
        return function

    return mark


def command_function(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` (marked by `with_run_options`) with the generated options in its signature."""

    @functools.wraps(function)
    def command(**values: Any) -> Any:
        return function(**values)

    command.__signature__ = signature(function)  # type: ignore[attr-defined]
    return command


def signature(function: Callable[..., Any]) -> inspect.Signature:
    """The command's own options and one option per Flag of its command, in `RunConfig`'s field
    order, each own option placed as its `RunOptions.after` says. Two parameters or two
    options of the same name are a `TypeError` (a Flag and a command option that collide)."""
    spec: RunOptions = function.run_options  # type: ignore[attr-defined]
    own = [p.replace(kind=p.KEYWORD_ONLY) for p in inspect.signature(function).parameters.values()]
    generated = run_parameters(spec.command)
    missing = set(spec.after.values()) - set(generated) | set(spec.after) - {p.name for p in own}
    if missing:
        raise TypeError(f"{function.__name__}: after= names what is not there: {sorted(missing)}")
    ordered: list[inspect.Parameter] = []
    for field, parameter in generated.items():
        ordered.append(parameter)
        ordered += [p for p in own if spec.after.get(p.name) == field]
    ordered += [p for p in own if p.name not in spec.after]
    _check_unique(function.__name__, ordered)
    return inspect.Signature(ordered)


def run_parameters(command: str) -> dict[str, inspect.Parameter]:
    """Field name -> the command parameter (a ``typer.Option``) of its Flag in ``command``."""
    from reljudge.run import RunConfig

    fields = RunConfig.model_fields
    return {name: _parameter(fields[name], flag) for name, flag in RunConfig.flags(command).items()}


def run_config(command: str, values: Mapping[str, Any], /, **settings: Any) -> RunConfig:
    """A validated `RunConfig` from the values of ``command``'s generated options (parameter
    name -> value; an option not given keeps the field's default) and ``settings``, fields the
    command sets itself. A bad value is an `InputError` naming the option."""
    from pydantic import ValidationError

    from reljudge.errors import input_error_from_validation
    from reljudge.run import RunConfig

    flags = RunConfig.flags(command)
    fields = {name: flag.value(values[flag.param]) for name, flag in flags.items() if flag.param in values}
    try:
        return RunConfig(**fields, **settings)
    except ValidationError as err:
        names = {name: flag.name for name, flag in flags.items()}
        raise input_error_from_validation(err, flags=names) from None


def _parameter(field: FieldInfo, flag: Flag) -> inspect.Parameter:
    from reljudge.run.options import FROM_FIELD

    annotation = field.annotation if flag.type is FROM_FIELD else flag.type
    if flag.default is not FROM_FIELD:
        default = flag.default
    elif field.is_required():
        default = ...
    else:
        default = field.get_default(call_default_factory=True)
    kind = _base(annotation)
    low = _bound(field, "ge", "gt") if flag.min is FROM_FIELD else flag.min
    high = _bound(field, "le", "lt") if flag.max is FROM_FIELD else flag.max
    if kind is float:  # a float option's bounds are shown as floats (x>=0.0)
        low, high = (None if b is None else float(b) for b in (low, high))
    names = (flag.name, *flag.aliases, *((flag.short,) if flag.short else ()))
    option = typer.Option(default, *names, help=flag.help_text, min=low, max=high)
    return inspect.Parameter(
        flag.param, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=annotation
    )


def _bound(field: FieldInfo, *names: str) -> float | None:
    """The field's bound ``ge``/``gt`` (or ``le``/``lt``), as an inclusive bound of the option:
    a value on an open bound passes the option and fails the validation, which names it."""
    for meta in field.metadata:
        for name in names:
            value = getattr(meta, name, None)
            if value is not None:
                return value
    return None


def _base(annotation: Any) -> Any:
    """``X`` for ``X | None``, else the annotation."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation


def _check_unique(function: str, parameters: list[inspect.Parameter]) -> None:
    seen: set[str] = set()
    for parameter in parameters:
        option = parameter.default
        names = [parameter.name, *(getattr(option, "param_decls", None) or ())]
        for name in names:
            if name in seen:
                raise TypeError(f"{function}: {name} is declared twice")
            seen.add(name)
