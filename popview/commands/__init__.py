"""Headless sub-commands of the `popview` command line."""
