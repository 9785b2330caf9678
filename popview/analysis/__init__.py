"""Analysis: profiles, focus of analysis, POP metric models, replay, scaling (no Qt)."""
