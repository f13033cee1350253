"""The domain is pure: no web framework, serialisation, metrics, network or process I/O."""

import ast
from pathlib import Path

import pytest

DOMAIN = Path(__file__).parents[2] / "service" / "sizing"
FORBIDDEN = {
    "flask", "werkzeug", "marshmallow", "prometheus_client", "gunicorn", "requests", "yaml",
    "socket", "http", "urllib", "subprocess", "logging", "os", "sys", "pathlib", "io", "shutil",
    "service.api",
}
# Reading the packaged catalog data once is the domain's only I/O, and it lives here.
DATA_READERS = {"catalog.py": {"importlib", "tomllib"}}


def _imports(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.module or ""


@pytest.mark.parametrize("path", sorted(DOMAIN.rglob("*.py")), ids=lambda p: str(p.relative_to(DOMAIN)))
def test_domain_module_imports_nothing_impure(path):
    tree = ast.parse(path.read_text())
    for name in _imports(tree):
        root = name.split(".")[0]
        assert root not in FORBIDDEN and name not in FORBIDDEN, f"{path.name} imports {name}"
        if root in {"importlib", "tomllib"}:
            assert root in DATA_READERS.get(path.name, set()), f"{path.name} reads files"


def _relative_imports(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            yield node.level, node.module or ""


@pytest.mark.parametrize("path", sorted(DOMAIN.rglob("*.py")), ids=lambda p: str(p.relative_to(DOMAIN)))
def test_domain_module_imports_only_its_own_package_relatively(path):
    """`from ..api import x` would reach the HTTP layer (or anything else in service) without
    naming it; a relative import stays inside service.sizing."""
    depth = len(path.relative_to(DOMAIN).parts)  # 1 for a module of service.sizing, 2 inside questions/
    for level, module in _relative_imports(ast.parse(path.read_text())):
        assert level <= depth, f"{path.name} imports {'.' * level}{module}, outside service.sizing"


def test_the_relative_import_check_catches_a_reach_outside():
    tree = ast.parse("from ..api import schemas\nfrom . import units\n")
    assert list(_relative_imports(tree)) == [(2, "api"), (1, "")]


@pytest.mark.parametrize("path", sorted(DOMAIN.rglob("*.py")), ids=lambda p: str(p.relative_to(DOMAIN)))
def test_domain_module_opens_no_file_and_prints_nothing(path):
    calls = {
        node.func.id
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    # frozen.stores_fields makes an __init__ from a dataclass's own field names, as dataclasses
    # itself does with exec; no other module runs text as code
    allowed = {"exec"} if path.name == "frozen.py" else set()
    assert not calls & ({"open", "print", "input", "exec", "eval"} - allowed)


HTTP_LAYER = sorted([*(DOMAIN.parent / "api").glob("*.py"), *DOMAIN.parent.glob("*.py")])


def _sizing_imports(path: Path):
    """(module imported from, names) of each import of the sizing package in a file outside it."""
    package = ["service"] if path.parent.name == "service" else ["service", path.parent.name]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            absolute = ".".join([*base, *([node.module] if node.module else [])])
            if absolute == "service.sizing" or absolute.startswith("service.sizing."):
                yield absolute, [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("service.sizing"):
                    yield alias.name, []


@pytest.mark.parametrize("path", HTTP_LAYER, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_http_layer_imports_only_the_domains_public_api(path):
    """service/api and the operations modules take from the domain only what
    service/sizing/__init__.py exports; a module inside it is not theirs to reach into."""
    import service.sizing as sizing

    for module, names in _sizing_imports(path):
        assert module == "service.sizing", f"{path.name} imports {module}: import it from service.sizing"
        assert set(names) <= set(sizing.__all__), f"{path.name} imports {set(names) - set(sizing.__all__)}"


def test_the_public_api_check_catches_a_reach_inside(tmp_path):
    reach = tmp_path / "service" / "api"
    reach.mkdir(parents=True)
    (reach / "x.py").write_text("from ..sizing.memory import weights_bytes\n")
    assert list(_sizing_imports(reach / "x.py")) == [("service.sizing.memory", ["weights_bytes"])]


@pytest.mark.parametrize("path", sorted(Path(__file__).parent.glob("test_*.py")), ids=lambda p: p.name)
def test_domain_tests_call_the_domain_not_http(path):
    """A test of the domain asks the domain: none takes the app or its test client (the HTTP
    answers are tests/api's)."""
    tree = ast.parse(path.read_text())
    over_http = [node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
                 and {a.arg for a in node.args.args} & {"client", "app"}]
    assert not over_http, f"{path.name}: {over_http}"
