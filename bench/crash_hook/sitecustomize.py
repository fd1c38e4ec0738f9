"""Crash injection for bench/bench_crashes.py: imported by every Python process started with this folder on
PYTHONPATH (the operation's driver and its Spark Python workers alike); does nothing unless ``SQLEXT_CRASH`` is
set. ``SQLEXT_CRASH=<target>|<before|after>|<n>`` SIGKILLs the driver (``SQLEXT_CRASH_DRIVER``, the pid the
operation's script sets before Spark starts), then itself, at the n-th call of ``target`` in this process, before or
after the call runs. Targets: ``Storage.<method>`` or
``ActiveTimeline.<method>``. ``SQLEXT_CRASH_CENSUS=<file>`` instead appends one line per call (``pid target``)
so the harness can count the calls an operation makes."""

from __future__ import annotations

import os
import signal

_SPEC = os.environ.get("SQLEXT_CRASH", "")
_CENSUS = os.environ.get("SQLEXT_CRASH_CENSUS", "")
TARGETS = ("Storage.create_if_absent", "Storage.open_output", "Storage.write_bytes", "Storage.write_atomic",
           "Storage.rename", "Storage.delete", "Storage.delete_dir", "Storage.makedirs",
           "ActiveTimeline.create_requested", "ActiveTimeline.transition_to_inflight", "ActiveTimeline.complete",
           "ActiveTimeline.delete_instant_files", "ActiveTimeline.revert_to_requested")


def _install() -> None:
    from engine.storage import Storage
    from engine.timeline.active import ActiveTimeline

    classes = {"Storage": Storage, "ActiveTimeline": ActiveTimeline}
    if _CENSUS:
        wanted = TARGETS
    else:
        target, when, nth = _SPEC.split("|")
        wanted = (target,)
    counts: dict[str, int] = {}

    def wrap(name: str, original):  # type: ignore[no-untyped-def]
        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            if _CENSUS:
                with open(_CENSUS, "a") as out:
                    out.write(f"{os.getpid()} {name}\n")
                return original(*args, **kwargs)
            counts[name] = counts.get(name, 0) + 1
            hit = counts[name] == int(nth)
            if hit and when == "before":
                _die()
            result = original(*args, **kwargs)
            if hit:
                _die()
            return result
        return wrapper

    for name in wanted:
        owner, method = name.split(".")
        cls = classes[owner]
        setattr(cls, method, wrap(name, getattr(cls, method)))


def _die() -> None:
    driver = int(os.environ.get("SQLEXT_CRASH_DRIVER", "0") or 0)
    if driver and driver != os.getpid():
        try:
            os.kill(driver, signal.SIGKILL)
        except OSError:
            pass
    os.kill(os.getpid(), signal.SIGKILL)


if _SPEC or _CENSUS:
    _install()
