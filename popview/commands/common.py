"""Helpers shared by sub-commands: progress bar, error reporting."""
from __future__ import annotations

import argparse
import sys
import time

from popview.cache import location
from popview.cache.progress import Cancelled
from popview.readers.errors import InputError


class ProgressBar:
    """A one-line progress bar on stderr (only when stderr is a terminal)."""

    def __init__(self, label: str):
        self.label = label
        self.enabled = sys.stderr.isatty()
        self._last = 0.0

    def __call__(self, fraction: float, message: str = "") -> None:
        now = time.monotonic()
        if not self.enabled or (now - self._last < 0.1 and fraction < 1.0):
            return
        self._last = now
        width = 30
        done = int(width * fraction)
        sys.stderr.write(f"\r{self.label[:40]:40s} [{'#' * done}{'.' * (width - done)}] {fraction * 100:5.1f}% {message[:30]:30s}")
        if fraction >= 1.0:
            sys.stderr.write("\n")
        sys.stderr.flush()


def fail(message: str) -> int:
    print(f"popview: error: {message}", file=sys.stderr)
    return 2


def guarded(fn):
    """Turn input errors into a one-line message and exit code 2."""
    def wrapper(*a, **k):
        try:
            return fn(*a, **k)
        except InputError as exc:
            return fail(str(exc))
        except Cancelled:
            return fail("cancelled")
        except KeyboardInterrupt:
            return fail("interrupted")
    return wrapper


class _CacheBeside(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        location.prefer_beside(True)
        setattr(namespace, self.dest, True)


def add_cache_dir(parser) -> None:
    parser.add_argument("--cache-dir", metavar="DIR", help="where to keep converted caches "
                        "(default: POPVIEW_CACHE_DIR if set, else the user cache directory)")
    parser.add_argument("--cache-beside", action=_CacheBeside, nargs=0, default=False,
                        help="keep caches beside the traces, in folders you own "
                             f"(also {location.BESIDE_ENV}=1)")
