"""The HTML report's stylesheet and script, inlined into every page (never fetched)."""
