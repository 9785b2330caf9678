"""The Qt GUI: the only package that imports Qt."""
