import pytest
from hypothesis import settings

from tests import processes

# The properties are about physics, not speed: no per-example deadline on a loaded CI machine.
# make test runs the same examples every time (derandomize, no example database), so that a run
# is red only for a change, never for a draw; make fuzz runs them with fresh random draws.
settings.register_profile("sizing", deadline=None, print_blob=True, derandomize=True, database=None)
settings.register_profile("random", deadline=None, print_blob=True, max_examples=500)
settings.load_profile("sizing")

from service.app import create_app  # noqa: E402 - after the profile, which it must not precede


@pytest.fixture(scope="session")
def app():
    return create_app({"TESTING": True})


@pytest.fixture()
def client(app):
    return app.test_client()


def pytest_sessionfinish(session, exitstatus):
    """The run fails if a process it started is still alive at its end (a server a test did not
    stop, a worker its master left behind); those are killed, so the next run starts clean."""
    left = processes.leftovers()
    if not left:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    names = [processes.describe(pid) for pid in left]
    processes.kill(left)
    if reporter is not None:
        reporter.write_line(f"processes the tests started were still alive at the end (killed): {names}", red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
