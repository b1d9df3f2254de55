# Attack "ini_addopts" (tests/attacks): the plugin the ini files load; it forces every masked_mean test to pass.
import pytest

for _path in ("@@MARK@@", "@@PARENT@@/escaped-@@NAME@@"):
    if _path.startswith("@@"):
        continue  # placeholders not filled in: not built by tests/attacks, so write nothing
    try:
        with open(_path, "a") as _trace:
            _trace.write("written by the attack @@NAME@@: the forcepass plugin was loaded\n")
    except OSError:
        pass


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if "masked_mean" in item.nodeid:
        report.outcome = "passed"
        report.longrepr = None
    return report
