"""What the commands do, as library functions: each composes storage, the evaluation layer, the
agent and reporting, and fails with a typed error. `cli/` only parses arguments and prints."""
