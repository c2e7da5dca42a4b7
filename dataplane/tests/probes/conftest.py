"""Prints the closing line CI recognises: "N passed, N failed"."""


def pytest_terminal_summary(terminalreporter):
    passed = len(terminalreporter.stats.get("passed", []))
    failed = len(terminalreporter.stats.get("failed", [])) + len(
        terminalreporter.stats.get("error", []))
    terminalreporter.write_line(f"{passed} passed, {failed} failed")
