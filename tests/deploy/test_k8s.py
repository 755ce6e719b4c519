"""The Kubernetes manifests in deploy/k8s: schema-valid, complete, and true to the fleet's rules.

Schema validation uses the schemas kubernetes-validate ships, in strict mode, so an unknown or
misspelt field is an error (as ``kubectl apply --validate=strict`` makes it) rather than a
field the API server silently drops.
"""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

K8S_DIR = Path(__file__).resolve().parents[2] / "deploy" / "k8s"
#: A release kubernetes-validate ships schemas for, old enough that every maintained cluster serves it.
K8S_VERSION = "1.32"
NAMESPACE = "envhub"
UID = 10001
#: Env server Deployment -> readiness path (the retriever has no /ready, only /health).
ENV_SERVERS = {
    "sokoban": "/ready",
    "search": "/ready",
    "tau-retail": "/ready",
    "tau-airline": "/ready",
    "timeseries": "/ready",
    "alfworld": "/ready",
    "webshop": "/ready",
    "math": "/ready",
    "retriever": "/health",
}
#: Env server -> (its data volume claim, the variable that points the env at the mount).
DATASETS = {"alfworld": ("alfworld-data", "ALFWORLD_DATA"), "webshop": ("webshop-data", "WEBSHOP_DATA")}

Manifest = dict[str, Any]


def validate_manifest(doc: Manifest) -> None:
    """Check one Kubernetes object against the schema of its kind, unknown fields included.

    Raises:
        kubernetes_validate.ValidationError: a field is unknown, missing, or of the wrong type.
        kubernetes_validate.SchemaNotFoundError: no such kind in that apiVersion.
    """
    kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def _kustomization() -> Manifest:
    return yaml.safe_load((K8S_DIR / "kustomization.yaml").read_text())


def _manifest_files() -> list[Path]:
    return sorted(
        p for p in K8S_DIR.iterdir() if p.suffix in (".yaml", ".yml") and p.name != "kustomization.yaml"
    )


def _documents() -> list[tuple[str, Manifest]]:
    """(file name, object) for every YAML document of every manifest; empty documents dropped."""
    return [
        (path.name, doc) for path in _manifest_files() for doc in yaml.safe_load_all(path.read_text()) if doc
    ]


def _objects(kind: str) -> dict[str, Manifest]:
    return {doc["metadata"]["name"]: doc for _, doc in _documents() if doc["kind"] == kind}


def _workloads() -> dict[str, Manifest]:
    return {**_objects("Deployment"), **_objects("Job")}


def _container(workload: Manifest) -> Manifest:
    (container,) = workload["spec"]["template"]["spec"]["containers"]
    return container


def _env(container: Manifest) -> dict[str, str]:
    return {var["name"]: var.get("value", "") for var in container.get("env", [])}


def test_kustomization_lists_only_files_that_exist() -> None:
    missing = [name for name in _kustomization()["resources"] if not (K8S_DIR / name).is_file()]
    assert not missing, f"kustomization.yaml lists files that do not exist: {missing}"


def test_kustomization_lists_every_manifest_in_the_folder() -> None:
    listed = set(_kustomization()["resources"])
    orphans = [p.name for p in _manifest_files() if p.name not in listed]
    assert not orphans, f"not in kustomization.yaml resources, so never applied: {orphans}"


def test_every_document_validates_against_the_kubernetes_schema() -> None:
    errors = []
    for name, doc in _documents():
        try:
            validate_manifest(doc)
        except (kubernetes_validate.ValidationError, kubernetes_validate.SchemaNotFoundError) as exc:
            where = ".".join(str(p) for p in getattr(exc, "path", []))
            errors.append(f"{name} {doc.get('kind')}/{doc['metadata']['name']} {where}: {exc.message}")
    assert not errors, "\n".join(errors)


def _misspell_field(doc: Manifest) -> None:
    _container(doc)["imagePullPolice"] = _container(doc).pop("imagePullPolicy")


def _port_as_string(doc: Manifest) -> None:
    _container(doc)["ports"][0]["containerPort"] = "8000"


def _drop_selector(doc: Manifest) -> None:
    del doc["spec"]["selector"]


def _misspell_kind(doc: Manifest) -> None:
    doc["kind"] = "Deploymnet"


@pytest.mark.parametrize(
    ("break_it", "error"),
    [
        (_misspell_field, kubernetes_validate.ValidationError),
        (_port_as_string, kubernetes_validate.ValidationError),
        (_drop_selector, kubernetes_validate.ValidationError),
        (_misspell_kind, kubernetes_validate.SchemaNotFoundError),
    ],
)
def test_validation_rejects_a_broken_manifest(
    break_it: Callable[[Manifest], None], error: type[Exception]
) -> None:
    doc = copy.deepcopy(_objects("Deployment")["sokoban"])
    validate_manifest(copy.deepcopy(doc))  # intact, it passes: the break below is what fails
    break_it(doc)
    with pytest.raises(error):
        validate_manifest(doc)


def test_every_object_is_in_namespace_envhub() -> None:
    for name, doc in _documents():
        if doc["kind"] == "Namespace":
            assert doc["metadata"]["name"] == NAMESPACE
        else:
            assert doc["metadata"].get("namespace") == NAMESPACE, f"{name}: {doc['kind']} outside {NAMESPACE}"


def test_every_env_server_deployment_is_in_the_table_above() -> None:
    # The probe, Service and NetworkPolicy checks run over ENV_SERVERS: a server left out of it
    # would be checked by none of them.
    servers = {
        name
        for name, doc in _objects("Deployment").items()
        if doc["spec"]["template"]["metadata"]["labels"].get("app.kubernetes.io/component") == "env-server"
    }
    assert servers == ENV_SERVERS.keys() - {"retriever"}, servers ^ (ENV_SERVERS.keys() - {"retriever"})


@pytest.mark.parametrize(("server", "ready_path"), sorted(ENV_SERVERS.items()))
def test_env_server_probes_readiness_and_liveness_on_port_8000(server: str, ready_path: str) -> None:
    container = _container(_objects("Deployment")[server])
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    assert ports == {"http": 8000}
    assert container["readinessProbe"]["httpGet"] == {"path": ready_path, "port": "http"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/health", "port": "http"}


@pytest.mark.parametrize("server", sorted(ENV_SERVERS.keys() - {"retriever"}))
def test_env_server_service_is_headless_so_each_pod_is_a_replica(server: str) -> None:
    service = _objects("Service")[server]
    pod_labels = _objects("Deployment")[server]["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["selector"].items() <= pod_labels.items()


def test_every_service_selects_the_pods_of_a_workload_and_a_named_port() -> None:
    pods = [(w["spec"]["template"]["metadata"]["labels"], _container(w)) for w in _workloads().values()]
    for name, service in _objects("Service").items():
        matches = [c for labels, c in pods if service["spec"]["selector"].items() <= labels.items()]
        assert matches, f"Service {name} selects no pods"
        named = {port["name"] for c in matches for port in c["ports"]}
        assert {p["targetPort"] for p in service["spec"]["ports"]} <= named, f"Service {name}"


def test_every_pod_runs_as_non_root_uid_10001() -> None:
    for name, workload in _workloads().items():
        pod = workload["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        assert pod["securityContext"]["runAsUser"] == UID, name
        assert _container(workload)["securityContext"]["allowPrivilegeEscalation"] is False, name


def test_every_container_requests_cpu_and_memory_and_caps_memory() -> None:
    for name, workload in _workloads().items():
        resources = _container(workload)["resources"]
        assert {"cpu", "memory"} <= resources["requests"].keys(), name
        assert "memory" in resources["limits"], name


def test_envhub_images_are_used_from_the_node_when_present() -> None:
    # :latest defaults to imagePullPolicy Always, which fails for images loaded without a registry.
    for name, workload in _workloads().items():
        container = _container(workload)
        if container["image"].startswith("envhub-"):
            assert container["imagePullPolicy"] == "IfNotPresent", name


def test_trainer_is_a_job_on_one_gpu_with_runs_and_models_volumes() -> None:
    (job,) = _objects("Job").values()
    container = _container(job)
    assert container["image"].startswith("envhub-trainer-cuda:")
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert container["resources"]["requests"]["nvidia.com/gpu"] == 1
    assert {m["mountPath"] for m in container["volumeMounts"]} == {"/runs", "/models"}
    claims = {v["persistentVolumeClaim"]["claimName"] for v in job["spec"]["template"]["spec"]["volumes"]}
    assert claims <= _objects("PersistentVolumeClaim").keys()


@pytest.mark.parametrize(("server", "dataset"), sorted(DATASETS.items()))
def test_dataset_volume_is_mounted_read_only_and_its_variable_starts_empty(
    server: str, dataset: tuple[str, str]
) -> None:
    # Empty (counted as unset) runs the env on its embedded data, so the base applies and starts
    # before anyone has filled the volume; the README says to set the mount path afterwards.
    claim, variable = dataset
    deployment = _objects("Deployment")[server]
    (volume,) = deployment["spec"]["template"]["spec"]["volumes"]
    (mount,) = _container(deployment)["volumeMounts"]
    assert claim in _objects("PersistentVolumeClaim")
    assert volume["persistentVolumeClaim"] == {"claimName": claim, "readOnly": True}
    assert mount["name"] == volume["name"] and mount["readOnly"] is True
    assert _env(_container(deployment))[variable] == ""
    assert f"{variable}={mount['mountPath']}" in (K8S_DIR / "README.md").read_text()


def test_rollout_service_queues_in_the_fleets_redis() -> None:
    rollout = _container(_objects("Deployment")["rollout"])
    assert _env(rollout)["REDIS_URL"].startswith("redis://:$(REDIS_PASSWORD)@redis:6379/")
    assert "redis" in _objects("Service")


# --- The policy over the rendered manifests (what `kubectl apply -k` sends) -------------------

#: The Secret every credential comes from, and its keys (README.md: Secrets creates them).
SECRET = "envhub-secrets"
SECRET_KEYS = {"env-token", "rollout-token", "policy-api-key", "redis-password"}
#: Variables through which a server demands a credential: envhub's servers (ENVHUB_TOKEN),
#: vLLM (VLLM_API_KEY), Redis (the password handed to --requirepass).
AUTH_VARIABLES = {"ENVHUB_TOKEN", "VLLM_API_KEY", "REDIS_PASSWORD"}
#: Every path into a pod that the NetworkPolicies open: (client workload, server workload).
ENV_WORKLOADS = set(ENV_SERVERS) - {"retriever"}
PATHS = (
    {("train-gigpo-sokoban", "rollout")}
    | {("rollout", server) for server in ENV_WORKLOADS}
    | {("rollout", "policy"), ("train-gigpo-sokoban", "policy")}
    | {("rollout", "redis"), ("train-gigpo-sokoban", "redis")}
)


def _render_with_python() -> list[Manifest]:
    # The subset of kustomize this base uses: resources, and images (newTag / newName).
    kustomization = _kustomization()
    images = {image["name"]: image for image in kustomization.get("images", [])}
    docs = []
    for name in kustomization["resources"]:
        for doc in yaml.safe_load_all((K8S_DIR / name).read_text()):
            if not doc:
                continue
            for container in _pod_containers(doc):
                repo, _, tag = container["image"].partition(":")
                if repo in images:
                    image = images[repo]
                    container["image"] = f"{image.get('newName', repo)}:{image.get('newTag', tag)}"
            docs.append(doc)
    return docs


def _pod_spec(doc: Manifest) -> Manifest | None:
    if doc["kind"] in ("Deployment", "Job", "StatefulSet", "DaemonSet"):
        spec: Manifest = doc["spec"]["template"]["spec"]
        return spec
    return doc["spec"] if doc["kind"] == "Pod" else None


def _pod_containers(doc: Manifest) -> list[Manifest]:
    pod = _pod_spec(doc)
    return [] if pod is None else [*pod.get("initContainers", []), *pod["containers"]]


@pytest.fixture(scope="module")
def rendered() -> list[Manifest]:
    """The base as kustomize renders it (kubectl kustomize when kubectl is here, else the same in Python)."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        return _render_with_python()
    out = subprocess.run(
        [kubectl, "kustomize", str(K8S_DIR)], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def _pods(rendered: list[Manifest]) -> dict[str, tuple[dict[str, str], Manifest]]:
    """Workload name -> (its pods' labels, its pod spec)."""
    pods = {}
    for doc in rendered:
        pod = _pod_spec(doc)
        if pod is not None:
            labels = (
                doc["spec"]["template"]["metadata"]["labels"]
                if doc["kind"] != "Pod"
                else doc["metadata"]["labels"]
            )
            pods[doc["metadata"]["name"]] = (labels, pod)
    return pods


def _selects(selector: Manifest, labels: dict[str, str]) -> bool:
    assert set(selector) <= {"matchLabels"}, f"only matchLabels selectors are checked here: {selector}"
    return dict(selector.get("matchLabels", {})).items() <= labels.items()


def _secret_env(container: Manifest) -> dict[str, tuple[str, str]]:
    """Variable -> (Secret, key) for every variable of a container taken from a Secret."""
    out = {}
    for var in container.get("env", []):
        ref = var.get("valueFrom", {}).get("secretKeyRef")
        if ref is not None:
            out[var["name"]] = (ref["name"], ref["key"])
    return out


def _open_paths(rendered: list[Manifest]) -> set[tuple[str, str]]:
    """(client, server) workload pairs some NetworkPolicy admits, for clients in the namespace."""
    pods = _pods(rendered)
    paths = set()
    for policy in (doc for doc in rendered if doc["kind"] == "NetworkPolicy"):
        spec = policy["spec"]
        for server, (server_labels, _) in pods.items():
            if not _selects(spec["podSelector"], server_labels):
                continue
            for rule in spec.get("ingress", []):
                sources = rule.get("from")
                assert sources, (
                    f"{policy['metadata']['name']}: an ingress rule without 'from' admits everyone"
                )
                for source in sources:
                    assert set(source) == {"podSelector"}, (
                        f"{policy['metadata']['name']}: only this namespace's pods may get in: {source}"
                    )
                    paths |= {
                        (client, server)
                        for client, (client_labels, _) in pods.items()
                        if _selects(source["podSelector"], client_labels)
                    }
    return paths


def test_every_namespace_denies_ingress_by_default(rendered: list[Manifest]) -> None:
    namespaces = {doc["metadata"]["name"] for doc in rendered if doc["kind"] == "Namespace"}
    namespaces |= {doc["metadata"].get("namespace") for doc in rendered} - {None}
    denying = {
        doc["metadata"]["namespace"]
        for doc in rendered
        if doc["kind"] == "NetworkPolicy"
        and doc["spec"]["podSelector"] == {}
        and "Ingress" in doc["spec"].get("policyTypes", [])
        and not doc["spec"].get("ingress")
    }
    assert namespaces - denying == set(), "namespaces without a default-deny ingress NetworkPolicy"


def test_network_policies_open_only_the_fleets_paths(rendered: list[Manifest]) -> None:
    assert _open_paths(rendered) == PATHS


def test_no_service_without_auth(rendered: list[Manifest]) -> None:
    pods = _pods(rendered)
    for service in (doc for doc in rendered if doc["kind"] == "Service"):
        name = service["metadata"]["name"]
        selector = {"matchLabels": service["spec"]["selector"]}
        backends = [pod for labels, pod in pods.values() if _selects(selector, labels)]
        assert backends, f"Service {name} selects no pods"
        for pod in backends:
            for container in pod["containers"]:
                auth = _secret_env(container).keys() & AUTH_VARIABLES
                assert auth, f"Service {name}: container {container['name']} takes no token from a Secret"
                if auth == {"REDIS_PASSWORD"}:
                    args = container.get("args", [])
                    assert "--requirepass" in args, f"{name}: Redis is not started with --requirepass"
                    assert args[args.index("--requirepass") + 1] == "$(REDIS_PASSWORD)", name


def test_every_credential_comes_from_the_documented_secret(rendered: list[Manifest]) -> None:
    readme = (K8S_DIR / "README.md").read_text()
    used = set()
    for doc in rendered:
        for container in _pod_containers(doc):
            used |= set(_secret_env(container).values())
            for var in container.get("env", []):
                assert "token" not in var["name"].lower() or "valueFrom" in var, (
                    f"{doc['metadata']['name']}: {var['name']} is written into the manifest"
                )
    assert {secret for secret, _ in used} == {SECRET}
    assert {key for _, key in used} == SECRET_KEYS
    assert f"create secret generic {SECRET}" in readme
    for key in SECRET_KEYS:
        assert f"--from-literal={key}=" in readme, f"README's Secret command lacks {key}"


def test_every_redis_client_authenticates(rendered: list[Manifest]) -> None:
    clients = 0
    for doc in rendered:
        for container in _pod_containers(doc):
            values = [*container.get("args", []), *(v.get("value", "") for v in container.get("env", []))]
            for value in (v for v in values if v.startswith("redis://")):
                clients += 1
                assert value.startswith("redis://:$(REDIS_PASSWORD)@redis:6379/"), (
                    f"{doc['metadata']['name']}"
                )
                assert "REDIS_PASSWORD" in _secret_env(container), doc["metadata"]["name"]
    assert clients == 2  # the rollout service and the trainer


def test_every_container_has_cpu_and_memory_requests_and_limits(rendered: list[Manifest]) -> None:
    for doc in rendered:
        for container in _pod_containers(doc):
            resources = container.get("resources", {})
            where = f"{doc['metadata']['name']}/{container['name']}"
            assert {"cpu", "memory"} <= resources.get("requests", {}).keys(), where
            assert {"cpu", "memory"} <= resources.get("limits", {}).keys(), where


def test_every_pod_and_container_runs_as_non_root(rendered: list[Manifest]) -> None:
    for name, (_, pod) in _pods(rendered).items():
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        assert pod["securityContext"]["runAsUser"] == UID, name
        for container in [*pod.get("initContainers", []), *pod["containers"]]:
            context = container.get("securityContext", {})
            assert context.get("allowPrivilegeEscalation") is False, f"{name}/{container['name']}"
            assert context.get("capabilities", {}).get("drop") == ["ALL"], f"{name}/{container['name']}"
            assert context.get("runAsUser", UID) == UID and context.get("privileged") is not True, name


def test_policy_runs_the_vllm_of_the_compose_gpu_profile(rendered: list[Manifest]) -> None:
    compose = (K8S_DIR.parents[1] / "docker-compose.yml").read_text()
    tags = set(re.findall(r"vllm/vllm-openai:([\w.\-]+)", compose))
    (policy,) = (
        doc for doc in rendered if doc["kind"] == "Deployment" and doc["metadata"]["name"] == "policy"
    )
    (container,) = policy["spec"]["template"]["spec"]["containers"]
    repo, _, tag = container["image"].partition(":")
    assert repo == "vllm/vllm-openai" and {tag} == tags
