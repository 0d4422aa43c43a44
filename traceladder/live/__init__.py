"""Live traces: which are complete, judging them continuously (`watch`), scores over time (`trend`)."""

# The window of live traces a page covers by default (`report --format html --live`). Here, not in
# the HTML module, so `report`'s options are known without importing the page renderer.
DEFAULT_LIVE_HOURS = 24.0
