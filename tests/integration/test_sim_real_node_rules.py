# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Break each real-node rule on purpose: the simulated node fails the pod as a real one would, and the
collection (gpuops.cluster.operand_pods, what the roles' verify steps use) names the node and the cause.

Each scenario runs on a GPU node of its own, with the GPU Operator-shaped manifests of
simopenshift.manifests and one thing broken; the rules and their upstream sources are in
simopenshift/images.py, gpustack.driver_run and runtime.py (docs/real-cluster.md has the table).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import sys
import tarfile
import uuid

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

from simopenshift import catalog, manifests  # noqa: E402
from simopenshift.kube import DAEMONSETS, NAMESPACES, NODES  # noqa: E402
from simopenshift.testing import Client, allow_privileged, ensure_runtime_class, make_gpu_node, wait_for  # noqa: E402

pytestmark = pytest.mark.integration
BUILD = catalog.cluster_build()


def drop_env(ds, name):
    container = ds["spec"]["template"]["spec"]["containers"][0]
    container["env"] = [e for e in container["env"] if e["name"] != name]
    return ds


# A secret in an operand's env (the exporter scenario's): it must not reach gpu_diagnose's result or archive.
SECRET = "hunter2-not-for-archives"


def with_env(ds, **env):
    container = ds["spec"]["template"]["spec"]["containers"][0]
    container.setdefault("env", []).extend({"name": k, "value": v} for k, v in env.items())
    return ds


def no_runtime_class(ds):
    ds["spec"]["template"]["spec"].pop("runtimeClassName")
    return ds


def bare_dtk_driver(ns, sel):
    # the review's D9: the Driver Toolkit plus modules, run as `nvidia-driver init`
    return manifests.driver(ns, image=catalog.dtk_image(BUILD.build), args=["init"], node_selector=sel)


# (id, GPU product, DaemonSets(ns, selector) -> list, operand whose pod is judged, text the verdict must hold, the
# failure signature gpu_diagnose names for the node from the logs and the kubelet's events - None: no known signature)
SCENARIOS = [
    ("driver-without-userspace", "Tesla-T4", lambda ns, sel: [bare_dtk_driver(ns, sel)], "nvidia-driver",
     'exec: "nvidia-driver": executable file not found in $PATH', None),
    ("open-modules-without-firmware-mounts", "Tesla-T4",
     lambda ns, sel: [manifests.driver(ns, node_selector=sel, firmware=False)], "nvidia-driver",
     "RmFetchGspRmImages: No firmware image found", "gsp_firmware_missing"),
    ("open-modules-on-volta", "Tesla-V100-SXM2-16GB",
     lambda ns, sel: [with_env(manifests.driver(ns, node_selector=sel), KERNEL_MODULE_TYPE="open")],
     "nvidia-driver", "not supported by open nvidia.ko", "open_modules_gpu_without_gsp"),
    ("exporter-without-nvidia-runtime", "Tesla-T4",
     lambda ns, sel: [manifests.driver(ns, node_selector=sel), manifests.toolkit(ns, node_selector=sel),
                      with_env(no_runtime_class(manifests.dcgm_exporter(ns, node_selector=sel)), REGISTRY_PASSWORD=SECRET)],
     "dcgm-exporter", "Cannot init NVML library; err: ERROR_LIBRARY_NOT_FOUND", "dcgm_nvml_library_not_found"),
    ("gfd-without-nvidia-runtime", "Tesla-T4",
     lambda ns, sel: [manifests.driver(ns, node_selector=sel), manifests.toolkit(ns, node_selector=sel),
                      no_runtime_class(manifests.gpu_feature_discovery(ns, node_selector=sel))],
     "gpu-feature-discovery", "failed to initialize NVML: unexpected failure calling nvml.Init", "gfd_nvml_init_failed"),
    ("toolkit-without-cdi-default-kind", "Tesla-T4",
     lambda ns, sel: [manifests.driver(ns, node_selector=sel),
                      drop_env(manifests.toolkit(ns, node_selector=sel),
                               "NVIDIA_CONTAINER_RUNTIME_MODES_CDI_DEFAULT_KIND"),
                      manifests.dcgm_exporter(ns, node_selector=sel)],
     "dcgm-exporter", "unresolvable CDI devices nvidia.com/gpu=all", "cdi_unresolvable_devices"),
    ("plugin-before-the-toolkit", "Tesla-T4",
     lambda ns, sel: [manifests.driver(ns, node_selector=sel), manifests.device_plugin(ns, node_selector=sel)],
     "nvidia-device-plugin", 'runtime handler nvidia', "crio_no_nvidia_runtime_handler"),
]  # fmt: skip


@pytest.fixture(scope="module")
def kube(cluster):
    if cluster.profile != "openshift":
        pytest.skip("the scenarios use the openshift profile's RHCOS nodes")
    client = Client(cluster.api)
    ensure_runtime_class(client)
    return client


@pytest.mark.parametrize("case", SCENARIOS, ids=[c[0] for c in SCENARIOS])
def test_the_node_refuses_and_the_collection_names_node_and_cause(kube, ansible_task, case, tmp_path):
    name, product, daemonsets, component, expected, signature = case
    tag = uuid.uuid4().hex[:6]
    ns = "rule-" + tag
    node = "rule-gpu-" + tag
    kube.create(NAMESPACES, {"metadata": {"name": ns}})
    allow_privileged(kube, ns)  # the manifests' privileged pods run as the default SA (SCC admission)
    try:
        # (no NFD labels on a hand-made node: gpu_diagnose finds it by its own GPU label)
        make_gpu_node(kube, node, {"sim-test": tag, "rule-gpu-" + tag: "true"}, product=product, build=BUILD)
        for ds in daemonsets(ns, {"sim-test": tag}):
            kube.create(DAEMONSETS, ds)

        def verdict():
            out = ansible_task(
                "gpuops.cluster.operand_pods",
                {
                    "namespace": ns,
                    "selector": "%s=%s" % (catalog.COMPONENT_LABEL, component),
                    "node_names": [node],
                    "log_lines": 40,
                },
            )
            assert not out.get("failed"), out
            (entry,) = out["nodes"]
            text = entry["state"] + "\n" + "\n".join(entry.get("log_lines") or [])
            return entry if expected in text and not entry["ready"] else None

        entry = wait_for(verdict, 60, what="%s: %r on %s" % (name, expected, node))
        assert entry["node"] == node and entry["pod"]

        # gpu_diagnose names the cause from the pod's log, its container state and the kubelet's events - or says
        # it knows none, and shows what it saw.
        def diagnosis():
            out = ansible_task(
                "gpuops.cluster.gpu_diagnose",
                {"namespaces": [ns], "log_lines": 40, "gpu_label": "rule-gpu-" + tag, "archive": archive},
            )
            assert not out.get("failed"), out
            assert SECRET not in json.dumps(out)
            (row,) = out["nodes"]
            assert row["node"] == node
            names = [f["signature"] for f in row["findings"]]
            return row if row["status"] == "problem" and (signature in names if signature else not names) else None

        archive = str(tmp_path / "case.tar.gz")
        row = wait_for(diagnosis, 30, what="%s: gpu_diagnose names %s on %s" % (name, signature, node))
        with tarfile.open(archive) as tar:
            text = "".join(tar.extractfile(m).read().decode() for m in tar.getmembers())
        assert SECRET not in text and ("REGISTRY_PASSWORD" in text) == (name == "exporter-without-nvidia-runtime")
        if signature is None:
            assert any(expected in line for line in row["evidence"]), row
    finally:
        kube.delete(NAMESPACES, ns)
        kube.delete(NODES, node)
