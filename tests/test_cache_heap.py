"""The allocator is set for conversions while any runs, and set back after the last."""
from __future__ import annotations

from popview.cache import heap


class FakeLibc:
    def __init__(self):
        self.calls = []

    def mallopt(self, option, value):
        self.calls.append((option, value))
        return 1

    def malloc_trim(self, pad):
        self.calls.append(("trim", pad))
        return 1


def test_overlapping_conversions_set_once_and_reset_after_the_last(monkeypatch):
    libc = FakeLibc()
    monkeypatch.setattr(heap, "_glibc", lambda: libc)
    with heap.converting():
        with heap.converting():
            assert libc.calls == [(heap.M_MMAP_THRESHOLD, heap._CONVERTING[0]),
                                  (heap.M_TRIM_THRESHOLD, heap._CONVERTING[1])]
        assert len(libc.calls) == 2, "the first conversion still runs"
    assert libc.calls[2:] == [(heap.M_MMAP_THRESHOLD, heap._AFTERWARDS[0]),
                              (heap.M_TRIM_THRESHOLD, heap._AFTERWARDS[1]), ("trim", 0)]


def test_a_failed_conversion_resets_too(monkeypatch):
    libc = FakeLibc()
    monkeypatch.setattr(heap, "_glibc", lambda: libc)
    try:
        with heap.converting():
            raise ValueError("bad trace")
    except ValueError:
        pass
    assert libc.calls[-1] == ("trim", 0) and heap._active == 0


def test_without_glibc_nothing_is_called(monkeypatch):
    monkeypatch.setattr(heap, "_glibc", lambda: None)
    with heap.converting():
        pass
    heap.keep_freed_memory()
