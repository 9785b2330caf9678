"""Small widgets shared by several panes."""
