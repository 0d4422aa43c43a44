"""The application layer: one function per workflow, taking a typed request and returning a typed
result. A `cli/*_cmd.py` parses its arguments into the request, calls the function and prints the
result; it holds no SQL and imports no other command. (`agent_run` is the first workflow written
this way; the others move here one at a time.)
"""
