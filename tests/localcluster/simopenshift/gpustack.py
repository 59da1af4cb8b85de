# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Pure functions of the GPU node agent: which pods it owns, what a driver image
was built for, the labels GPU Feature Discovery publishes, the text nvidia-smi
and the CUDA vectorAdd sample print. No API calls here (unit-tested directly).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re
import time

import yaml

from simopenshift import catalog, images, runtime
from simopenshift.kube import annotations_of, labels_of

GFD_PREFIX = "nvidia.com/"
# GFD label keys the agent owns (removed when no GFD pod runs on the node).
GFD_KEYS = (
    "cuda.driver.major",
    "cuda.driver.minor",
    "cuda.driver.rev",
    "cuda.driver-version.full",
    "cuda.driver-version.major",
    "cuda.driver-version.minor",
    "cuda.driver-version.revision",
    "cuda.runtime.major",
    "cuda.runtime.minor",
    "cuda.runtime-version.full",
    "cuda.runtime-version.major",
    "cuda.runtime-version.minor",
    "gfd.timestamp",
    "gpu.compute.major",
    "gpu.compute.minor",
    "gpu.count",
    "gpu.family",
    "gpu.machine",
    "gpu.memory",
    "gpu.mode",
    "gpu.product",
    "gpu.replicas",
    "gpu.sharing-strategy",
    "mig.capable",
    "mps.capable",
    "vgpu.present",
)
ANN_HOST_DRIVER = catalog.SIM_PREFIX + "host-driver-version"
SHARED_RESOURCE = "nvidia.com/gpu.shared"
# Node label selecting a device plugin config (key of its ConfigMap); config-manager watches it.
CONFIG_LABEL = "nvidia.com/device-plugin.config"
# Phases config-manager takes to follow a label change (informer event, re-link, SIGHUP, re-registration).
CONFIG_MANAGER_DELAY = 1.0

VECTOR_ADD_OK = """[Vector addition of 50000 elements]
Copy input data from the host memory to the CUDA device
CUDA kernel launch with 196 blocks of 256 threads
Copy output data from the CUDA device to the host memory
Test PASSED
Done
"""

POWER_CAP_W = {
    "Tesla-T4": 70,
    "Tesla-K80": 149,
    "Tesla-M60": 150,
    "NVIDIA-L4": 72,
    "NVIDIA-L40S": 350,
    "NVIDIA-A10G": 300,
    "NVIDIA-A10": 150,
    "NVIDIA-A100-SXM4-40GB": 400,
    "NVIDIA-A100-SXM4-80GB": 400,
    "NVIDIA-A100-80GB-PCIe": 300,
    "NVIDIA-H100-80GB-HBM3": 700,
    "NVIDIA-H200": 700,
}


def component(pod):
    labels = labels_of(pod)
    return labels.get(catalog.COMPONENT_LABEL) or catalog.OPERATOR_APPS.get(labels.get("app"))


def gpu_request(pod):
    """nvidia.com/gpu (or the time-sliced nvidia.com/gpu.shared) limits of all containers."""
    total = 0
    for container in (pod.get("spec") or {}).get("containers") or []:
        limits = ((container.get("resources") or {}).get("limits")) or {}
        for res in (catalog.GPU_RESOURCE, SHARED_RESOURCE):
            if res in limits:
                try:
                    total += int(str(limits[res]))
                except ValueError:
                    pass
    return total


def requests_gpu_resource(pod):
    for container in (pod.get("spec") or {}).get("containers") or []:
        limits = ((container.get("resources") or {}).get("limits")) or {}
        if catalog.GPU_RESOURCE in limits or SHARED_RESOURCE in limits:
            return True
    return False


def agent_owned(pod):
    """Pods the agent plays kubelet for; kwok's stages skip exactly these (kwok/stages.yaml)."""
    return component(pod) in catalog.AGENT_COMPONENTS or requests_gpu_resource(pod)


def looks_like_kernel(text):
    return bool(text and re.match(r"^\d+\.\d+\.\d+-", text))


def container_env(container, name):
    for entry in container.get("env") or []:
        if entry.get("name") == name and entry.get("value"):
            return entry["value"]
    return None


def pod_env(pod, name):
    """The first value of env ``name`` among the pod's containers and init containers."""
    spec = pod.get("spec") or {}
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        value = container_env(container, name)
        if value:
            return value
    return None


def has_config_manager(pod):
    """Whether a (long-running) container of the pod is upstream's config-manager sidecar."""
    for container in (pod.get("spec") or {}).get("containers") or []:
        command = (container.get("command") or []) + (container.get("args") or [])
        if container.get("name") == "config-manager" or (command and command[0].endswith("config-manager")):
            return True
    return False


def driver_version(container):
    """Driver version a driver container installs: env DRIVER_VERSION or the image tag."""
    value = container_env(container, "DRIVER_VERSION")
    if value:
        return value
    image = container.get("image", "")
    tag = image.rsplit("@", 1)[0].rsplit(":", 1)[-1] if ":" in image.rsplit("/", 1)[-1] else ""
    match = catalog.DRIVER_VERSION_RE.search(tag)
    if match:
        return ".".join(g for g in match.groups() if g)
    return catalog.DEFAULT_DRIVER_VERSION


def image_kernel(image):
    """Kernel named in a precompiled driver image tag (``550.90.07-5.14.0-427.22.1.el9_4.x86_64-rhcos4.16``)."""
    tag = image.rsplit("@", 1)[0]
    tag = tag.rsplit(":", 1)[-1] if ":" in tag.rsplit("/", 1)[-1] else ""
    match = catalog.KERNEL_RE.search(tag)
    return match.group(0) if match else None


def image_os_tag(image):
    """``rhcos4.16`` / ``rhel9.6`` / ``ubuntu22.04`` suffix of a driver image tag, if any."""
    tag = image.rsplit("@", 1)[0]
    tag = tag.rsplit(":", 1)[-1] if ":" in tag.rsplit("/", 1)[-1] else ""
    match = re.search(r"-(rhcos\d+\.\d+|rhel\d+\.\d+|ubuntu\d+\.\d+)$", tag)
    return match.group(1) if match else None


def node_os_tag(os_release):
    ident, version = os_release.get("ID"), os_release.get("VERSION_ID")
    if ident and version:
        return "%s%s" % (ident, version)
    return None


class DriverVerdict(object):
    """Whether a driver container can load its modules on a node, and why not."""

    def __init__(self, ok, built_for=None, reason=None, pull_error=None):
        self.ok = ok
        self.built_for = built_for
        self.reason = reason
        self.pull_error = pull_error


def pull_failure(image):
    """The kubelet's event for an image whose tag the registry does not have, as CRI-O words it on OpenShift
    ("reading manifest <tag> in <repository>: manifest unknown"; e.g. hpe-storage/csi-driver#494)."""
    name = image.rsplit("@", 1)[0]
    repo, tag = name.rsplit(":", 1) if ":" in name.rsplit("/", 1)[-1] else (name, "latest")
    return (
        'Failed to pull image "%s": rpc error: code = Unknown desc = initializing source docker://%s: reading manifest '
        "%s in %s: manifest unknown" % (image, image, tag, repo)
    )


def judge_driver(container, node_kernel, os_release, registry_lookup=None):
    """Decide from the image/env what kernel a driver container was built for.

    Order: env KERNEL_VERSION; an internal-registry image resolved through
    ``registry_lookup(image) -> (exists, kernel_or_None)`` (the Build that
    pushed it); a kernel in the image tag (precompiled); the ``-rhcosX.Y`` /
    ``-rhelX.Y`` OS suffix of images that compile on the node (DTK flow).
    """
    image = container.get("image", "")
    built_for = container_env(container, "KERNEL_VERSION")
    if not built_for and registry_lookup and image.startswith(catalog.INTERNAL_REGISTRY + "/"):
        exists, kernel = registry_lookup(image)
        if not exists:
            return DriverVerdict(False, pull_error='Back-off pulling image "%s"' % image)
        built_for = kernel
    if not built_for:
        built_for = image_kernel(image)
    if not looks_like_kernel(node_kernel):
        return DriverVerdict(True, built_for)
    if built_for:
        if built_for != node_kernel:
            return DriverVerdict(
                False, built_for, "modules built for kernel %s, node runs %s" % (built_for, node_kernel)
            )
        return DriverVerdict(True, built_for)
    wanted = image_os_tag(image)
    have = node_os_tag(os_release)
    if wanted and have and wanted != have:
        return DriverVerdict(False, None, "image is for %s, node runs %s" % (wanted, have))
    return DriverVerdict(True, node_kernel)


def driver_log(version, node_kernel, verdict):
    lines = [
        "DRIVER_ARCH is x86_64",
        "Creating directory NVIDIA-Linux-x86_64-%s" % version,
        "",
        "========== NVIDIA Software Installer ==========",
        "",
        "Starting installation of NVIDIA driver version %s for Linux kernel version %s" % (version, node_kernel),
        "",
        "Stopping NVIDIA persistence daemon...",
        "Unloading NVIDIA driver kernel modules...",
        "Unmounting NVIDIA driver rootfs...",
        "Checking NVIDIA driver packages...",
        "Updating the package cache...",
        "Resolving Linux kernel version...",
        "Proceeding with Linux kernel version %s" % node_kernel,
        "Loading IPMI kernel module...",
        "Loading NVIDIA driver kernel modules...",
        "+ modprobe nvidia",
    ]
    if verdict.ok:
        lines += [
            "+ modprobe nvidia-uvm",
            "+ modprobe nvidia-modeset",
            "Starting NVIDIA persistence daemon...",
            "Mounting NVIDIA driver rootfs...",
            "Done, now waiting for signal",
        ]
    elif verdict.built_for:
        lines += [
            "modprobe: FATAL: Module nvidia not found in directory /lib/modules/%s" % node_kernel,
            "Kernel modules in this image were built for %s" % verdict.built_for,
            "Could not load NVIDIA driver kernel modules: %s" % verdict.reason,
        ]
    else:
        lines += ["Could not resolve Linux kernel version: %s" % verdict.reason]
    return "\n".join(lines) + "\n"


def gpu_display_name(product):
    name = product.replace("-", " ", 1) if product.startswith(("Tesla-", "NVIDIA-", "Quadro-")) else product
    return name if len(name) <= 18 else name[:15] + "..."


def driver_branch(driver):
    try:
        return int(str(driver).split(".", maxsplit=1)[0])
    except ValueError:
        return 0


def nvidia_smi(product, count, memory_mib, driver, cuda, now=None):
    """An nvidia-smi table in the layout of the driver's branch for ``count`` GPUs.

    Before R525 the 79-column table of seed 000; R525-R545 the 89-column one
    with a MIG M. row (R535); from R550 the Bus-Id and memory columns are two
    characters wider; from R610 the header says ``KMD Version`` instead of
    ``Driver Version``.
    """
    if driver_branch(driver) >= 525:
        return nvidia_smi_wide(product, count, memory_mib, driver, cuda, now)
    return nvidia_smi_legacy(product, count, memory_mib, driver, cuda, now)


def nvidia_smi_wide(product, count, memory_mib, driver, cuda, now=None):
    """The R525+ table (R550+: wider Bus-Id / memory columns; R610+: KMD Version)."""
    stamp = time.strftime("%a %b %e %H:%M:%S %Y", time.gmtime(now or time.time()))
    cap = POWER_CAP_W.get(product, 300)
    branch = driver_branch(driver)
    mid = 24 if branch >= 550 else 22
    label = "KMD Version:" if branch >= 610 else "Driver Version:"
    rule = "+" + "-" * 41 + "+" + "-" * mid + "+" + "-" * 22 + "+"
    head = "| NVIDIA-SMI {drv:<22} {label} {drv:<14} CUDA Version: {cuda:<9}".format(
        drv=driver, label=label, cuda=cuda or "N/A"
    )
    width = len(rule)
    out = [
        stamp,
        "+" + "-" * (width - 2) + "+",
        head[: width - 1].ljust(width - 1) + "|",
        rule.replace("+", "|", 1)[:-1] + "|",
        "| GPU  Name                 Persistence-M | {0} | Volatile Uncorr. ECC |".format(
            "Bus-Id        Disp.A".rjust(mid - 2) if mid == 22 else "Bus-Id          Disp.A"
        ),
        "| Fan  Temp   Perf          Pwr:Usage/Cap | {0} | GPU-Util  Compute M. |".format(
            "Memory-Usage".rjust(mid - 2)
        ),
        "|                                         | {0} |               MIG M. |".format(" " * (mid - 2)),
        "|" + rule[1:-1].replace("-", "=") + "|",
    ]
    name = product.replace("-", " ", 1) if product.startswith(("Tesla-", "NVIDIA-", "Quadro-")) else product
    for index in range(count):
        bus = "00000000:00:%02X.0 Off" % (0x1E - index if index < 0x1E else index)
        memory = "0MiB / %dMiB" % memory_mib
        out.append("| {0:>3}  {1:<29}  On  | {2} |                    0 |".format(index, name[:29], bus.rjust(mid - 2)))
        power = "%dW / %4dW" % (min(22, cap // 3), cap)
        out.append("| N/A   34C    P0{0} | {1} |      0%      Default |".format(power.rjust(24), memory.rjust(mid - 2)))
        out.append("|                                         | {0} |                  N/A |".format(" " * (mid - 2)))
        out.append(rule)
    out += [
        "",
        "+" + "-" * (width - 2) + "+",
        "| Processes:".ljust(width - 1) + "|",
        "|  No running processes found".ljust(width - 1) + "|",
        "+" + "-" * (width - 2) + "+",
    ]
    return "\n".join(out) + "\n"


def nvidia_smi_legacy(product, count, memory_mib, driver, cuda, now=None):
    """An nvidia-smi table in the layout of seed 000 (drivers before R525) for ``count`` GPUs."""
    stamp = time.strftime("%a %b %e %H:%M:%S %Y", time.gmtime(now or time.time()))
    cap = POWER_CAP_W.get(product, 300)
    out = [
        stamp + "       ",
        "+-----------------------------------------------------------------------------+",
        "| NVIDIA-SMI %-12s Driver Version: %-12s CUDA Version: %-9s|" % (driver, driver, cuda or "N/A"),
        "|-------------------------------+----------------------+----------------------+",
        "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |",
        "|===============================+======================+======================|",
    ]
    for index in range(count):
        bus = "00000000:00:%02X.0" % (0x1E - index if index < 0x1E else index)
        out.append("| %3d  %-18s  On   | %s Off |                    0 |" % (index, gpu_display_name(product), bus))
        memory = "0MiB / %dMiB" % memory_mib
        out.append(
            "| N/A   34C    P0    %2dW / %3dW | %20s |      0%%      Default |" % (min(22, cap // 3), cap, memory)
        )
        out.append("+-------------------------------+----------------------+----------------------+")
    out += [
        "                                                                               ",
        "+-----------------------------------------------------------------------------+",
        "| Processes:                                                       GPU Memory |",
        "|  GPU       PID   Type   Process name                             Usage      |",
        "|=============================================================================|",
        "|  No running processes found                                                 |",
        "+-----------------------------------------------------------------------------+",
    ]
    return "\n".join(out) + "\n"


NVIDIA_SMI_NO_DRIVER = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running.\n"
)


def vector_add_failure(reason):
    return "[Vector addition of 50000 elements]\nFailed to allocate device vector A (error code %s)!\n" % reason


def workload_kind(pod):
    text = " ".join(
        " ".join([c.get("image", "")] + (c.get("command") or []) + (c.get("args") or []))
        for c in (pod.get("spec") or {}).get("containers") or []
    ).lower()
    if "dcgmi diag" in text:
        return "dcgm-diag"
    if "nvidia-smi" in text:
        return "nvidia-smi"
    if "vectoradd" in text or "vector-add" in text or "vector_add" in text or "cuda-sample" in text:
        return "vectoradd"
    return "workload"


def workload_seconds(pod):
    """How long a GPU workload's program runs: None for one that runs on until it is deleted (``sleep infinity``,
    ``tail -f``, a training script: anything the simulator does not know to end), the seconds of ``sleep N``, and
    0 for the short programs it knows (nvidia-smi, vectorAdd, dcgmi diag) - they end at once, as on a node."""
    words = []
    for c in (pod.get("spec") or {}).get("containers") or []:
        words += [str(w) for w in (c.get("command") or []) + (c.get("args") or [])]
    text = " ".join(words)
    if workload_kind(pod) != "workload":
        return 0
    sleep = re.search(r"\bsleep\s+([0-9]+)(s?)\b", text)
    if sleep and "infinity" not in text:
        return int(sleep.group(1))
    if not words:
        return 0  # the image's own entrypoint: unknown, taken as a short program (kwok's default for plain pods)
    return None


def sharing_config(text, node_labels=None, default_key=None):
    """(replicas, rename) from a device plugin config map's data dict or YAML text."""
    if isinstance(text, dict):
        data = text
        key = (node_labels or {}).get(CONFIG_LABEL) or default_key
        if key and key in data:
            text = data[key]
        elif len(data) == 1:
            text = next(iter(data.values()))
        elif "any" in data:
            text = data["any"]
        else:
            return 1, False, "none"
    try:
        config = yaml.safe_load(text or "") or {}
    except yaml.YAMLError:
        return 1, False, "none"
    sharing = (config.get("sharing") or {}) if isinstance(config, dict) else {}
    for strategy, name in (("timeSlicing", "time-slicing"), ("mps", "mps")):
        block = sharing.get(strategy) or {}
        for res in block.get("resources") or []:
            if res.get("name") == catalog.GPU_RESOURCE and int(res.get("replicas", 1)) > 1:
                return int(res["replicas"]), bool(block.get("renameByDefault") or res.get("rename")), name
    return 1, False, "none"


def gfd_labels(node, hw, driver, replicas=1, strategy="none", timestamp=None, rename=False):
    """The nvidia.com/* labels GPU Feature Discovery publishes (seed 004 + GFD README).

    A shared GPU's product gets ``-SHARED`` only when the resource keeps its name
    (``renameByDefault: false``); renamed to ``nvidia.com/gpu.shared`` it does not.
    """
    model = hw.model
    major, minor, rev = (driver.split(".") + ["", ""])[:3]
    cuda = catalog.cuda_version(driver) or ""
    cuda_major, cuda_minor = (cuda.split(".") + [""])[:2]
    itype = hw.instance_type
    machine = (
        itype.name
        if itype and itype.provider == "aws"
        else (
            "Virtual-Machine"
            if itype and itype.provider == "azure"
            else (labels_of(node).get("node.kubernetes.io/instance-type") or "Unknown")
        )
    )
    product = hw.gpu_product
    if strategy != "none" and not rename:
        product += "-SHARED"
    labels = {
        "cuda.driver.major": major,
        "cuda.driver.minor": minor,
        "cuda.driver.rev": rev,
        "cuda.driver-version.full": driver,
        "cuda.driver-version.major": major,
        "cuda.driver-version.minor": minor,
        "cuda.driver-version.revision": rev,
        "cuda.runtime.major": cuda_major,
        "cuda.runtime.minor": cuda_minor,
        "cuda.runtime-version.full": cuda,
        "cuda.runtime-version.major": cuda_major,
        "cuda.runtime-version.minor": cuda_minor,
        "gfd.timestamp": str(int(timestamp or time.time())),
        "gpu.compute.major": model.compute_major if model else "7",
        "gpu.compute.minor": model.compute_minor if model else "5",
        "gpu.count": str(hw.gpu_count),
        "gpu.family": model.family if model else "turing",
        "gpu.machine": machine,
        "gpu.memory": str(hw.gpu_memory_mib),
        "gpu.mode": "compute",
        "gpu.product": product,
        "gpu.replicas": str(replicas),
        "gpu.sharing-strategy": strategy,
        "mig.capable": "true" if model and model.mig_capable else "false",
        "mps.capable": "false",
        "vgpu.present": "false",
    }
    return {GFD_PREFIX + k: v for k, v in labels.items() if v != ""}


# Container runtimes as status.nodeInfo.containerRuntimeVersion names them (``cri-o://1.29.5``) -> the
# installer's RUNTIME value (nvidia-ctk-installer ``--runtime``).
RUNTIME_SCHEMES = {"cri-o": "crio", "containerd": "containerd", "docker": "docker"}
# Where each runtime's config and socket are when the pod sets none (the GPU Operator's defaults).
RUNTIME_DEFAULTS = {
    "crio": {"config": "/etc/crio/config.toml", "socket": None},
    "containerd": {"config": "/etc/containerd/config.toml", "socket": "/run/containerd/containerd.sock"},
    "docker": {"config": "/etc/docker/daemon.json", "socket": "/var/run/docker.sock"},
}


def node_runtime(node):
    """The node's container runtime (crio, containerd, docker) from nodeInfo, or None when it reports none."""
    version = ((node.get("status") or {}).get("nodeInfo") or {}).get("containerRuntimeVersion") or ""
    if "://" not in version:
        return None
    return RUNTIME_SCHEMES.get(version.split("://", 1)[0])


def toolkit_run(container, runtime_of_node):
    """(ok, runtime, log) of the container toolkit installer (nvidia-ctk-installer) on a node.

    The installer configures the runtime its ``RUNTIME`` env names (the sim takes the node's own when the pod sets
    none; the real installer's default is docker). Configuring a runtime the node does not run fails the way the
    real one does: containerd is signalled through its socket (``unable to dial ... no such file or directory``),
    CRI-O is restarted through systemd (``Unit crio.service not found``); the container exits 1 and crash-loops.
    """
    wanted = container_env(container, "RUNTIME")
    runtime = wanted or runtime_of_node or "crio"
    defaults = RUNTIME_DEFAULTS.get(runtime, RUNTIME_DEFAULTS["crio"])
    if runtime == "containerd":
        config = container_env(container, "CONTAINERD_CONFIG") or defaults["config"]
        socket = container_env(container, "CONTAINERD_SOCKET") or defaults["socket"]
    elif runtime == "crio":
        config, socket = container_env(container, "CRIO_CONFIG") or defaults["config"], None
    else:
        config = container_env(container, "DOCKER_CONFIG") or defaults["config"]
        socket = container_env(container, "DOCKER_SOCKET") or defaults["socket"]
    cdi = (container_env(container, "CDI_ENABLED") or "true").lower() == "true"
    lines = [
        'level=info msg="Parsing arguments"',
        'level=info msg="Starting nvidia-toolkit"',
        'level=info msg="Verifying Flags"',
        "level=info msg=\"Installing NVIDIA container toolkit to '/usr/local/nvidia/toolkit'\"",
        "level=info msg=\"Installing NVIDIA container toolkit config '/usr/local/nvidia/toolkit/.config/"
        "nvidia-container-runtime/config.toml'\"",
    ]
    if cdi:
        lines.append('level=info msg="Generating CDI spec for management containers"')
    lines += [
        'level=info msg="Setting up runtime"',
        "level=info msg=\"Starting 'setup' for %s\"" % runtime,
        'level=info msg="Loading config from %s"' % config,
    ]
    ok = runtime_of_node is None or runtime == runtime_of_node
    if not ok:
        # Another runtime's node has no such config: the installer starts from an empty one.
        lines.append('level=info msg="Config file does not exist; using empty config"')
    lines.append('level=info msg="Flushing config to %s"' % config)
    if ok:
        if runtime == "crio":
            lines.append('level=info msg="Restarting crio using systemd and host\'s systemctl"')
        else:
            lines += [
                'level=info msg="Sending SIGHUP signal to %s"' % runtime,
                'level=info msg="Successfully signaled %s"' % runtime,
            ]
        lines += [
            "level=info msg=\"Completed 'setup' for %s\"" % runtime,
            'level=info msg="Waiting for signal"',
            "nvidia-container-toolkit installed for runtime %s" % runtime,
        ]
    elif runtime == "crio":
        lines.append(
            'level=error msg="error running nvidia-toolkit: unable to setup runtime: unable to restart crio: '
            'failed to restart crio: exit status 5: Failed to restart crio.service: Unit crio.service not found."'
        )
    else:
        lines.append(
            'level=error msg="error running nvidia-toolkit: unable to setup runtime: unable to restart %s: '
            'unable to signal %s: unable to dial: dial unix %s: connect: no such file or directory"'
            % (runtime, runtime, socket)
        )
    return ok, runtime, "\n".join(lines) + "\n"


def gfd_uses_node_feature_api(container):
    """GFD writes a NodeFeature object instead of node labels unless USE_NODE_FEATURE_API=false (GFD default: true)."""
    return (container_env(container, "USE_NODE_FEATURE_API") or "true").strip().lower() != "false"


def host_driver(node, managed):
    """Driver version installed on the host (no driver container needed), or None.

    Nodes whose GPU hardware is not declared but that already advertise
    nvidia.com/gpu (pre-provisioned nodes of the plain-Kubernetes profile) are
    taken to have one, like cloud GPU images with drivers baked in.
    """
    value = annotations_of(node).get(ANN_HOST_DRIVER)
    if value:
        return value
    if not managed and ((node.get("status") or {}).get("capacity") or {}).get(catalog.GPU_RESOURCE):
        return catalog.DEFAULT_DRIVER_VERSION
    return None


# ------------------------------------------------------------------ driver pods on a real node
# GPU families the open kernel modules do not support (no GSP), and those that need them or GSP firmware in any
# mode (NVIDIA/open-gpu-kernel-modules README "Compatible GPUs"; nvidia-installer kernel.c).
OPEN_UNSUPPORTED = ("kepler", "maxwell", "pascal", "volta")
OPEN_REQUIRED = ("blackwell",)
GSP_REQUIRED = ("hopper", "blackwell")
FIRMWARE_HOST_DIR = "/run/nvidia/driver/lib/firmware"
FIRMWARE_SEARCH_PATH = "/sys/module/firmware_class/parameters/path"
PCI_ADDRESS = "0000:00:1e.0"


def has_firmware_mounts(pod, container):
    """The GPU Operator's two firmware mounts (assets/state-driver/0500_daemonset.yaml, commit 16b50b41a)."""
    mounts = runtime.host_mounts(pod, container)
    return mounts.get("/lib/firmware") == FIRMWARE_HOST_DIR and mounts.get(FIRMWARE_SEARCH_PATH) == FIRMWARE_SEARCH_PATH


def recommended_module_type(family, driver):
    """What ``nvidia-installer --print-recommended-kernel-module-type`` says on a node with this GPU family."""
    if family in OPEN_REQUIRED:
        return "open"
    if family in OPEN_UNSUPPORTED:
        return "proprietary"
    if family:
        return "open"
    return "open" if driver_branch(driver) >= 560 else "proprietary"


def exec_error(command):
    """The runtime's error when the image has no such executable (runc; crun says the same in other words)."""
    return (
        "failed to create shim task: OCI runtime create failed: runc create failed: unable to start container "
        'process: exec: "%s": executable file not found in $PATH: unknown' % command
    )


class DriverRun(object):
    """How a driver container fares on a node: ok, or the log lines and reason of its failure."""

    def __init__(self, ok, log=(), reason=None, exec_error=None, module_type=None, stuck=False):
        self.ok = ok
        self.stuck = stuck  # the container runs but never gets ready
        self.log = list(log)
        self.reason = reason
        self.exec_error = exec_error
        self.module_type = module_type


def _module_failure(family, module_type, driver, product):
    if module_type == "open" and family in OPEN_UNSUPPORTED:
        return [
            "NVRM: The NVIDIA GPU %s (PCI ID: 10de:%s) installed in this system is not supported by open nvidia.ko "
            "because it does not include the required GPU System Processor (GSP)." % (PCI_ADDRESS, product),
            "NVRM: No NVIDIA GPU found.",
            "modprobe: ERROR: could not insert 'nvidia': No such device",
        ], "open kernel modules on a %s GPU (no GSP)" % family
    if module_type == "proprietary" and family in OPEN_REQUIRED:
        return [
            "NVRM: The NVIDIA GPU %s installed in this system requires use of the NVIDIA open kernel modules."
            % PCI_ADDRESS,
            "NVRM: GPU %s: RmInitAdapter failed! (0x22:0x56:884)" % PCI_ADDRESS,
            "modprobe: ERROR: could not insert 'nvidia': No such device",
        ], "proprietary kernel modules on a %s GPU" % family
    return None, None


def _firmware_failure(driver):
    return [
        "nvidia %s: Direct firmware load for nvidia/%s/gsp_tu10x.bin failed with error -2" % (PCI_ADDRESS, driver),
        "NVRM: RmFetchGspRmImages: No firmware image found",
        "NVRM: GPU %s: RmInitAdapter failed! (0x61:0x56:1697)" % PCI_ADDRESS,
        "modprobe: ERROR: could not insert 'nvidia': No such device",
    ]


def driver_run(pod, container, contents, node_kernel, family, entitled):
    """Judge a driver container the way the node would run it (None: the image is unknown, not judged here).

    ``contents``: images.Contents of the container's image; ``entitled()``: can dnf on this node reach the RHEL
    repositories (RHCOS: the cluster-wide entitlement in the node's current config).
    """
    if contents is None:
        return None
    command = (container.get("command") or [None])[0]
    if command and command.rsplit("/", 1)[-1] not in contents.executables and command not in ("sh", "bash"):
        return DriverRun(False, reason="%s not in the image" % command, exec_error=exec_error(command))
    args = (container.get("command") or [])[1:] + (container.get("args") or [])
    driver = container_env(container, "DRIVER_VERSION") or contents.driver or catalog.DEFAULT_DRIVER_VERSION
    built_type = contents.modules.get(node_kernel)
    if "nv-ctr-run-with-dtk" in args:
        # The GPU Operator's OpenShift pattern: the Driver Toolkit sidecar compiles for the node kernel, the main
        # container loads (gpu-driver-container rhel9/ocp_dtk_entrypoint).
        sidecar = next(
            (
                c
                for c in (pod.get("spec") or {}).get("containers") or []
                if "dtk-build-driver" in " ".join((c.get("command") or []) + (c.get("args") or []))
            ),
            None,
        )
        if sidecar is None:
            return DriverRun(
                False,
                ["Waiting for openshift-driver-toolkit-ctr container to start ..."],
                "no openshift-driver-toolkit-ctr sidecar",
                stuck=True,
            )
        if images.dtk_kernel(sidecar.get("image")) == node_kernel:
            built_type = container_env(container, "KERNEL_MODULE_TYPE") or "auto"
            if built_type == "auto":
                built_type = recommended_module_type(family, driver)
        # else: "broken driver toolkit", the main container falls back to an entitled `nvidia-driver init`
    asked = container_env(container, "KERNEL_MODULE_TYPE") or "auto"
    if built_type in ("open", "proprietary"):
        module_type = built_type
    elif asked in ("open", "proprietary"):
        module_type = asked
    else:
        module_type = recommended_module_type(family, driver)
    if built_type is None:
        if "load" in args or not contents.compiles:
            have = ", ".join(sorted(contents.modules)) or "none"
            return DriverRun(
                False,
                [
                    "modprobe: FATAL: Module nvidia not found in directory /lib/modules/%s" % node_kernel,
                    "Kernel modules in this image were built for %s" % have,
                ],
                "no kernel modules for %s in the image (it has: %s)" % (node_kernel, have),
                module_type=module_type,
            )
        if contents.os_tag and contents.os_tag.startswith(("rhcos", "rhel")) and not entitled():
            # nvidia-driver init compiles on the node: kernel-devel comes from the entitled RHEL repositories
            # (gpu-driver-container rhel9/nvidia-driver _install_prerequisites).
            return DriverRun(
                False,
                [
                    "Installing elfutils...",
                    "This system is not registered with an entitlement server. You can use subscription-manager "
                    "to register.",
                    "FATAL: failed to install elfutils-libel-devel. RHEL entitlement may be improperly deployed.",
                ],
                "compiling on the node needs the RHEL entitlement (kernel-devel)",
                module_type=module_type,
            )
    lines, reason = _module_failure(family, module_type, driver, "")
    if lines:
        return DriverRun(False, lines, reason, module_type=module_type)
    if (module_type == "open" or family in GSP_REQUIRED) and not has_firmware_mounts(pod, container):
        return DriverRun(
            False,
            _firmware_failure(driver),
            "GSP firmware not reachable by the host kernel (no %s / %s hostPath mounts)"
            % (FIRMWARE_HOST_DIR, FIRMWARE_SEARCH_PATH),
            module_type=module_type,
        )
    return DriverRun(True, module_type=module_type)


# DCGM diagnostics (``dcgmi diag -r <level> -j``) as DCGM 4.x prints them: the tests each level runs (NVIDIA/DCGM
# dcgmi/Diag.cpp, nvvs plugin names), the JSON of HelperJsonBuildOutput written by jsoncpp's toStyledString (tab
# indent, sorted keys, " : "), and dcgmi's exit status (the negative dcgmReturn_t: 226 a failed test, 205 one that
# asks to isolate the GPU; NVIDIA/DCGM#158).
DCGM_VERSION = "4.6.0"
DCGM_LEVEL_TESTS = (
    ("Deployment", "software", 1),
    ("Integration", "pcie", 2),
    ("Hardware", "memory", 2),
    ("Hardware", "diagnostic", 3),
    ("Stress", "targeted_stress", 3),
    ("Stress", "targeted_power", 3),
    ("Stress", "memory_bandwidth", 3),
    ("Hardware", "memtest", 4),
    ("Stress", "pulse_test", 4),
)
# dcgmlib/src/dcgm_errors.h: DCGM_FR_MEMORY_MISMATCH (58), category HARDWARE_MEMORY (10), severity ISOLATE (2).
DCGM_MEMORY_MISMATCH = (
    "A memory mismatch was detected on GPU %d, but no error was reported by CUDA or NVML. Run a field diagnostic on "
    "the GPU."
)
DCGM_NO_ENGINE = "Error: Unable to start an embedded host engine. Libraries not found.\n"


def _styled(value, indent=""):
    """jsoncpp's toStyledString: objects and arrays of objects open on the next line, keys sorted, tab indent."""
    inner = indent + "\t"
    if isinstance(value, dict):
        parts = []
        for key in sorted(value):
            item = value[key]
            head = "%s%s : " % (inner, json.dumps(key))
            if isinstance(item, (dict, list)) and item and not _flat(item):
                parts.append(head + "\n" + inner + _styled(item, inner))
            else:
                parts.append(head + _styled(item, inner))
        return "{\n" + ",\n".join(parts) + "\n" + indent + "}"
    if isinstance(value, list):
        if _flat(value):
            return "[ " + ", ".join(json.dumps(v) for v in value) + " ]" if value else "[]"
        return "[\n" + ",\n".join(inner + _styled(v, inner) for v in value) + "\n" + indent + "]"
    return json.dumps(value)


def _flat(value):
    return isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value)


def dcgm_command_level(pod):
    """The ``-r`` level of a dcgmi diag container's command."""
    for container in (pod.get("spec") or {}).get("containers") or []:
        words = (container.get("command") or []) + (container.get("args") or [])
        for i, word in enumerate(words[:-1]):
            if word in ("-r", "--run") and words[i + 1].isdigit():
                return int(words[i + 1])
    return 1


def dcgm_diag(count, level, failing=None, driver="595.91.07"):
    """(output, exit status) of ``dcgmi diag -r <level> -j`` on ``count`` GPUs; ``failing``: the index of a GPU whose
    memory test finds a mismatch (a sim lever)."""
    categories, isolate = {}, False
    for category, test, since in DCGM_LEVEL_TESTS:
        if level < since:
            continue
        results, failed = [], False
        for gpu in range(count):
            result = {"entity_group": "GPU", "entity_group_id": 1, "entity_id": gpu, "status": "Pass"}
            if test == "memory" and failing is not None and gpu == failing:
                result["status"] = "Fail"
                result["warnings"] = [
                    {"error_category": 10, "error_id": 58, "error_severity": 2, "warning": DCGM_MEMORY_MISMATCH % gpu}
                ]
                failed = isolate = True
            results.append(result)
        categories.setdefault(category, []).append(
            {"name": test, "results": results, "test_summary": {"status": "Fail" if failed else "Pass"}}
        )
    doc = {
        "DCGM Diagnostic": {
            "test_categories": [{"category": c, "tests": t} for c, t in categories.items()],
        },
        "entity_groups": [
            {
                "entities": [
                    {"device_id": "20b5", "entity_id": gpu, "serial_num": "13240%08d" % gpu} for gpu in range(count)
                ],
                "entity_group": "GPU",
                "entity_group_id": 1,
            }
        ],
        "metadata": {"Driver Version Detected": driver, "version": DCGM_VERSION},
    }
    return _styled(doc) + "\n", (205 if isolate else 0)
