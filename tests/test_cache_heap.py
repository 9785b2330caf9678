"""The allocator is set in the derived-data process only, never in the caller's."""
from __future__ import annotations

import popview
from popview.cache import heap
from tests.paraver.prvtext import write_trace


class FakeLibc:
    def __init__(self):
        self.calls = []

    def mallopt(self, option, value):
        self.calls.append((option, value))
        return 1


def test_the_derived_data_process_sets_large_thresholds(monkeypatch):
    libc = FakeLibc()
    monkeypatch.setattr(heap, "_glibc", lambda: libc)
    monkeypatch.delenv(heap.OFF_ENV, raising=False)
    heap.keep_freed_memory()
    assert libc.calls == [(heap.M_MMAP_THRESHOLD, heap._CONVERTING[0]), (heap.M_TRIM_THRESHOLD, heap._CONVERTING[1]),
                          (heap.M_ARENA_MAX, 1)]


def test_a_process_kept_untrimmed_skips_the_trims_between_steps(monkeypatch):
    libc = TrimmingLibc()
    monkeypatch.setattr(heap, "_glibc", lambda: libc)
    monkeypatch.setattr(heap, "_trim", [True])
    monkeypatch.delenv(heap.OFF_ENV, raising=False)
    heap.release_free_memory()
    heap.keep_freed_memory(trim=False)
    heap.release_free_memory()
    assert libc.calls[0] == ("trim", 0) and ("trim", 0) not in libc.calls[1:]
    heap.keep_freed_memory()                  # the derived-data process: trims between its jobs
    heap.release_free_memory()
    assert libc.calls[-1] == ("trim", 0)


def test_opening_a_trace_leaves_the_callers_allocator_alone(tmp_path, cache_dir, monkeypatch):
    libc = FakeLibc()
    monkeypatch.setattr(heap, "_glibc", lambda: libc)
    popview.open(write_trace(tmp_path), cache_dir=cache_dir).close()
    assert libc.calls == []


def test_without_glibc_nothing_is_called(monkeypatch):
    monkeypatch.setattr(heap, "_glibc", lambda: None)
    heap.keep_freed_memory()
    heap.one_heap()


def test_one_heap_sets_the_arenas_only(monkeypatch):
    libc = FakeLibc()
    monkeypatch.setattr(heap, "_glibc", lambda: libc)
    monkeypatch.delenv(heap.OFF_ENV, raising=False)
    heap.one_heap()
    assert libc.calls == [(heap.M_ARENA_MAX, 1)]


class TrimmingLibc(FakeLibc):
    def malloc_trim(self, pad):
        self.calls.append(("trim", pad))
        return 1


def test_a_conversion_hands_freed_memory_back_without_setting_anything(tmp_path, cache_dir, monkeypatch):
    """After the tables are written (before the derived data peaks) the converting process
    returns what its allocator holds free: malloc_trim, never a mallopt setting."""
    libc = TrimmingLibc()
    monkeypatch.setattr(heap, "_glibc", lambda: libc)
    popview.open(write_trace(tmp_path), cache_dir=cache_dir).close()
    assert libc.calls and set(libc.calls) == {("trim", 0)}


def test_release_free_memory_runs_on_this_c_library():
    heap.release_free_memory()          # glibc: malloc_trim; elsewhere nothing
