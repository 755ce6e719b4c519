"""The Kubernetes manifests in deploy/k8s: schema-valid, complete, and true to the fleet's rules.

Schema validation uses the schemas kubernetes-validate ships, in strict mode, so an unknown or
misspelt field is an error (as ``kubectl apply --validate=strict`` makes it) rather than a
field the API server silently drops.
"""

from __future__ import annotations

import copy
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
    assert _env(rollout)["REDIS_URL"].startswith("redis://redis:6379/")
    assert "redis" in _objects("Service")
