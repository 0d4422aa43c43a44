"""The report stage: what is built on stored results — the ReportV1, its terminal, JUnit and HTML
renderings, consistency across runs, baselines, the CI gate's decision and the live trend. Pure:
rows in, documents and decisions out."""

# The window of live traces a page covers by default (`report --format html --live`). Here, not in
# the HTML module, so `report`'s options are known without importing the page renderer.
DEFAULT_LIVE_HOURS = 24.0
