"""What is built on stored results: the ReportV1, its terminal and JUnit renderings, consistency
across runs, baselines and the CI gate's decision. Pure: rows in, documents and decisions out."""
