"""The registry of judging methods: built-in judges and plugins (the ``reljudge.judges``
entry-point group, ``name = "package.module:JudgeClass"``), looked up by name, and by the record
methods each one owns (so that records read from a file find the method that scores them).

Every list of methods the toolkit shows (the ``--method`` help, the errors that name the methods an
option applies to) is made here from what the judges declare (`judging_methods`,
`pointwise_methods`, `resource_takers`), so that a new judge or a plugin appears in them."""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import linecache
from collections.abc import Mapping, Sequence
from typing import Any

from reljudge.errors import InputError
from reljudge.judges.base import Judge, Resource

_REGISTRY: dict[str, type[Judge]] = {}
_ENTRY_POINTS_LOADED = False
_BUILTINS_LOADED = False


def register(cls: type[Judge]) -> type[Judge]:
    """Class decorator: make a judge available under ``cls.name``."""
    existing = _REGISTRY.get(cls.name)
    if existing is not None and existing is not cls:
        raise ValueError(f"judge name {cls.name!r} is taken by {existing.__module__}.{existing.__qualname__}")
    _REGISTRY[cls.name] = cls
    return cls


def _load_all() -> None:
    """Import every module and package of `reljudge.judges` (a built-in judge registers itself
    with `register` when its module is imported: a new judge is one module), then the plugins."""
    global _BUILTINS_LOADED, _ENTRY_POINTS_LOADED
    if not _BUILTINS_LOADED:
        import pkgutil
        from pathlib import Path

        package = __name__.rpartition(".")[0]  # this module's package, reljudge.judges
        for found in pkgutil.iter_modules([str(Path(__file__).parent)]):
            importlib.import_module(f"{package}.{found.name}")
        _BUILTINS_LOADED = True
    if not _ENTRY_POINTS_LOADED:
        _ENTRY_POINTS_LOADED = True
        for entry in importlib.metadata.entry_points(group="reljudge.judges"):
            cls = entry.load()
            if entry.name not in _REGISTRY:
                _REGISTRY[entry.name] = cls


def available_judges() -> list[str]:
    _load_all()
    return sorted(_REGISTRY)


def unknown_method(name: str) -> str:
    """The message for a method no judge is registered as: the closest name ("did you mean",
    difflib) when one is close, and the list."""
    import difflib

    _load_all()
    names = sorted(_REGISTRY)
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown method {name!r}{hint} (available: {', '.join(names)})"


def get_judge(name: str, **options: Any) -> Judge:
    """An instance of the judge registered as ``name``, built with ``options``.

    The option names are checked against the judge's constructor first: an unknown name, or a
    required option left out, is an `InputError` listing the judge's options. A `TypeError` the
    judge's own code raises on purpose to reject a value (``raise TypeError("p must be ...")``)
    is an `InputError` too; any other `TypeError` is a bug and propagates as it is.
    """
    _load_all()
    cls = _REGISTRY.get(name)
    if cls is None:
        raise InputError(unknown_method(name))
    _check_option_names(name, cls, options)
    try:
        return cls(**options)
    except TypeError as err:
        if _rejects_a_value(err, cls):
            raise InputError(f"method {name!r}: {err}") from None
        raise


def _check_option_names(name: str, cls: type[Judge], options: Mapping[str, Any]) -> None:
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):  # no inspectable constructor (e.g. a plugin in C): let it check
        return
    params = signature.parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return  # takes any keyword: the judge checks its options itself
    named = [
        p
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    valid = ", ".join(p.name for p in named) or "none"
    unknown = [key for key in options if key not in {p.name for p in named}]
    if unknown:
        s = "s" if len(unknown) > 1 else ""
        raise InputError(
            f"method {name!r} has no option{s} {', '.join(map(repr, unknown))}; its options: {valid}"
        )
    missing = [p.name for p in named if p.default is inspect.Parameter.empty and p.name not in options]
    if missing:
        raise InputError(
            f"method {name!r} needs option(s) {', '.join(map(repr, missing))}; its options: {valid}"
        )


def _rejects_a_value(err: TypeError, cls: type[Judge]) -> bool:
    """Whether ``err`` was raised by a ``raise`` statement in the judge's own code (its module or
    reljudge's judges package) -- a message for the user -- rather than by Python on a bug."""
    tb = err.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    module = tb.tb_frame.f_globals.get("__name__", "")
    if module != cls.__module__ and not module.startswith("reljudge.judges."):
        return False
    source = linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno)
    return source.lstrip().startswith("raise ")


def reload_plugins() -> None:
    """Read the ``reljudge.judges`` entry points again (after installing a plugin at run time)."""
    global _ENTRY_POINTS_LOADED
    _ENTRY_POINTS_LOADED = False
    _load_all()


def registered() -> dict[str, type[Judge]]:
    """Every judge class by name (built-in and plugins)."""
    _load_all()
    return dict(_REGISTRY)


def owner_of(record_method: str) -> type[Judge] | None:
    """The judge class whose records of method ``record_method`` it scores: the one declaring the
    method in its class-level ``label_methods`` or ``stage_methods``; None when no judge declares
    it (the records of pointwise and pairwise judges, whose method a run may name freely, are
    scored by their shape)."""
    _load_all()
    for cls in _REGISTRY.values():
        if record_method in _declared(cls, "label_methods") or record_method in _declared(
            cls, "stage_methods"
        ):
            return cls
    return None


def _declared(cls: type[Judge], name: str) -> tuple[str, ...]:
    value = inspect.getattr_static(cls, name, ())
    return tuple(value) if isinstance(value, (tuple, list)) else ()


def judging_methods(*, reads_passages: bool = True) -> list[str]:
    """The names of the registered judges that judge passages (``reads_passages=False``: those
    that work per topic from the query alone, answer generation), sorted."""
    return [
        n for n, cls in sorted(registered().items()) if _static(cls, "reads_passages", True) is reads_passages
    ]


def pointwise_methods() -> list[str]:
    """The pointwise judges (one call and one label per (topic, passage)) as lists of methods name
    them, sorted: a judge that is pointwise only with some options (its ``pointwise`` a property)
    with its `Judge.pointwise_when` (``custom (binary/graded prompt)``)."""
    found = []
    for name, cls in sorted(registered().items()):
        value = _static(cls, "pointwise", False)
        if value is True:
            found.append(name)
        elif isinstance(value, property):
            found.append(f"{name} ({cls.pointwise_when})" if cls.pointwise_when else name)
    return found


def option_takers(option: str) -> list[str]:
    """The names of the registered judges whose constructor takes the option ``option``, sorted."""
    found = []
    for name, cls in sorted(registered().items()):
        try:
            parameters = inspect.signature(cls).parameters
        except (TypeError, ValueError):
            continue
        if option in parameters:
            found.append(name)
    return found


def resource_takers(resource: str) -> dict[str, tuple[type[Judge], Resource]]:
    """The registered judges that take the resource ``resource`` (``answers``), by name (sorted),
    with their declaration of it."""
    found: dict[str, tuple[type[Judge], Resource]] = {}
    for name, cls in sorted(registered().items()):
        for declared in cls.resources:
            if declared.name == resource:
                found[name] = (cls, declared)
    return found


def listed(names: Sequence[str], last: str = "or") -> str:
    """``a, b or c`` (``last`` joins the last two)."""
    names = list(names)
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} {last} {names[-1]}"


def _static(cls: type[Judge], name: str, default: Any) -> Any:
    return inspect.getattr_static(cls, name, default)
