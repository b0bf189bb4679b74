"""The Kubernetes deployment (classroom/k8s/): what can be checked without a cluster or a registry.

Nothing here builds the image or installs the chart. The tests read the files and check that
they agree with each other and with the course: the values name the image the Dockerfile
builds, mount the exchange where the image's nbgrader settings put it, offer the instructor
profile to instructors only (running the values' own profile_list code against fake users),
give the GPU profile a GPU, keep the answers out of the image, and size the pods above the
notebooks' measured peak memory (classroom/k8s/peak_memory.json).
"""

import importlib.util
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from traitlets.config import Config

from autograder.course.settings import INSTRUCTOR_SERVER_CONFIG, REPO_ROOT, course_config
from classroom.provision import NGSHARE_PINS, hub_constraints, pins_of

K8S = REPO_ROOT / "classroom" / "k8s"
ANSWERS = ("solutions", "tests", "benchmarks", "autograder")  # never in the students' image
INSTRUCTORS = "instructors"


@pytest.fixture(scope="module")
def values() -> dict:
    return yaml.safe_load((K8S / "values.yaml").read_text())


@pytest.fixture(scope="module")
def image_env() -> dict[str, str]:
    lines = (K8S / "image.env").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if line.strip() and not line.startswith("#"))


def instructions(path: Path) -> list[tuple[str, str]]:
    """A Dockerfile's instructions, ``(KEYWORD, arguments)``, continuation lines joined."""
    text = re.sub(r"\\\n", " ", path.read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "") for line in lines]


@pytest.fixture(scope="module")
def dockerfile() -> list[tuple[str, str]]:
    return instructions(K8S / "Dockerfile")


def exec_config(path: Path) -> Config:
    """A Jupyter config file run the way traitlets runs it (``c = get_config()``)."""
    config = Config()
    exec(compile(path.read_text(), str(path), "exec"), {"get_config": lambda: config})
    return config


def quantity_bytes(value: str | int | float) -> float:
    """A Kubernetes memory quantity (``2G``, ``1.5Gi``, ``512M``) in bytes."""
    units = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    number, unit = re.fullmatch(r"([0-9.]+)([KMGT]i?)?", str(value)).groups()
    return float(number) * units[unit or ""]


def chart_config(values: dict, volumes_as_dict: bool) -> Config:
    """What the chart's jupyterhub_config.py leaves in ``c.KubeSpawner`` before hub.extraConfig runs.

    The home volume and singleuser.storage.extraVolumes(Mounts) become volumes and volume_mounts
    (a list, or a dict keyed by name as newer charts write them); singleuser.extraEnv the
    environment; the chart's own labels extra_labels; singleuser.profileList the profile_list.
    """
    storage = values["singleuser"]["storage"]
    home = {"name": "home", "persistentVolumeClaim": {"claimName": "claim-{username}"}}
    volumes = [home, *storage.get("extraVolumes", [])]
    mounts = [{"name": "home", "mountPath": storage["homeMountPath"]}, *storage.get("extraVolumeMounts", [])]
    c = Config()
    c.KubeSpawner.volumes = {v["name"]: v for v in volumes} if volumes_as_dict else volumes
    c.KubeSpawner.volume_mounts = {m["name"]: m for m in mounts} if volumes_as_dict else mounts
    c.KubeSpawner.environment = dict(values["singleuser"]["extraEnv"])
    c.KubeSpawner.extra_labels = {"hub.jupyter.org/network-access-hub": "true"}
    c.KubeSpawner.profile_list = values["singleuser"]["profileList"]
    return c


def offered_profiles(values: dict, groups: list[str], volumes_as_dict: bool = False) -> tuple[Config, list[dict]]:
    """The profiles the values' hub.extraConfig offers a user in ``groups``."""
    c = chart_config(values, volumes_as_dict)
    for code in values["hub"]["extraConfig"].values():
        exec(compile(code, "hub.extraConfig", "exec"), {"c": c})
    user = SimpleNamespace(name="someone", groups=[SimpleNamespace(name=g) for g in groups])
    return c, c.KubeSpawner.profile_list(SimpleNamespace(user=user))


def effective(c: Config, profile: dict, key: str):
    """A KubeSpawner setting as the pod of ``profile`` gets it: the override if any, else the chart's."""
    value = profile.get("kubespawner_override", {}).get(key, c.KubeSpawner.get(key))
    return list(value.values()) if isinstance(value, dict) else value


def by_slug(profiles: list[dict]) -> dict[str, dict]:
    return {p["slug"]: p for p in profiles}


# The image


def test_values_name_the_image_the_dockerfile_builds(values, image_env, dockerfile):
    image = values["singleuser"]["image"]
    assert f"{image['name']}:{image['tag']}" == f"{image_env['IMAGE_NAME']}:{image_env['IMAGE_TAG']}"
    gpu = by_slug(values["singleuser"]["profileList"])["gpu"]["kubespawner_override"]
    assert gpu["image"] == f"{image_env['IMAGE_NAME']}:{image_env['IMAGE_TAG_CUDA']}"
    args = {a.split("=", 1)[0]: a.split("=", 1)[1] for k, a in dockerfile if k == "ARG" and "=" in a}
    assert args["TORCH_INDEX_URL"] == image_env["CPU_TORCH_INDEX_URL"]  # the CPU tag is the default build
    assert image_env["CUDA_TORCH_INDEX_URL"] != image_env["CPU_TORCH_INDEX_URL"]
    assert [a for k, a in dockerfile if k == "FROM"] == ["python:3.11.7-slim-bookworm"]
    # the dask workers run the same image as the students and the instructors
    for doc in yaml.safe_load_all((K8S / "dask-cluster.yaml").read_text()):
        if doc["kind"] == "DaskCluster":
            for part in ("worker", "scheduler"):
                (container,) = doc["spec"][part]["spec"]["containers"]
                assert container["image"] == f"{image['name']}:{image['tag']}"


def test_the_image_installs_the_locked_pins(dockerfile):
    installs = [shlex.split(a) for k, a in dockerfile if k == "RUN" and "pip install" in a]
    assert len(installs) == 1
    commands = " ".join(installs[0]).split(" && ")
    words = commands[0].split()
    pins = {words[i + 1] for i, w in enumerate(words[:-1]) if w == "-r"}
    assert {Path(p).name for p in pins} == {"requirements.txt", "requirements-hub.txt"}
    assert "/opt/tfcourse/pins/requirements-lock.txt" == words[words.index("-c") + 1]
    # ngshare-exchange, the exchange's client, without the stale requirement nbgrader 0.9.6 cannot meet
    assert commands[1].split() == ["pip", "install", "--no-deps", "-r",
                                   "/opt/tfcourse/pins/classroom/requirements-hub-nodeps.txt"]
    # and without what `make install` removes again (requirements-removed.txt)
    assert commands[2].split() == ["pip", "uninstall", "--yes", "-r", "/opt/tfcourse/pins/requirements-removed.txt"]
    copied = [shlex.split(a) for k, a in dockerfile if k == "COPY"]
    assert ["requirements.txt", "requirements-lock.txt", "requirements-removed.txt", "/opt/tfcourse/pins/"] in copied
    lines = (REPO_ROOT / "classroom" / "requirements-hub.txt").read_text().splitlines()
    hub = [line.split("#")[0].strip() for line in lines if line.split("#")[0].strip()]
    assert hub == ["-r ../requirements.txt", "jupyterhub==6.1.1", "jupyterhub-ltiauthenticator==1.6.3",
                   "jupyterhub-idle-culler==2.0.0"]  # the culler: the one-machine hub's service


def test_the_image_holds_no_answers(dockerfile):
    sources = [src for k, a in dockerfile if k in {"COPY", "ADD"} for src in shlex.split(a)[:-1]]
    assert "tfcourse/" in sources and "data/ag_news_sample/" in sources
    for src in sources:
        assert src.split("/")[0] not in ANSWERS, src
        assert src not in {".", "./", "*"}, "the whole repository would be copied"
    ignore = [line for line in (K8S / "Dockerfile.dockerignore").read_text().splitlines() if line and line[0] != "#"]
    assert ignore[0] == "*"  # the build context is empty but for the lines that let something in
    let_in = [line[1:] for line in ignore if line.startswith("!")]
    assert not [p for p in let_in if p.split("/")[0] in ANSWERS]
    assert all(any(src.startswith(p.rstrip("/")) for p in let_in) for src in sources), "COPY of an ignored path"


def test_student_role_hides_the_instructors_tools_and_instructor_role_brings_them(dockerfile, values):
    roles = K8S / "jupyter" / "roles"
    server = json.loads((roles / "student" / "jupyter_server_config.json").read_text())
    extensions = server["ServerApp"]["jpserver_extensions"]
    assert extensions["nbgrader.server_extensions.formgrader"] is False
    assert extensions["nbgrader.server_extensions.course_list"] is False
    assert extensions["nbgrader.server_extensions.assignment_list"] is True
    page = json.loads((roles / "student" / "labconfig" / "page_config.json").read_text())
    assert page["disabledExtensions"] == {
        "@jupyter/nbgrader:formgrader": True,
        "@jupyter/nbgrader:course-list": True,
        "@jupyter/nbgrader:create-assignment": True,
    }
    assert ("ENV", "JUPYTER_CONFIG_PATH=/etc/jupyter/roles/student") in dockerfile  # the default role
    assert ("COPY", "classroom/k8s/jupyter/roles/ /etc/jupyter/roles/") in dockerfile
    instructor = by_slug(values["singleuser"]["profileList"])["instructor"]["kubespawner_override"]
    assert instructor["environment"]["JUPYTER_CONFIG_PATH"] == "/etc/jupyter/roles/instructor"
    assert not (roles / "instructor" / "labconfig").exists()  # nbgrader's defaults: every tool on
    assert "configure(c, REPO_ROOT)" in (roles / "instructor" / "nbgrader_config.py").read_text()


# The exchange and the course volume


def test_the_exchange_is_the_ngshare_service_the_hub_registers(values, dockerfile, tmp_path, monkeypatch):
    """Every pod runs as jovyan: a shared exchange volume would keep nobody apart; ngshare knows users by token."""
    monkeypatch.setenv("JUPYTERHUB_USER", "someone")  # as in every pod: ngshare_exchange reads it on import
    address = dict(a.split("=", 1) for k, a in dockerfile if k == "ENV" and a.startswith("TFCOURSE_NGSHARE_URL="))
    assert address == {"TFCOURSE_NGSHARE_URL": "http://proxy-public/services/ngshare"}  # the chart's proxy Service
    monkeypatch.setenv("TFCOURSE_NGSHARE_URL", address["TFCOURSE_NGSHARE_URL"])  # as the image sets it
    nbgrader = exec_config(K8S / "jupyter" / "nbgrader_config.py")
    assert ("COPY", "classroom/k8s/jupyter/nbgrader_config.py /etc/jupyter/nbgrader_config.py") in dockerfile
    assert nbgrader.CourseDirectory.course_id == course_config(tmp_path).CourseDirectory.course_id
    steps = ("fetch_assignment", "submit", "collect", "release_assignment", "release_feedback", "fetch_feedback")
    for step in steps:
        assert getattr(nbgrader.ExchangeFactory, step).__module__.startswith("ngshare_exchange."), step
    # The instructor's (and the course folder's own settings, read last in a terminal there): every step ngshare's
    # but collect, which is ngshare's behind the course's guard (ngshare_exchange's fails on one malformed hand-in).
    instructor = exec_config(K8S / "jupyter" / "roles" / "instructor" / "nbgrader_config.py")
    in_course_folder = exec_config(K8S / "jupyter" / "roles" / "instructor" / "nbgrader_config.py")
    in_course_folder.merge(course_config(tmp_path))  # the course folder's nbgrader_config.py, read last there
    for settings in (instructor, in_course_folder):
        assert settings.ExchangeFactory.collect == "autograder.pipeline.exchange.ngshare_collect.SafeNgshareCollect"
        for step in steps[:2] + steps[3:]:
            assert getattr(settings.ExchangeFactory, step).__module__.startswith("ngshare_exchange."), step
    service = values["hub"]["services"]["ngshare"]
    ngshare = yaml.safe_load((K8S / "ngshare-values.yaml").read_text())
    assert service["url"] == "http://ngshare:8080" and ngshare["ngshare"]["hub_api_url"] == "http://hub:8081/hub/api"
    assert "apiToken" not in service and "hub_api_token" not in ngshare["ngshare"]  # secrets.yaml, not git
    storage = values["singleuser"]["storage"]
    assert not storage.get("extraVolumes") and not storage.get("extraVolumeMounts")
    claims = [d["metadata"]["name"] for d in yaml.safe_load_all((K8S / "pvc-course.yaml").read_text())
              if d["kind"] == "PersistentVolumeClaim"]
    assert claims == ["tfcourse-course"]


def test_the_ngshare_image_installs_the_pins_the_one_machine_hub_runs(tmp_path):
    """Dockerfile.ngshare computes its constraints with provision's own hub_constraints, from the files it copies:
    run here on exactly those files (a module provision.py starts to need, and the image lacks, fails here)."""
    steps = instructions(K8S / "Dockerfile.ngshare")
    assert [a for k, a in steps if k == "FROM"] == ["python:3.11.7-slim-bookworm"]  # the single-user image's Python
    copied = [shlex.split(a) for k, a in steps if k == "COPY"]
    workdir = next(a for k, a in steps if k == "WORKDIR")
    for *sources, target in copied:
        for source in sources:
            placed = tmp_path / Path(target).relative_to(workdir) / Path(source).name
            placed.parent.mkdir(parents=True, exist_ok=True)
            placed.write_bytes((REPO_ROOT / source).read_bytes())
    (run,) = [a.split(" && ") for k, a in steps if k == "RUN"]
    command, output = run[0].split(" > ")
    words = shlex.split(command)  # the image's `python`, here this interpreter, with nothing but the copies to import
    assert words[0] == "python"
    made = subprocess.run([sys.executable, *words[1:]], cwd=tmp_path, capture_output=True, text=True, env={})
    assert made.returncode == 0, f"the image's constraints step fails on the files it copies:\n{made.stderr}"
    assert output.strip() == "constraints.txt" and made.stdout == hub_constraints("classroom/requirements-ngshare.txt")
    install = ["pip", "install", "-r", "classroom/requirements-ngshare.txt", "-c", "constraints.txt"]
    assert shlex.split(run[1]) == install  # as provision.build_env installs the one-machine hub's ngshare
    assert shlex.split(run[2]) == ["pip", "uninstall", "--yes", "-r", "requirements-removed.txt"]  # as provision does
    assert "sqlalchemy.__version__.startswith('1.4.')" in run[3]  # the build fails on SQLAlchemy 2
    assert set(NGSHARE_PINS) <= {f"{Path(t).relative_to(workdir) / Path(s).name}" for *ss, t in copied for s in ss}
    assert ("ENTRYPOINT", '["python", "-m", "ngshare"]') in steps  # the chart passes ngshare's arguments
    ignore = [line for line in (K8S / "Dockerfile.ngshare.dockerignore").read_text().splitlines() if line[:1] != "#"]
    assert ignore[0] == "*" and {line[1:] for line in ignore[1:] if line} == {s for *ss, _ in copied for s in ss}


def test_the_ngshare_image_the_chart_and_the_pins_stay_in_step(image_env):
    """ngshare 0.6.0 answers success and stores nothing under SQLAlchemy 2 (classroom/requirements-ngshare.txt)."""
    pins = dict(line.split("==") for line in pins_of("classroom/requirements-ngshare.txt"))
    assert pins["SQLAlchemy"].startswith("1.4."), pins
    values = yaml.safe_load((K8S / "ngshare-values.yaml").read_text())
    assert values["image"] == {"repository": image_env["NGSHARE_IMAGE_NAME"], "tag": image_env["NGSHARE_IMAGE_TAG"]}
    assert image_env["NGSHARE_IMAGE_TAG"] == f"{pins['ngshare']}-sqlalchemy{pins['SQLAlchemy']}"
    assert image_env["NGSHARE_CHART_VERSION"] == pins["ngshare"]  # the chart of the same ngshare release
    chart = (image_env["NGSHARE_CHART_VERSION"], "$NGSHARE_CHART_VERSION", '"$NGSHARE_CHART_VERSION"')
    places = [K8S / name for name in ("README.md", "values.yaml", "ngshare-values.yaml")]
    commands = [re.sub(r"\\\n#?", " ", path.read_text()) for path in [*places, REPO_ROOT / "docs/running-a-class.md"]]
    lines = [line.lstrip("# ") for text in commands for line in text.splitlines()]
    installs = [line for line in lines if line.startswith("helm install ngshare ")]
    assert len(installs) >= 3, installs
    for line in installs:
        words = line.split()
        assert "--version" in words and words[words.index("--version") + 1] in chart, line


@pytest.mark.parametrize("volumes_as_dict", [False, True], ids=["volumes-as-list", "volumes-as-dict"])
def test_no_profile_mounts_an_exchange_and_only_the_instructors_the_course(values, volumes_as_dict):
    c, profiles = offered_profiles(values, [INSTRUCTORS], volumes_as_dict)
    assert {p["slug"] for p in profiles} == {"student", "gpu", "instructor"}
    for profile in profiles:
        mounts = {m["mountPath"]: m["name"] for m in effective(c, profile, "volume_mounts")}
        volumes = {v["name"]: v for v in effective(c, profile, "volumes")}
        assert "exchange" not in mounts.values() and "exchange" not in volumes, profile["slug"]
        assert set(mounts.values()) <= set(volumes), f"{profile['slug']}: a mount without its volume"
        course = "/srv/tfcourse/course" in mounts
        assert course == (profile["slug"] == "instructor"), profile["slug"]
        assert "allowed_groups" not in profile and "course_volume" not in profile  # KubeSpawner sees its own keys only
    instructor = by_slug(profiles)["instructor"]["kubespawner_override"]
    assert volumes["course"]["persistentVolumeClaim"]["claimName"] == "tfcourse-course"
    assert instructor["environment"]["PYTHONPATH"] == instructor["notebook_dir"] == "/srv/tfcourse/course"
    # the profile's labels and environment are added to the chart's, which let the pod reach the hub
    assert instructor["extra_labels"]["hub.jupyter.org/network-access-hub"] == "true"
    assert instructor["environment"]["OMP_NUM_THREADS"] == "4"


def test_the_grading_workers_mount_the_course_where_the_instructor_has_it(values):
    docs = list(yaml.safe_load_all((K8S / "dask-cluster.yaml").read_text()))
    (cluster,) = [d for d in docs if d["kind"] == "DaskCluster"]
    assert cluster["metadata"]["name"] + "-scheduler" == "dask-scheduler"  # the operator's Service name
    (worker,) = cluster["spec"]["worker"]["spec"]["containers"]
    mounts = {m["name"]: m["mountPath"] for m in worker["volumeMounts"]}
    volumes = {v["name"]: v for v in cluster["spec"]["worker"]["spec"]["volumes"]}
    assert mounts["course"] == "/srv/tfcourse/course"
    assert volumes["course"]["persistentVolumeClaim"]["claimName"] == "tfcourse-course"
    assert {"name": "PYTHONPATH", "value": "/srv/tfcourse/course"} in worker["env"]
    assert worker["args"][worker["args"].index("--nthreads") + 1] == "1"
    # only instructors' pods may reach the scheduler (it runs what any client sends)
    instructor = by_slug(values["singleuser"]["profileList"])["instructor"]["kubespawner_override"]
    policies = {d["metadata"]["name"]: d for d in docs if d["kind"] == "NetworkPolicy"}
    ingress = policies["dask-from-instructors-only"]["spec"]["ingress"]
    sources = [rule["from"][0]["podSelector"]["matchLabels"] for rule in ingress]
    assert [s for s in sources if s != {"dask.org/cluster-name": "dask"}] == [instructor["extra_labels"]]


# Who gets which profile


def test_the_instructor_profile_is_offered_to_the_instructors_group_only(values):
    _, student = offered_profiles(values, [])
    _, other_group = offered_profiles(values, ["teaching-assistants-of-another-course"])
    _, instructor = offered_profiles(values, [INSTRUCTORS, "anything"])
    assert [p["slug"] for p in student] == [p["slug"] for p in other_group] == ["student", "gpu"]
    assert [p["slug"] for p in instructor] == ["student", "gpu", "instructor"]
    assert [p for p in student if p.get("default")] == [by_slug(student)["student"]]
    assert INSTRUCTORS in values["hub"]["config"]["JupyterHub"]["load_groups"]
    # the chart's own list keeps the restriction (the callable reads it at every spawn)
    assert by_slug(values["singleuser"]["profileList"])["instructor"]["allowed_groups"] == [INSTRUCTORS]


def test_the_gpu_profile_requests_a_gpu_on_a_gpu_node_with_the_cuda_image(values, image_env):
    gpu = by_slug(values["singleuser"]["profileList"])["gpu"]
    override = gpu["kubespawner_override"]
    assert override["extra_resource_limits"] == {"nvidia.com/gpu": "1"}
    assert override["image"].endswith(":" + image_env["IMAGE_TAG_CUDA"])
    assert override["node_selector"]
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in override["tolerations"]
    assert "06" in gpu["display_name"] and "07" in gpu["display_name"]


def test_the_login_name_is_the_lms_login_id(values):
    config = values["hub"]["config"]
    assert config["JupyterHub"]["authenticator_class"].startswith("ltiauthenticator.")
    assert config["LTI11Authenticator"]["username_key"] == "custom_canvas_user_login_id"
    assert config["LTI13Authenticator"]["username_key"]


# Sizing


def test_memory_limits_hold_the_measured_peaks(values):
    measured = json.loads((K8S / "peak_memory.json").read_text())
    assert set(measured["notebooks"]) == {p.parent.name for p in (REPO_ROOT / "solutions").glob("*/*.ipynb")}
    kernel = max(n["peak_rss_mib"] for n in measured["notebooks"].values()) * 2**20
    server = measured["jupyter_server"]["peak_rss_mib"] * 2**20
    memory = values["singleuser"]["memory"]
    assert quantity_bytes(memory["guarantee"]) >= kernel + server  # the largest notebook, run once
    assert quantity_bytes(memory["limit"]) >= 2 * kernel + server  # and a second kernel beside it
    for profile in values["singleuser"]["profileList"]:
        override = profile.get("kubespawner_override", {})
        if "mem_limit" in override:
            assert quantity_bytes(override["mem_guarantee"]) >= quantity_bytes(memory["guarantee"])
            assert quantity_bytes(override["mem_limit"]) >= quantity_bytes(memory["limit"])
    assert values["singleuser"]["extraEnv"]["OMP_NUM_THREADS"] == "1" and values["singleuser"]["cpu"]["limit"] == 1


def test_the_peaks_are_measured_in_full_mode_on_one_thread(monkeypatch):
    spec = importlib.util.spec_from_file_location("measure_peak_memory", K8S / "measure_peak_memory.py")
    measure = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(measure)
    monkeypatch.setenv("TFCOURSE_FAST", "1")
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    env = measure.full_mode_env()
    assert "TFCOURSE_FAST" not in env and "NBGRADER_EXECUTION" not in env
    assert env["OMP_NUM_THREADS"] == "1"
    measured = json.loads((K8S / "peak_memory.json").read_text())
    assert measured["mode"].startswith("full")
    for entry in measured["notebooks"].values():
        probe = entry["probe_kib"]  # the kernel's VmHWM, its children's and the runner's view of it
        largest = max(probe["vmhwm_kib"], probe["children_maxrss_kib"], probe["runner_children_maxrss_kib"])
        assert entry["peak_rss_mib"] == round(largest / 1024, 1)


def test_the_instructor_profile_gets_the_course_page_policy() -> None:
    """The instructor profile's server settings (the page policy extension) are the course's own, not a copy apart."""
    k8s = K8S / "jupyter" / "roles" / "instructor" / "jupyter_server_config.json"
    ours = INSTRUCTOR_SERVER_CONFIG / "jupyter_server_config.json"
    assert json.loads(k8s.read_text()) == json.loads(ours.read_text()), f"{k8s} differs from {ours}"
