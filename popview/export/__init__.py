"""Writing experiments out in other tools' formats (no Qt, no readers)."""
