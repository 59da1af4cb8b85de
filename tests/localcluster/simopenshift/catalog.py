# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Facts the simulation derives everything else from.

Three tables in ``data/`` (see ``data/SOURCES.md``): cloud instance types (vCPU,
memory, GPU count and model), GPU models (what GPU Feature Discovery and
``nvidia-smi`` report) and RHCOS builds (OCP minor, RHEL minor, kernel).

The simulated node is described by what its kubelet reports: the instance type
label, ``status.nodeInfo.kernelVersion`` (``uname -r``) and
``status.nodeInfo.osImage`` (the os-release PRETTY_NAME). NFD labels, driver
compatibility and GFD labels are all computed from those, so a test that changes
the kernel in one place sees every consumer follow.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import hashlib
import os
import re

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")

# The release the seeded cluster runs by default (data/SOURCES.md explains the
# choice); ``up(..., openshift_version="4.19")`` picks another row of
# data/rhcos-builds.csv that has a ``cluster_version`` (see cluster_release()).
CLUSTER_OCP_VERSION = "4.16.0"
CLUSTER_RHCOS_BUILD = "416.94.202406172220-0"
DEFAULT_OPENSHIFT_VERSION = "4.16"
# OCP 4.16 ships Kubernetes 1.29; the exact z-stream of its kubelet is unconfirmed.
KUBELET_VERSION = "v1.29.5"
CRIO_VERSION = "cri-o://1.29.5"

# Sim-only annotations and labels (prefix sim.gpuops.io): hidden hardware truth
# the real cloud would hold, and the test levers of control.py.
SIM_PREFIX = "sim.gpuops.io/"
ANN_GPU_COUNT = SIM_PREFIX + "gpu-count"
ANN_GPU_PRODUCT = SIM_PREFIX + "gpu-product"
LABEL_NOT_READY = SIM_PREFIX + "not-ready"  # kwok's node stages skip nodes with it
ANN_NOT_READY_REASON = SIM_PREFIX + "not-ready-reason"
# Test lever: image references (comma-separated) the registry does not have, as this node's kubelet sees it.
ANN_MISSING_IMAGES = SIM_PREFIX + "missing-images"

# Component label the GPU node agent keys on (tests/localcluster/README.md).
COMPONENT_LABEL = "app.kubernetes.io/component"
COMPONENTS = (
    "nvidia-driver",
    "nvidia-container-toolkit",
    "nvidia-device-plugin",
    "gpu-feature-discovery",
    "dcgm-exporter",
    "gpu-validation",
)
# The entitlement test pod (dnf search in a UBI container): the agent judges it
# from the node's rendered config. Not a GPU component.
ENTITLEMENT_TEST = "entitlement-test"
# The GPU Operator's validator DaemonSet (gpuoperator.py): Ready once the node's stack and device plugin are.
OPERATOR_VALIDATOR = "gpu-operator-validator"
# Every app.kubernetes.io/component the agent plays kubelet for (kwok/stages.yaml skips them).
AGENT_COMPONENTS = COMPONENTS + (ENTITLEMENT_TEST, OPERATOR_VALIDATOR)
# The GPU Operator labels its operand pods ``app: <DaemonSet name>`` only (assets/state-*/0500_daemonset.yaml; the
# driver also carries app.kubernetes.io/component: nvidia-driver): the agent knows them by that label.
OPERATOR_APPS = {
    "nvidia-container-toolkit-daemonset": "nvidia-container-toolkit",
    "nvidia-device-plugin-daemonset": "nvidia-device-plugin",
    "gpu-feature-discovery": "gpu-feature-discovery",
    "nvidia-dcgm-exporter": "dcgm-exporter",
    "nvidia-operator-validator": OPERATOR_VALIDATOR,
}
GPU_RESOURCE = "nvidia.com/gpu"

INTERNAL_REGISTRY = "image-registry.openshift-image-registry.svc:5000"

# CUDA version a driver branch supports (nvidia-smi "CUDA Version", GFD
# cuda.runtime.*). 450 -> 11.0 matches seed 004 (driver 450.80.02, runtime 11.0).
CUDA_BY_BRANCH = {
    418: "10.1",
    430: "10.2",
    440: "10.2",
    450: "11.0",
    460: "11.2",
    470: "11.4",
    510: "11.6",
    515: "11.7",
    520: "11.8",
    525: "12.0",
    530: "12.1",
    535: "12.2",
    545: "12.3",
    550: "12.4",
    555: "12.5",
    560: "12.6",
    565: "12.7",
    570: "12.8",
    575: "12.9",
    580: "13.0",
}
DEFAULT_DRIVER_VERSION = "550.90.07"

KERNEL_RE = re.compile(r"\d+\.\d+\.\d+-[0-9][\w.]*\.el\d+(?:_\d+)?(?:\.\w+)?\.(?:x86_64|aarch64)(?:_64k)?")
DRIVER_VERSION_RE = re.compile(r"(?<![\d.])(\d{3})\.(\d{1,3})(?:\.(\d{1,3}))?(?![\d])")


def _read_csv(name):
    with open(os.path.join(DATA_DIR, name)) as handle:
        return list(csv.DictReader(handle))


class InstanceType(object):
    def __init__(self, row):
        self.provider = row["provider"]
        self.name = row["instance_type"]
        self.gpu_count = int(row["gpu_count"])
        self.gpu_model = row["gpu_model"] or None
        self.gpu_memory_mib = int(row["gpu_memory_mib_per_gpu"] or 0)
        self.vcpu = int(row["vcpu"])
        self.memory_mib = int(row["memory_mib"])

    @property
    def family(self):
        return self.name.split(".")[0]

    def __repr__(self):
        return "InstanceType(%s/%s)" % (self.provider, self.name)


class GpuModel(object):
    def __init__(self, row):
        self.product = row["product"]
        self.family = row["family"]
        self.compute_major = row["compute_major"]
        self.compute_minor = row["compute_minor"]
        self.nvml_memory_mib = int(row["nvml_memory_mib"]) if row["nvml_memory_mib"] else None
        self.pci_device = row["pci_device"]
        self.pci_class = row["pci_class"]
        self.mig_capable = row["mig_capable"] == "true"


class RhcosBuild(object):
    def __init__(self, build, ocp, rhel, kernel, cluster_version=None):
        self.build = build
        self.ocp = ocp
        self.rhel = rhel
        self.kernel = kernel
        # The ClusterVersion the simulation reports when it runs this build
        # cluster-wide (empty for builds only reachable by upgrade_kernel).
        self.cluster_version = cluster_version or None

    @property
    def new_layout(self):
        """4.19 split RHCOS into layers: os-release ID=rhel, VERSION_ID=RHEL x.y."""
        major, minor = (int(x) for x in self.ocp.split("."))
        return (major, minor) >= (4, 19)

    def os_release(self):
        """The os-release fields NFD turns into system-os_release.* labels."""
        if self.new_layout:
            ident, version_id = "rhel", self.rhel
        else:
            ident, version_id = "rhcos", self.ocp
        return {
            "ID": ident,
            "VERSION_ID": version_id,
            "RHEL_VERSION": self.rhel,
            "OPENSHIFT_VERSION": self.ocp,
            "OSTREE_VERSION": self.build,
        }

    @property
    def os_image(self):
        return "Red Hat Enterprise Linux CoreOS %s (Plow)" % self.build

    @property
    def os_id(self):
        """os-release ID, also the kubelet's ``node.openshift.io/os_id`` label: rhcos, rhel from 4.19."""
        return self.os_release()["ID"]

    def __repr__(self):
        return "RhcosBuild(%s, kernel %s)" % (self.build, self.kernel)


_INSTANCE_TYPES = None
_GPU_MODELS = None
_RHCOS = None


def instance_types():
    global _INSTANCE_TYPES
    if _INSTANCE_TYPES is None:
        _INSTANCE_TYPES = {row["instance_type"]: InstanceType(row) for row in _read_csv("instance-types.csv")}
    return _INSTANCE_TYPES


def instance_type(name):
    """The InstanceType called ``name`` or None."""
    return instance_types().get(name)


def gpu_models():
    global _GPU_MODELS
    if _GPU_MODELS is None:
        _GPU_MODELS = {row["product"]: GpuModel(row) for row in _read_csv("gpu-models.csv")}
    return _GPU_MODELS


def gpu_model(product):
    return gpu_models().get(product)


def rhcos_builds():
    global _RHCOS
    if _RHCOS is None:
        _RHCOS = {}
        for row in _read_csv("rhcos-builds.csv"):
            _RHCOS[row["rhcos_build"]] = RhcosBuild(
                row["rhcos_build"], row["ocp"], row["rhel"], row["kernel"], row.get("cluster_version")
            )
    return _RHCOS


def rhcos_build(build):
    """The RhcosBuild for a build id; unknown pre-4.19 ids are derived from the id.

    The pre-4.19 id encodes OCP and RHEL minors: ``416.94.*`` is OCP 4.16 on RHEL
    9.4 (openshift-releases.md note 1). The kernel of an unknown build is unknown.
    """
    known = rhcos_builds().get(build)
    if known:
        return known
    match = re.match(r"^4(\d+)\.(\d)(\d+)\.\d+-\d+$", build or "")
    if match:
        return RhcosBuild(build, "4.%s" % match.group(1), "%s.%s" % (match.group(2), match.group(3)), None)
    return None


def rhcos_build_for_kernel(kernel):
    for build in rhcos_builds().values():
        if build.kernel == kernel:
            return build
    return None


def openshift_versions():
    """{OCP minor: RhcosBuild} of the releases the simulated cluster can run (``cluster_version`` set)."""
    return dict((b.ocp, b) for b in rhcos_builds().values() if b.cluster_version)


def release_build(openshift_version=None):
    """The RhcosBuild of a release ("4.16", "4.19" or "4.19.0"; None = the process's current release)."""
    if openshift_version is None:
        return cluster_build()
    minor = ".".join(str(openshift_version).split(".")[:2])
    build = openshift_versions().get(minor)
    if build is None:
        raise ValueError(
            "OpenShift %s is not simulated; choose one of %s (data/rhcos-builds.csv, column cluster_version)"
            % (openshift_version, ", ".join(sorted(openshift_versions())))
        )
    return build


# The release of this process (the controllers process is started for one
# cluster; install() is given its release explicitly instead).
_CURRENT_BUILD = [CLUSTER_RHCOS_BUILD]


def set_cluster_release(openshift_version):
    """Make ``openshift_version`` this process's release (cluster_build(), cluster_ocp_version())."""
    _CURRENT_BUILD[0] = release_build(openshift_version or DEFAULT_OPENSHIFT_VERSION).build
    return cluster_build()


def cluster_build():
    return rhcos_builds()[_CURRENT_BUILD[0]]


def cluster_ocp_version():
    """The full ClusterVersion of this process's release, e.g. 4.16.0."""
    return cluster_build().cluster_version or CLUSTER_OCP_VERSION


def parse_os_image(os_image):
    """os-release fields from a kubelet ``osImage`` (the PRETTY_NAME).

    RHCOS: ``Red Hat Enterprise Linux CoreOS 416.94.202406172220-0 (Plow)``.
    Others: ``Ubuntu 22.04.4 LTS`` -> ID ubuntu, VERSION_ID 22.04 (what NFD reads
    from /etc/os-release there). Returns {} when nothing is recognised.
    """
    os_image = os_image or ""
    match = re.match(r"^Red Hat Enterprise Linux CoreOS (\S+)", os_image)
    if match:
        build = rhcos_build(match.group(1))
        if build:
            return build.os_release()
        return {"ID": "rhcos", "OSTREE_VERSION": match.group(1)}
    match = re.match(r"^Ubuntu (\d+\.\d+)", os_image)
    if match:
        return {"ID": "ubuntu", "VERSION_ID": match.group(1)}
    match = re.match(r"^Red Hat Enterprise Linux (?:Server )?(\d+\.\d+)", os_image)
    if match:
        return {"ID": "rhel", "VERSION_ID": match.group(1)}
    return {}


def cuda_version(driver_version):
    """CUDA version for a driver version string such as 550.90.07 (None if unknown)."""
    try:
        branch = int(str(driver_version).split(".", maxsplit=1)[0])
    except ValueError:
        return None
    known = [b for b in sorted(CUDA_BY_BRANCH) if b <= branch]
    return CUDA_BY_BRANCH[known[-1]] if known else None


def fake_digest(*parts):
    """A stable sha256 digest standing in for an image that was never built."""
    return "sha256:" + hashlib.sha256("/".join(str(p) for p in parts).encode("utf-8")).hexdigest()


def fake_hex(length, *parts):
    return hashlib.sha256("/".join(str(p) for p in parts).encode("utf-8")).hexdigest()[:length]


def dtk_image(build):
    """The release-payload driver-toolkit image reference for an RHCOS build."""
    return "quay.io/openshift-release-dev/ocp-v4.0-art-dev@" + fake_digest("driver-toolkit", build)


class NodeHardware(object):
    """What a node really is: instance type facts plus GPU facts.

    Resolved from the ``node.kubernetes.io/instance-type`` label (set by the cloud
    controller from the instance, so trusted) with optional sim annotations
    ``sim.gpuops.io/gpu-count`` / ``gpu-product`` for nodes not from the catalog
    (plain-Kubernetes profile, hand-made nodes).
    """

    def __init__(self, itype, gpu_count, gpu_product):
        self.instance_type = itype
        self.gpu_count = gpu_count
        self.gpu_product = gpu_product
        self.model = gpu_model(gpu_product) if gpu_product else None

    @property
    def has_gpu(self):
        return self.gpu_count > 0

    @property
    def gpu_memory_mib(self):
        """The nvidia.com/gpu.memory value (NVML total, MiB)."""
        if self.model and self.model.nvml_memory_mib:
            return self.model.nvml_memory_mib
        if self.instance_type and self.instance_type.gpu_memory_mib:
            return self.instance_type.gpu_memory_mib
        return 16384

    @classmethod
    def for_node(cls, node):
        meta = node.get("metadata") or {}
        labels = meta.get("labels") or {}
        annotations = meta.get("annotations") or {}
        itype = instance_type(
            labels.get("node.kubernetes.io/instance-type") or labels.get("beta.kubernetes.io/instance-type") or ""
        )
        count = itype.gpu_count if itype else 0
        product = itype.gpu_model if itype else None
        if ANN_GPU_COUNT in annotations:
            try:
                count = int(annotations[ANN_GPU_COUNT])
            except ValueError:
                pass
        if annotations.get(ANN_GPU_PRODUCT):
            product = annotations[ANN_GPU_PRODUCT]
        if count and not product:
            product = "Tesla-T4"
        return cls(itype, count, product if count else None)


# CPU features NFD reports (cpu-cpuid.*) by instance family: Intel Xeon
# (Skylake / Cascade Lake / Ice Lake: AVX-512) or AMD EPYC (AVX2 only). The list
# is the one in seed 004's node dump, minus the AVX-512 flags on AMD.
_INTEL_CPUID = (
    "ADX",
    "AESNI",
    "AVX",
    "AVX2",
    "AVX512BW",
    "AVX512CD",
    "AVX512DQ",
    "AVX512F",
    "AVX512VL",
    "AVX512VNNI",
    "FMA3",
)
_AMD_CPUID = ("ADX", "AESNI", "AVX", "AVX2", "FMA3")
_AMD_FAMILIES = ("g5", "g6", "gr6", "g6e", "p5", "p5e", "m5a", "m6a")
_BROADWELL_FAMILIES = ("p2", "p3", "g3", "g3s")  # Xeon E5 v4: no AVX-512


def cpuid_flags(hw):
    family = hw.instance_type.family if hw.instance_type else ""
    if family in _AMD_FAMILIES:
        return _AMD_CPUID
    if family in _BROADWELL_FAMILIES:
        return ("ADX", "AESNI", "AVX", "AVX2", "FMA3")
    return _INTEL_CPUID


def pci_devices(hw):
    """(class, vendor, device) tuples of the PCI devices NFD would see.

    AWS Nitro instances carry the Amazon ENA NIC (1d0f, class 0200; seeds 000 and
    004 show pci-1d0f.present); Xen-based p2/p3/g3 also expose a Cirrus Logic VGA
    (1013, class 0300; seed 000 shows pci-1013.present on a p3.2xlarge).
    """
    devices = []
    provider = hw.instance_type.provider if hw.instance_type else "aws"
    family = hw.instance_type.family if hw.instance_type else ""
    if provider == "aws":
        devices.append(("0200", "1d0f", "ec20"))
        if family in _BROADWELL_FAMILIES:
            devices.append(("0300", "1013", "00b8"))
    if hw.has_gpu:
        model = hw.model
        devices.append((model.pci_class if model else "0302", "10de", model.pci_device if model else "1eb8"))
    return devices


def os_image_url(build):
    """The osImageURL of a rendered MachineConfig for an RHCOS build (release payload image)."""
    return "quay.io/openshift-release-dev/ocp-v4.0-art-dev@" + fake_digest("rhel-coreos", build)


def rhcos_build_for_os_image_url(url):
    for build in rhcos_builds().values():
        if os_image_url(build.build) == url:
            return build
    return None
