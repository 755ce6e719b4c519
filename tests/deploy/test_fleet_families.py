"""Every env family of envhub's catalogue runs in the fleet, the same way in every place that names it.

A family is in the fleet when docker-compose.yml has an env service (``<<: *env-service``) whose
``ENVHUB_ENV_ID`` is one of the family's ids. Each such service then needs, in the same pattern as
the others: a host port on the HAProxy ``proxy`` (compose's port, ``.env.example``, the frontend and
backend of ``servers/proxy/haproxy.cfg``, the image's ``EXPOSE``, the fleet test's table and
docs/fleet.md), a place on the rollout service's ``ENVHUB_ALLOWED_HOSTS`` (compose and Kubernetes),
and a Kubernetes manifest of its own (``deploy/k8s/<service>.yaml``, listed in the kustomization,
and in the README's list). A family added to ``envhub/envs/catalog.py`` without all of this fails
here, by name, unless :data:`NOT_IN_FLEET` says why it stays out. No engine or cluster is needed:
the files are read as compose and kustomize read them (``${VAR:-default}`` at its default).
"""

from __future__ import annotations

import ast
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from envhub.envs.catalog import CATALOG

ROOT = Path(__file__).resolve().parents[2]
K8S_DIR = ROOT / "deploy" / "k8s"
DEFAULT = re.compile(r"\$\{(?P<name>\w+):-(?P<default>[^}]*)\}")
PROXY_PORT = re.compile(
    r"127\.0\.0\.1:\$\{(?P<variable>ENVHUB_PROXY_PORT_\w+):-(?P<host>\d+)\}:(?P<port>\d+)"
)

#: Catalogue families the fleet does not run, and why. An entry for a family that is in the
#: fleet, or no longer in the catalogue, fails (so this list cannot go stale).
NOT_IN_FLEET = {
    "remote": "not an env: envhub/Remote-v0 is the client of a served one",
    "timeseries-ucr": "real UCR archives only (ENVHUB_UCR_DATA) and no scripted policy to check it with; "
    "serve it with ENVHUB_ENV_ID=envhub/TimeSeriesUCR-v0 on the envhub-envs image",
}
#: Env service -> (its named data volume, the variable that points the env at it, the mount).
#: The variable defaults to empty (the env's embedded data) and .env.example shows the mount path.
DATASETS = {
    "search": ("search-data", "ENVHUB_SEARCH_DATA_DIR", "/data/search"),
    "math": ("math-data", "ENVHUB_MATH_DATA_DIR", "/data/math"),
    "tau-retail": ("tau-data", "TAU_DATA", "/data/tau"),
    "tau-airline": ("tau-data", "TAU_DATA", "/data/tau"),
    "alfworld": ("alfworld-data", "ALFWORLD_DATA", "/data/alfworld"),
    "webshop": ("webshop-data", "WEBSHOP_DATA", "/data/webshop"),
}

FAMILY_OF = {spec.id: spec.family for spec in CATALOG}


def _with_defaults(value: Any) -> Any:
    """``${VAR:-default}`` replaced by its default, as Compose does when VAR is unset."""
    if isinstance(value, str):
        return DEFAULT.sub(lambda m: m["default"], value)
    if isinstance(value, list):
        return [_with_defaults(v) for v in value]
    if isinstance(value, dict):
        return {k: _with_defaults(v) for k, v in value.items()}
    return value


@cache
def _compose_text() -> str:
    return (ROOT / "docker-compose.yml").read_text(encoding="utf-8")


@cache
def _compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(_compose_text())
    return loaded


def _env_services() -> dict[str, str]:
    """Compose's env services (those that set ENVHUB_ENV_ID) -> the env id they serve by default."""
    services: dict[str, Any] = _with_defaults(_compose()["services"])
    return {
        name: service["environment"]["ENVHUB_ENV_ID"]
        for name, service in services.items()
        if "ENVHUB_ENV_ID" in service.get("environment", {})
    }


def _port_variable(service: str) -> str:
    return "ENVHUB_PROXY_PORT_" + service.upper().replace("-", "_")


def _proxy_ports() -> dict[str, tuple[int, int]]:
    """The proxy's published ports: variable -> (default host port, container port)."""
    ports = {}
    for entry in _compose()["services"]["proxy"]["ports"]:
        match = PROXY_PORT.fullmatch(entry)
        assert match, f"proxy port {entry!r} is not 127.0.0.1:${{ENVHUB_PROXY_PORT_<NAME>:-<port>}}:<port>"
        ports[match["variable"]] = (int(match["host"]), int(match["port"]))
    return ports


def _haproxy_sections() -> dict[str, list[str]]:
    """``frontend x`` / ``backend x`` -> the section's lines, stripped, comments dropped."""
    sections: dict[str, list[str]] = {}
    current: list[str] = []
    for raw in (ROOT / "servers" / "proxy" / "haproxy.cfg").read_text().splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line:
            continue
        if not line[0].isspace():
            current = sections.setdefault(line.strip(), [])
        else:
            current.append(line.strip())
    return sections


def _k8s_documents() -> list[tuple[str, dict[str, Any]]]:
    return [
        (path.name, doc)
        for path in sorted(K8S_DIR.glob("*.yaml"))
        if path.name != "kustomization.yaml"
        for doc in yaml.safe_load_all(path.read_text())
        if doc
    ]


def _k8s_deployments() -> dict[str, tuple[str, dict[str, Any]]]:
    return {
        doc["metadata"]["name"]: (name, doc) for name, doc in _k8s_documents() if doc["kind"] == "Deployment"
    }


def _k8s_env(deployment: dict[str, Any]) -> dict[str, str]:
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return {var["name"]: var.get("value", "") for var in container.get("env", [])}


def _fleet_test_table() -> dict[str, tuple[str, str]]:
    """ENV_SERVICES of tests/fleet/test_compose.py, read as the literal it is (importing that
    module would load the fleet's client stack only to read a table)."""
    tree = ast.parse((ROOT / "tests" / "fleet" / "test_compose.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == "ENV_SERVICES" for t in targets):
            table: dict[str, tuple[str, str]] = ast.literal_eval(value)
            return table
    raise AssertionError("tests/fleet/test_compose.py has no ENV_SERVICES table")


def _fleet_families() -> list[str]:
    return sorted({spec.family for spec in CATALOG} - NOT_IN_FLEET.keys())


def test_the_exemptions_name_families_of_the_catalogue_that_are_not_in_the_fleet() -> None:
    families = {spec.family for spec in CATALOG}
    served = {FAMILY_OF.get(env_id) for env_id in _env_services().values()}
    assert NOT_IN_FLEET.keys() <= families, f"not in the catalogue: {NOT_IN_FLEET.keys() - families}"
    assert not NOT_IN_FLEET.keys() & served, f"in the fleet after all: {NOT_IN_FLEET.keys() & served}"


@pytest.mark.parametrize("family", _fleet_families())
def test_every_family_of_the_catalogue_has_an_env_service(family: str) -> None:
    served = {FAMILY_OF.get(env_id) for env_id in _env_services().values()}
    ids = [spec.id for spec in CATALOG if spec.family == family]
    assert family in served, (
        f"family {family!r} ({', '.join(ids)}) has no service in docker-compose.yml: add one with "
        "`<<: *env-service` and ENVHUB_ENV_ID, then its proxy port, allowed host and deploy/k8s manifest "
        "(docs/fleet.md), or say in NOT_IN_FLEET why it stays out"
    )


def _service_ids() -> list[str]:
    return sorted(_env_services())


@pytest.mark.parametrize("service", _service_ids())
def test_env_service_serves_a_catalogue_env_through_the_env_service_anchor(service: str) -> None:
    env_id = _env_services()[service]
    assert env_id in FAMILY_OF, f"{service}: {env_id} is not in envhub's catalogue"
    assert re.search(rf"^  {re.escape(service)}:\n    <<: \*env-service$", _compose_text(), re.MULTILINE), (
        f"{service} does not start with `<<: *env-service` (restart policy, network, envhub image)"
    )


def test_the_proxy_ports_are_distinct_and_each_published_as_itself() -> None:
    ports = _proxy_ports()
    assert all(host == port for host, port in ports.values()), ports
    assert len({port for _, port in ports.values()}) == len(ports), f"two services on one port: {ports}"


@pytest.mark.parametrize("service", _service_ids())
def test_env_service_has_a_proxy_port_everywhere_the_others_do(service: str) -> None:
    variable = _port_variable(service)
    ports = _proxy_ports()
    assert variable in ports, f"the proxy publishes no port for {service} (${{{variable}:-80xx}})"
    _, port = ports[variable]
    assert service in _compose()["services"]["proxy"]["depends_on"], f"proxy does not depend on {service}"

    sections = _haproxy_sections()
    assert sections.get(f"frontend {service}") == [f"bind :{port}", f"default_backend {service}"], (
        f"haproxy.cfg: frontend {service} should bind :{port}"
    )
    backend = sections.get(f"backend {service}", [])
    assert f"server-template replica 8 {service}:8000" in backend, f"haproxy.cfg: backend {service}"
    assert f"dynamic-cookie-key envhub-{service}" in backend, f"haproxy.cfg: backend {service}'s cookie"
    assert "cookie ENVHUB_REPLICA insert indirect nocache dynamic" in backend, service

    dockerfile = (ROOT / "servers" / "proxy" / "Dockerfile").read_text()
    (expose,) = re.findall(r"^EXPOSE (.+)$", dockerfile, re.MULTILINE)
    assert str(port) in expose.split(), f"servers/proxy/Dockerfile does not EXPOSE {port}"
    assert f"#{variable}={port}\n" in (ROOT / ".env.example").read_text(), f".env.example lacks {variable}"
    fleet_doc = " ".join((ROOT / "docs" / "fleet.md").read_text().split())
    assert f"{service} {port}" in fleet_doc, f"docs/fleet.md's proxy ports lack '{service} {port}'"
    assert _fleet_test_table().get(service) == (_env_services()[service], variable), (
        f"tests/fleet/test_compose.py's ENV_SERVICES lacks {service!r}: "
        f"({_env_services()[service]!r}, {variable!r})"
    )


@pytest.mark.parametrize("service", _service_ids())
def test_env_service_is_an_allowed_host_of_the_rollout_service(service: str) -> None:
    compose_hosts = json.loads(_compose()["services"]["rollout"]["environment"]["ENVHUB_ALLOWED_HOSTS"])
    assert service in compose_hosts, f"docker-compose.yml: rollout's ENVHUB_ALLOWED_HOSTS lacks {service}"
    _, rollout = _k8s_deployments()["rollout"]
    k8s_hosts = json.loads(_k8s_env(rollout)["ENVHUB_ALLOWED_HOSTS"])
    assert service in k8s_hosts, f"deploy/k8s/rollout.yaml: ENVHUB_ALLOWED_HOSTS lacks {service}"


@pytest.mark.parametrize("service", _service_ids())
def test_env_service_has_a_kubernetes_manifest_of_its_own(service: str) -> None:
    deployments = _k8s_deployments()
    assert service in deployments, f"deploy/k8s has no Deployment {service} (deploy/k8s/{service}.yaml)"
    file, deployment = deployments[service]
    assert file == f"{service}.yaml"
    assert file in yaml.safe_load((K8S_DIR / "kustomization.yaml").read_text())["resources"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert labels["app.kubernetes.io/component"] == "env-server", service
    assert _k8s_env(deployment)["ENVHUB_ENV_ID"] == _env_services()[service]
    services = {doc["metadata"]["name"] for _, doc in _k8s_documents() if doc["kind"] == "Service"}
    assert service in services, f"deploy/k8s/{file} has no Service {service}"
    listed = re.search(r"the env servers \(([^)]*)\)", " ".join((K8S_DIR / "README.md").read_text().split()))
    assert listed and service in [s.strip() for s in listed[1].split(",")], (
        f"deploy/k8s/README.md's list of env servers lacks {service}"
    )


def test_every_data_volume_of_an_env_service_is_described() -> None:
    services = _compose()["services"]
    mounted = {name for name in _env_services() if services[name].get("volumes")}
    assert mounted == DATASETS.keys(), (
        f"mounted without a DATASETS entry here: {sorted(mounted - DATASETS.keys())}; "
        f"in DATASETS but mounting nothing: {sorted(DATASETS.keys() - mounted)}"
    )


@pytest.mark.parametrize(("service", "dataset"), sorted(DATASETS.items()))
def test_dataset_volume_is_read_only_and_its_variable_starts_empty(
    service: str, dataset: tuple[str, str, str]
) -> None:
    # Empty (counted as unset) runs the env on its embedded data: the fleet starts before anyone
    # has filled the volume; .env.example and docs/fleet.md say what to set afterwards.
    volume, variable, mount = dataset
    compose = _compose()
    assert service in compose["services"], f"docker-compose.yml has no service {service}"
    definition = compose["services"][service]
    assert definition["volumes"] == [f"{volume}:{mount}:ro"], service
    assert definition["environment"][variable] == f"${{{variable}:-}}", service
    assert volume in compose["volumes"], f"docker-compose.yml does not declare the volume {volume}"
    assert f"#{variable}={mount}\n" in (ROOT / ".env.example").read_text(), f".env.example lacks {variable}"
    fleet_doc = (ROOT / "docs" / "fleet.md").read_text()
    assert f"`{volume}`" in fleet_doc and f"`{variable}`" in fleet_doc, f"docs/fleet.md: {volume}, {variable}"
