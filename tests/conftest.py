import pytest
from hypothesis import settings

# The properties are about physics, not speed: no per-example deadline on a loaded CI machine.
settings.register_profile("sizing", deadline=None, print_blob=True)
settings.load_profile("sizing")

from service.app import create_app  # noqa: E402 - after the profile, which it must not precede


@pytest.fixture(scope="session")
def app():
    return create_app({"TESTING": True})


@pytest.fixture()
def client(app):
    return app.test_client()
