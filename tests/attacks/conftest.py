"""The attack submissions are data, never part of this test session.

`submissions/` holds conftest.py files written to force tests to pass: pytest must not
collect that folder, or it would load them into the project's own session.
"""

collect_ignore = ["submissions"]
