"""Session files: open experiments, bookmarks, annotations, view state (no Qt)."""
