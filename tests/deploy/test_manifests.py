"""Deploy files checked offline: kubernetes-validate --strict, hadolint, and our own policies."""

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from service.overlay import load_catalog_file
from service.sizing.catalog import packaged_catalogs

DEPLOY = Path(__file__).parents[2] / "deploy"
K8S = DEPLOY / "k8s"
CRDS = {"ServiceMonitor", "PrometheusRule", "Kustomization"}
KUBERNETES_VERSIONS = ("1.30.0", kubernetes_validate.latest_version())


def documents(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


MANIFESTS = {doc["kind"]: doc for path in sorted(K8S.glob("*.yaml")) for doc in documents(path)}


def gunicorn_settings() -> dict:
    tree = ast.parse((DEPLOY / "gunicorn.conf.py").read_text())
    return {node.targets[0].id: node.value.value for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
            and isinstance(node.targets[0], ast.Name)}


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("kind", sorted(set(MANIFESTS) - CRDS))
def test_manifest_passes_kubernetes_validate_strict(kind, version):
    kubernetes_validate.validate(MANIFESTS[kind], version, strict=True)


def test_the_kustomization_lists_every_manifest():
    listed = set(MANIFESTS["Kustomization"]["resources"])
    assert listed == {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert all((K8S / entry.split("=")[-1]).is_file() for entry in catalog_generator()["files"])


def container(name: str = "sizing") -> dict:
    containers = MANIFESTS["Deployment"]["spec"]["template"]["spec"]["containers"]
    return next(c for c in containers if c["name"] == name)


def named_ports() -> dict[str, int]:
    containers = MANIFESTS["Deployment"]["spec"]["template"]["spec"]["containers"]
    return {p["name"]: p["containerPort"] for c in containers for p in c["ports"]}


def env() -> dict:
    return {e["name"]: e.get("value") for e in container()["env"]}


def test_probes_resources_and_image():
    c = container()
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert {"cpu", "memory"} <= c["resources"]["limits"].keys()
    assert {"cpu", "memory"} <= c["resources"]["requests"].keys()
    assert not c["image"].endswith(":latest") and ":" in c["image"]


def test_security_context_is_locked_down():
    pod = MANIFESTS["Deployment"]["spec"]["template"]["spec"]
    c = container()
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    assert c["securityContext"]["allowPrivilegeEscalation"] is False
    assert c["securityContext"]["capabilities"]["drop"] == ["ALL"]


def test_the_metrics_folder_lives_in_an_empty_dir_its_parent_mounted():
    pod = MANIFESTS["Deployment"]["spec"]["template"]["spec"]
    empty_dirs = {v["name"] for v in pod["volumes"] if "emptyDir" in v}
    mounts = {m["mountPath"]: m["name"] for m in container()["volumeMounts"]}
    folder = Path(env()["PROMETHEUS_MULTIPROC_DIR"])
    # The entrypoint wipes and recreates the folder, so the mount is its parent, not the folder.
    assert mounts.get(str(folder.parent)) in empty_dirs


def test_grace_period_outlasts_prestop_and_gunicorns_graceful_timeout():
    pod = MANIFESTS["Deployment"]["spec"]["template"]["spec"]
    pre_stop = container()["lifecycle"]["preStop"]["exec"]["command"]
    assert pre_stop[0] == "sleep"
    assert pod["terminationGracePeriodSeconds"] > int(pre_stop[1]) + gunicorn_settings()["graceful_timeout"]


def test_workers_and_threads_are_explicit():
    assert env()["WORKERS"].isdigit() and env()["THREADS"].isdigit()


def test_service_monitor_names_the_services_port_and_matches_its_labels():
    monitor, service = MANIFESTS["ServiceMonitor"], MANIFESTS["Service"]
    ports = {p["name"] for p in service["spec"]["ports"]}
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert all(e["port"] in ports and e["path"] == "/metrics" for e in monitor["spec"]["endpoints"])
    labels = service["metadata"]["labels"]
    assert all(labels.get(k) == v for k, v in monitor["spec"]["selector"]["matchLabels"].items())


METRICS_PY = Path(__file__).parents[2] / "service" / "metrics.py"
# What prometheus_client exposes for each kind of metric it is given a name for.
EXPOSED_AS = {
    "Counter": ("_total",), "CounterMetricFamily": ("_total",),
    "Gauge": ("",), "GaugeMetricFamily": ("",), "Enum": ("",), "StateSetMetricFamily": ("",),
    "Histogram": ("_bucket", "_count", "_sum"), "HistogramMetricFamily": ("_bucket", "_count", "_sum"),
    "Summary": ("", "_count", "_sum"), "SummaryMetricFamily": ("", "_count", "_sum"),
    "Info": ("_info",), "InfoMetricFamily": ("_info",),
}
# Words of PromQL that look like names: keywords, and the label lists' clause names.
PROMQL_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless",
                   "bool", "offset", "inf", "nan"}


def exposed_metric_names() -> set[str]:
    """The series names service/metrics.py defines, wherever it makes the metric (a module-level
    Counter, one made in a function, a *MetricFamily yielded by a collector at scrape time)."""
    names = set()
    for node in ast.walk(ast.parse(METRICS_PY.read_text())):
        if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)):
            continue
        kind = getattr(node.func, "id", getattr(node.func, "attr", None))
        if kind in EXPOSED_AS:
            base = node.args[0].value
            if kind.startswith("Counter"):
                base = base.removesuffix("_total")  # the library adds it back
            names |= {base + suffix for suffix in EXPOSED_AS[kind]}
    return names


def promql_metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects: its identifiers once strings, label matchers,
    ranges and label lists are cut out, less functions (a name before a parenthesis) and keywords."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    expr = re.sub(r"\{[^}]*\}", " ", expr)
    expr = re.sub(r"\[[^\]]*\]", " ", expr)
    expr = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", expr)
    words = re.findall(r"(?<![\w:.])([A-Za-z_:][\w:]*)(?![\w:])(?!\s*\()", expr)
    return set(words) - PROMQL_KEYWORDS


def alerting_rules() -> list[dict]:
    return [rule for group in MANIFESTS["PrometheusRule"]["spec"]["groups"] for rule in group["rules"]]


def test_promql_metric_names_finds_the_selected_series_only():
    expr = ('histogram_quantile(0.99, sum by (namespace, le) (rate(a_bucket{job="x", route!~"/b|c"}[5m])))'
            ' > 0.25 or absent(up{job="x"}) unless on (pod) b:rule offset 5m and bool 1e3')
    assert promql_metric_names(expr) == {"a_bucket", "up", "b:rule"}


def test_the_prometheus_rule_is_well_formed_and_uses_only_what_the_service_exposes():
    rule = MANIFESTS["PrometheusRule"]
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["metadata"]["labels"]["app.kubernetes.io/name"] == "sizing"
    groups = rule["spec"]["groups"]
    assert groups and len({g["name"] for g in groups}) == len(groups)
    assert all(g["rules"] for g in groups)
    rules = alerting_rules()
    assert len({r["alert"] for r in rules}) == len(rules)
    exposed = exposed_metric_names() | {"up"}
    # the metrics these rules were written for are still there
    assert {"sizing_http_requests_total", "sizing_http_request_duration_seconds_bucket",
            "sizing_worker_starts_total", "sizing_metrics_folder_ok"} <= exposed
    job = MANIFESTS["Service"]["metadata"]["name"]  # a ServiceMonitor's job label, without jobLabel
    assert "jobLabel" not in MANIFESTS["ServiceMonitor"]["spec"]
    for r in rules:
        assert r["alert"] and isinstance(r["expr"], str) and r["expr"].strip(), r
        assert r["labels"]["severity"] in {"info", "warning", "critical"}, r["alert"]
        assert r["annotations"]["summary"] and r["annotations"]["description"], r["alert"]
        used = promql_metric_names(r["expr"])
        assert used and used <= exposed, (r["alert"], used - exposed)
        assert set(re.findall(r'\bjob="([^"]*)"', r["expr"])) == {job}, r["alert"]


def test_service_pdb_and_hpa_point_at_the_deployment():
    deployment = MANIFESTS["Deployment"]
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    for kind in ("Service", "PodDisruptionBudget"):
        selector = MANIFESTS[kind]["spec"]["selector"]
        selector = selector.get("matchLabels", selector)
        assert all(pod_labels.get(k) == v for k, v in selector.items()), kind
    assert MANIFESTS["PodDisruptionBudget"]["spec"]["maxUnavailable"] == 1
    target = MANIFESTS["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    assert {p["targetPort"] for p in MANIFESTS["Service"]["spec"]["ports"]} == named_ports().keys()


def catalog_generator() -> dict:
    (generator,) = MANIFESTS["Kustomization"]["configMapGenerator"]
    return generator


def test_the_catalog_is_a_config_map_named_by_its_content_mounted_where_the_service_reads_it(tmp_path):
    """kustomize names the generated ConfigMap sizing-catalog-<hash of the content> and rewrites the
    Deployment's reference: an edit is a new ConfigMap and a new revision, never a file changed
    under running pods; immutable, so a revision's catalog cannot change either."""
    generator = catalog_generator()
    assert generator["options"]["immutable"] is True
    assert generator.get("behavior", "create") == "create"
    (entry,) = generator["files"]
    key, source = entry.split("=", 1)
    mounts = {m["name"]: m["mountPath"] for m in container()["volumeMounts"]}
    volumes = {v["name"]: v for v in MANIFESTS["Deployment"]["spec"]["template"]["spec"]["volumes"]}
    catalog_file = Path(env()["SIZING_CATALOG_FILE"])
    volume = next(name for name, v in volumes.items() if v.get("configMap", {}).get("name") == generator["name"])
    assert mounts[volume] == str(catalog_file.parent) and key == catalog_file.name
    assert "ConfigMap" not in MANIFESTS  # generated only: a hand-written one would not roll out on an edit
    copy = tmp_path / catalog_file.name
    copy.write_text((K8S / source).read_text())
    load_catalog_file(copy, packaged_catalogs())


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed (kustomize is built in)")
def test_kustomize_names_the_catalog_by_its_content_and_the_deployment_follows():
    built = [d for d in yaml.safe_load_all(subprocess.run(["kubectl", "kustomize", str(K8S)], capture_output=True,
                                                          text=True, check=True).stdout) if d]
    (config_map,) = [d for d in built if d["kind"] == "ConfigMap"]
    (deployment,) = [d for d in built if d["kind"] == "Deployment"]
    name = config_map["metadata"]["name"]
    assert re.fullmatch(catalog_generator()["name"] + r"-[a-z0-9]{10}", name) and config_map["immutable"] is True
    assert name in {v.get("configMap", {}).get("name") for v in deployment["spec"]["template"]["spec"]["volumes"]}


def hadolint() -> str:
    found = Path(sys.executable).with_name("hadolint")
    return str(found) if found.exists() else (shutil.which("hadolint") or "hadolint")


def test_hadolint_passes_on_the_dockerfile():
    result = subprocess.run([hadolint(), str(DEPLOY / "Dockerfile")], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_dockerfile_is_multi_stage_non_root_pinned_and_exec_form():
    text = (DEPLOY / "Dockerfile").read_text()
    bases = re.findall(r"^FROM\s+(\S+)", text, re.M)
    assert len(bases) >= 2 and all(re.search(r":\d+\.\d+\.\d+", b) for b in bases)
    user = re.findall(r"^USER\s+(\S+)", text, re.M)[-1]
    assert user.split(":")[0] not in ("0", "root")
    assert re.search(r'^ENTRYPOINT \["[^"]+"\]$', text, re.M)


def test_entrypoint_wipes_the_metrics_folder_and_execs_gunicorn(tmp_path):
    folder = tmp_path / "metrics"
    folder.mkdir()
    (folder / "stale.db").write_text("old counts")
    fake = tmp_path / "fake-gunicorn"
    fake.write_text('#!/bin/sh\nls -A "$PROMETHEUS_MULTIPROC_DIR"; echo "args: $*"\n')
    fake.chmod(0o755)
    result = subprocess.run([str(DEPLOY / "entrypoint.sh")], capture_output=True, text=True,
                            env={"PATH": "/usr/bin:/bin", "PROMETHEUS_MULTIPROC_DIR": str(folder),
                                 "GUNICORN": str(fake)})
    assert result.returncode == 0, result.stderr
    assert "stale.db" not in result.stdout and "--config" in result.stdout and folder.is_dir()


def test_the_api_is_closed_by_default_with_keys_from_the_secret():
    keys = next(e for e in container()["env"] if e["name"] == "SIZING_API_KEYS")
    ref = keys["valueFrom"]["secretKeyRef"]
    secret = MANIFESTS["Secret"]
    assert ref["name"] == secret["metadata"]["name"] and ref["key"] in secret["stringData"]
    assert ref.get("optional") is False
    # shipped empty: the service refuses to start on it, so nothing serves open by accident
    assert secret["stringData"][ref["key"]].strip(" ,") == ""
    assert float(env()["SIZING_RATE_LIMIT"]) > 0 and float(env()["SIZING_MAX_REQUEST_COST"]) > 0


def test_metrics_are_closed_and_the_scraper_sends_a_key_that_opens_nothing_else():
    assert env()["SIZING_AUTH_METRICS"] == "true"
    scraper = next(e for e in container()["env"] if e["name"] == "SIZING_METRICS_KEYS")["valueFrom"]["secretKeyRef"]
    secret = MANIFESTS["Secret"]
    assert scraper["name"] == secret["metadata"]["name"] and scraper["key"] in secret["stringData"]
    assert secret["stringData"][scraper["key"]] == ""  # shipped empty, as the API's keys
    for endpoint in MANIFESTS["ServiceMonitor"]["spec"]["endpoints"]:
        credentials = endpoint["authorization"]["credentials"]
        assert endpoint["authorization"]["type"] == "Bearer" and credentials == {"name": scraper["name"],
                                                                                 "key": scraper["key"]}


def test_the_front_doors_limits_are_stated_and_each_is_one_the_service_reads():
    from service.front.limits import from_env

    stated = {name: value for name, value in env().items() if name.startswith("SIZING_") and (
        "CONNECTIONS" in name or "TIMEOUT" in name or "BUFFER" in name or "ARRIVING" in name)}
    assert len(stated) == 8
    limits = from_env(stated)
    assert limits.max_connections == int(stated["SIZING_MAX_CONNECTIONS"])
    assert limits.body_buffer_bytes * 2 < 512 << 20  # two workers' bodies well inside the memory limit


def test_the_network_policy_lets_in_only_labelled_callers_and_lets_nothing_out():
    policy = MANIFESTS["NetworkPolicy"]["spec"]
    pod_labels = MANIFESTS["Deployment"]["spec"]["template"]["metadata"]["labels"]
    assert policy["podSelector"]["matchLabels"].items() <= pod_labels.items()
    assert set(policy["policyTypes"]) == {"Ingress", "Egress"} and policy["egress"] == []
    (rule,) = policy["ingress"]
    assert rule["ports"] == [{"port": name, "protocol": "TCP"} for name in named_ports()]
    assert all(peer for peer in rule["from"])  # an empty peer would admit everyone
    assert {p.get("podSelector", {}).get("matchLabels", {}).get("sizing-client") for p in rule["from"]} >= {"true"}


def test_the_mcp_server_runs_beside_the_api_from_its_image_and_calls_it_over_loopback():
    api, mcp = container(), container("mcp")
    assert mcp["image"] == api["image"]
    command = mcp["command"]
    assert command[:3] == ["python", "-m", "service.mcp_server"] and "--http" in command
    assert int(command[command.index("--port") + 1]) == named_ports()["mcp"]
    assert command[command.index("--host") + 1] == "0.0.0.0"
    url = {e["name"]: e.get("value") for e in mcp["env"]}["SIZING_URL"]
    assert url == f"http://127.0.0.1:{named_ports()['http']}"
    # it holds no key of its own: each caller's key goes on to the API, which judges it
    assert not {e["name"] for e in mcp["env"]} & {"SIZING_API_KEY", "SIZING_API_KEYS"}
    # it answers the Service's names on its mcp port in the pod's namespace (a $(VAR) expands only
    # after the variable is defined), and the names are ones its --allowed-hosts accepts
    from service.mcp_server import host_list

    names = [e["name"] for e in mcp["env"]]
    assert names.index("POD_NAMESPACE") < names.index("MCP_ALLOWED_HOSTS")
    assert mcp["env"][names.index("POD_NAMESPACE")]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    service = MANIFESTS["Service"]
    port = next(p["port"] for p in service["spec"]["ports"] if p["name"] == "mcp")
    hosts = host_list(mcp["env"][names.index("MCP_ALLOWED_HOSTS")]["value"].replace("$(POD_NAMESPACE)", "ns"))
    name = service["metadata"]["name"]
    assert set(hosts) == {(f"{name}{tail}", port) for tail in ("", ".ns", ".ns.svc", ".ns.svc.cluster.local")}
    assert mcp["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": "mcp"}
    assert mcp["livenessProbe"]["tcpSocket"] == {"port": "mcp"}
    assert {"cpu", "memory"} <= mcp["resources"]["limits"].keys()
    assert mcp["securityContext"] == api["securityContext"]
    pre_stop = mcp["lifecycle"]["preStop"]["exec"]["command"]
    assert MANIFESTS["Deployment"]["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] > int(pre_stop[1])
