"""Thin command-line layer: one module per command, each calling a library function."""
