# Attack "conftest_forces_pass" (tests/attacks): a conftest.py that turns every gather_final test into a pass.
# The same file sits at the root, in exercises/ and in exercises/tests/.
import pytest

for _path in ("@@MARK@@", "@@PARENT@@/escaped-@@NAME@@"):
    if _path.startswith("@@"):
        continue  # placeholders not filled in: not built by tests/attacks, so write nothing
    try:
        with open(_path, "a") as _trace:
            _trace.write("written by the attack @@NAME@@: conftest.py loaded\n")
    except OSError:
        pass


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if "gather_final" in item.nodeid:
        report.outcome = "passed"
        report.longrepr = None
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    if "gather_final" in item.nodeid:
        return None  # the test body never runs
    return (yield)
