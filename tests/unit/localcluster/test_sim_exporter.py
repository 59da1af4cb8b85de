# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The simulated dcgm-exporter's exposition, configuration and listeners; the simulated pod network."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import socket
import sys
import urllib.request

import pytest
from simopenshift import exporter, mig, podsim
from simopenshift.gpustack import POWER_CAP_W
from simopenshift.testing import parse_exposition

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "localcluster")
)
import cluster  # noqa: E402  (tests/localcluster/cluster.py)

NEW = "nvcr.io/nvidia/k8s/dcgm-exporter:4.6.0-4.8.3-distroless"
OLD = "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.1-ubi9"
REAL_DEFAULT_FIELDS = [
    "DCGM_FI_DEV_SM_CLOCK",
    "DCGM_FI_DEV_MEM_CLOCK",
    "DCGM_FI_DEV_MEMORY_TEMP",
    "DCGM_FI_DEV_GPU_TEMP",
    "DCGM_FI_DEV_POWER_USAGE",
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
    "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_DEV_MEM_COPY_UTIL",
    "DCGM_FI_DEV_ENC_UTIL",
    "DCGM_FI_DEV_DEC_UTIL",
    "DCGM_FI_DEV_XID_ERRORS",
    "DCGM_FI_DEV_FB_FREE",
    "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_FB_RESERVED",
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
    "DCGM_FI_DEV_VGPU_LICENSE_STATUS",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_ROW_REMAP_FAILURE",
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
    "DCGM_FI_PROF_DRAM_ACTIVE",
    "DCGM_FI_PROF_PCIE_TX_BYTES",
    "DCGM_FI_PROF_PCIE_RX_BYTES",
]


def exporter_pod(image=NEW, env=None, volumes=None, mounts=None, host_network=False, name="nvidia-dcgm-exporter-x1"):
    container = {"name": "nvidia-dcgm-exporter", "image": image, "env": list(env or [])}
    if mounts:
        container["volumeMounts"] = mounts
    spec = {"containers": [container], "nodeName": "gpu-0"}
    if volumes:
        spec["volumes"] = volumes
    if host_network:
        spec["hostNetwork"] = True
    return {"metadata": {"name": name, "namespace": "gpu", "uid": "uid-" + name}, "spec": spec}


NODE_NAME_ENV = {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}


def render(pod=None, count=2, product="Tesla-T4", memory=15360, allocations=None, mig_layout=None):
    pod = pod or exporter_pod(env=[NODE_NAME_ENV, {"name": "DCGM_EXPORTER_KUBERNETES", "value": "true"}])
    config = exporter.container_config(pod, "gpu-0", lambda name: None)
    gpus = exporter.node_gpus("gpu-0", product, count, memory, mig_layout)
    return exporter.render(config, gpus, "550.90.07", allocations, now=1000.0, uptime=600.0)


def test_default_counters_are_the_real_files_in_its_order_with_help_and_type():
    families = parse_exposition(render())
    assert list(families) == REAL_DEFAULT_FIELDS
    assert families["DCGM_FI_DEV_GPU_TEMP"]["help"] == "GPU temperature (in C)."
    assert families["DCGM_FI_DEV_GPU_TEMP"]["type"] == "gauge"
    assert families["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]["type"] == "counter"
    assert "DCGM_FI_DRIVER_VERSION" not in families  # a label row, not a metric


def test_series_lines_have_the_exporters_label_order_and_value_format():
    text = render()
    line = next(x for x in text.splitlines() if x.startswith("DCGM_FI_DEV_GPU_TEMP{"))
    assert re.match(
        r'^DCGM_FI_DEV_GPU_TEMP\{gpu="0",UUID="GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",'
        r'pci_bus_id="00000000:00:1E.0",device="nvidia0",modelName="Tesla T4",hostname="gpu-0",'
        r'DCGM_FI_DRIVER_VERSION="550.90.07"\} \d+$',
        line,
    ), line
    power = next(x for x in text.splitlines() if x.startswith("DCGM_FI_DEV_POWER_USAGE{"))
    assert re.search(r"\} \d+\.\d{6}$", power), power  # a double: Go's %f
    xid = next(x for x in text.splitlines() if x.startswith("DCGM_FI_DEV_XID_ERRORS{"))
    assert xid.endswith(',err_code="0",err_msg="No Error"} 0')


def test_one_series_per_physical_gpu_with_realistic_values():
    families = parse_exposition(render(count=4, product="NVIDIA-A10G", memory=23028))
    for name in REAL_DEFAULT_FIELDS:
        assert len(families[name]["samples"]) == 4, name
        assert len(set(s[0]["UUID"] for s in families[name]["samples"])) == 4
    values = dict((name, [v for _labels, v in families[name]["samples"]]) for name in families)
    assert all(25 <= t <= 90 for t in values["DCGM_FI_DEV_GPU_TEMP"])
    assert all(0 < p <= POWER_CAP_W["NVIDIA-A10G"] for p in values["DCGM_FI_DEV_POWER_USAGE"])
    for i in range(4):
        total = (
            values["DCGM_FI_DEV_FB_USED"][i] + values["DCGM_FI_DEV_FB_FREE"][i] + values["DCGM_FI_DEV_FB_RESERVED"][i]
        )
        assert total == 23028
    assert set(s[0]["modelName"] for s in families["DCGM_FI_DEV_GPU_TEMP"]["samples"]) == {"NVIDIA A10G"}


def test_allocated_gpu_carries_pod_labels_and_works_harder():
    busy = {1: ("team-a", "train-0", "cuda")}
    families = parse_exposition(render(allocations=busy))
    idle, used = families["DCGM_FI_DEV_FB_USED"]["samples"]
    assert "pod" not in idle[0] and idle[1] == 0
    assert (used[0]["namespace"], used[0]["pod"], used[0]["container"]) == ("team-a", "train-0", "cuda")
    assert used[1] > 0
    free = families["DCGM_FI_DEV_FB_FREE"]["samples"][1][1]
    assert 0 < used[1] < 15360 and 0 < free < 15360 - used[1]
    temps = families["DCGM_FI_DEV_POWER_USAGE"]["samples"]
    assert temps[1][1] > temps[0][1] and temps[1][1] <= POWER_CAP_W["Tesla-T4"]
    # Without DCGM_EXPORTER_KUBERNETES the mapping is off, as in the real exporter.
    pod = exporter_pod(env=[NODE_NAME_ENV, {"name": "DCGM_EXPORTER_KUBERNETES", "value": "false"}])
    assert 'pod="train-0"' not in render(pod=pod, allocations=busy)


def test_allocation_map_follows_gpu_limits_in_order():
    pods = [
        {"metadata": {"namespace": "a", "name": "p1"}, "spec": {"containers": [{"name": "c", "resources": {}}]}},
        {
            "metadata": {"namespace": "a", "name": "p2"},
            "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "2"}}}]},
        },
    ]
    assert exporter.allocation_map(pods, 1) == {0: ("a", "p2", "c")}
    assert exporter.allocation_map(pods, 4) == {0: ("a", "p2", "c"), 1: ("a", "p2", "c")}


def test_mig_instances_share_their_gpus_uuid():
    layout = mig.MigState("mixed", mig.geometry("all-balanced", 40960), 2, 40960)
    families = parse_exposition(render(count=2, product="NVIDIA-A100-SXM4-40GB", memory=40960, mig_layout=layout))
    samples = families["DCGM_FI_DEV_GPU_TEMP"]["samples"]
    assert len(samples) == 2 * 4  # balanced: 2x 1g + 1x 2g + 1x 3g per GPU
    assert len(set(s[0]["UUID"] for s in samples)) == 2
    assert set(s[0]["GPU_I_PROFILE"] for s in samples) == {"1g.5gb", "2g.10gb", "3g.20gb"}
    assert sorted(s[0]["GPU_I_ID"] for s in samples if s[0]["gpu"] == "0") == ["1", "2", "3", "4"]


@pytest.mark.parametrize(
    "image, label",
    [
        (OLD, "Hostname"),
        ("nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-ubuntu22.04", "Hostname"),
        (NEW, "hostname"),
        ("nvcr.io/nvidia/k8s/dcgm-exporter:4.6.0-4.8.3-ubi9", "hostname"),
    ],
)
def test_host_label_follows_the_exporter_version(image, label):
    families = parse_exposition(render(pod=exporter_pod(image=image, env=[NODE_NAME_ENV])))
    labels = families["DCGM_FI_DEV_GPU_TEMP"]["samples"][0][0]
    assert labels[label] == "gpu-0"
    assert ({"Hostname", "hostname"} - {label}).isdisjoint(labels)


def test_host_label_value_node_name_pod_name_host_network_or_none():
    def host(pod):
        return exporter.container_config(pod, "gpu-0", lambda n: None).hostname

    assert host(exporter_pod(env=[NODE_NAME_ENV])) == "gpu-0"
    assert host(exporter_pod()) == "nvidia-dcgm-exporter-x1"  # the container's hostname: the pod's name
    assert host(exporter_pod(host_network=True)) == "gpu-0"
    assert host(exporter_pod(env=[NODE_NAME_ENV, {"name": "DCGM_EXPORTER_NO_HOSTNAME", "value": "true"}])) is None
    text = render(pod=exporter_pod(env=[{"name": "DCGM_EXPORTER_NO_HOSTNAME", "value": "1"}]))
    assert "ostname=" not in text


def test_listen_port_from_env_or_args():
    pod = exporter_pod(env=[{"name": "DCGM_EXPORTER_LISTEN", "value": ":9500"}])
    assert exporter.container_config(pod, "gpu-0", lambda n: None).port == 9500
    pod["spec"]["containers"][0]["args"] = ["-f", "/etc/dcgm-exporter/dcp-metrics-included.csv", "--address=:9600"]
    assert exporter.container_config(pod, "gpu-0", lambda n: None).port == 9600
    assert exporter.container_config(exporter_pod(), "gpu-0", lambda n: None).port == 9400


CUSTOM = """# mine
DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (in C).
DCGM_FI_DEV_FB_USED, gauge, Framebuffer memory used (in MiB).
DCGM_FI_DRIVER_VERSION, label, Driver Version
"""


def test_counters_from_a_mounted_config_map_are_served_exactly():
    pod = exporter_pod(
        env=[
            NODE_NAME_ENV,
            {"name": "DCGM_EXPORTER_COLLECTORS", "value": "/etc/dcgm-exporter/custom/dcgm-metrics.csv"},
        ],
        volumes=[{"name": "cfg", "configMap": {"name": "metrics"}}],
        mounts=[{"name": "cfg", "mountPath": "/etc/dcgm-exporter/custom"}],
    )
    config = exporter.container_config(
        pod, "gpu-0", lambda name: {"dcgm-metrics.csv": CUSTOM} if name == "metrics" else None
    )
    families = parse_exposition(exporter.render(config, exporter.node_gpus("gpu-0", "Tesla-T4", 1, 15360), "550.90.07"))
    assert list(families) == ["DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_FB_USED"]
    assert families["DCGM_FI_DEV_FB_USED"]["samples"][0][0]["DCGM_FI_DRIVER_VERSION"] == "550.90.07"
    # subPath mount, items remapping
    pod["spec"]["volumes"][0]["configMap"]["items"] = [{"key": "csv", "path": "dcgm-metrics.csv"}]
    config = exporter.container_config(pod, "gpu-0", lambda name: {"csv": CUSTOM})
    assert [c.field for c in config.counters] == [
        "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_FB_USED",
        "DCGM_FI_DRIVER_VERSION",
    ]
    # The ConfigMap (or its key) missing: the exporter cannot open the file and exits.
    with pytest.raises(ValueError, match="no such file"):
        exporter.container_config(pod, "gpu-0", lambda name: None)
    pod = exporter_pod(env=[{"name": "DCGM_EXPORTER_COLLECTORS", "value": "/nowhere/x.csv"}])
    with pytest.raises(ValueError, match="no such file"):
        exporter.container_config(pod, "gpu-0", lambda name: None)


def test_malformed_counters_are_refused():
    with pytest.raises(ValueError, match="line 1"):
        exporter.parse_counters("DCGM_FI_DEV_GPU_TEMP gauge\n")
    with pytest.raises(ValueError, match="unknown Prometheus type"):
        exporter.parse_counters("DCGM_FI_DEV_GPU_TEMP, gaueg, x\n")


@pytest.mark.parametrize(
    "text, needle",
    [
        ("X 1\n", "outside its family"),
        ("# HELP X x\nX 1\n", "outside its family"),
        ('# HELP X x\n# TYPE X gauge\nX{a="1"} 1\nX{a="1"} 2\n', "duplicate series"),
        ('# HELP X x\n# TYPE X gauge\nX{a="1",a="2"} 1\n', "repeated label"),
        ('# HELP X x\n# TYPE X gauge\nX{a="1",} 1\n', "trailing comma"),
        ("# HELP X x\n# TYPE X gauge\nX 1", "newline"),
        ("# HELP X x\n# TYPE X gauge\nX one\n", "could not convert"),
    ],
)
def test_strict_parser_refuses_broken_expositions(text, needle):
    with pytest.raises(ValueError, match=needle):
        parse_exposition(text)


def test_listener_serves_metrics_and_health_and_stops():
    listeners = exporter.Listeners()
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    assert listeners.ensure("uid-1", "gpu-0", "127.0.0.1", port, render)
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as resp:
            assert resp.headers["Content-Type"] == exporter.CONTENT_TYPE
            assert "DCGM_FI_DEV_GPU_TEMP{" in resp.read().decode()
        with urllib.request.urlopen("http://127.0.0.1:%d/health" % port, timeout=5) as resp:
            assert resp.read() == b"OK"
        assert listeners.keys_on("gpu-0") == ["uid-1"]
        # A second pod cannot take the same address: reported, not raised.
        assert not listeners.ensure("uid-2", "gpu-0", "127.0.0.1", port, lambda: "")
    finally:
        listeners.stop_node("gpu-0")
    assert listeners.keys_on("gpu-0") == []
    with pytest.raises(OSError):
        urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=2)


def test_pod_network_gives_distinct_stable_addresses():
    net = podsim.PodNetwork("10.129.8.0/22")
    pods = [{"metadata": {"uid": "u%d" % i, "name": "p%d" % i}} for i in range(300)]
    ips = [net.address(p) for p in pods]
    assert len(set(ips)) == 300 and all(net.contains(ip) for ip in ips)
    assert all(not ip.endswith((".8.0", ".11.255")) for ip in ips)
    assert net.address(pods[0]) == ips[0]
    # A restarted controller keeps the address a pod already has.
    fresh = podsim.PodNetwork("10.129.8.0/22")
    assert fresh.address({"metadata": {"uid": "u7"}, "status": {"podIP": ips[7]}}) == ips[7]
    net.release(pods[0])
    assert ips[0] not in net.assigned
    # Without a network: the historical unroutable hash.
    assert podsim.PodNetwork().address(pods[0]).startswith("10.128.")


def test_pod_network_slots_are_distinct_per_cluster_and_stale_claims_are_reused(tmp_path):
    assert cluster.podnet_cidr(0) == "10.128.0.0/22"
    assert cluster.podnet_cidr(255) == "10.131.252.0/22"
    with pytest.raises(ValueError):
        cluster.podnet_cidr(256)
    alive = {"/w/a": True, "/w/b": True}
    a = cluster.claim_podnet_slot("/w/a", str(tmp_path), alive=lambda w: alive.get(w, False))
    b = cluster.claim_podnet_slot("/w/b", str(tmp_path), alive=lambda w: alive.get(w, False))
    assert a != b
    assert cluster.claim_podnet_slot("/w/a", str(tmp_path), alive=lambda w: True) == a  # idempotent
    cluster.release_podnet_slot("/w/b", a, str(tmp_path))  # not b's: untouched
    assert (tmp_path / ("slot-%03d" % a)).read_text() == "/w/a"
    # /w/a stopped without `down`: its slot is free for a newcomer that hashes there.
    alive["/w/a"] = False
    for n in range(cluster.PODNET_SLOTS):
        if n not in (a, b):
            (tmp_path / ("slot-%03d" % n)).write_text("/w/busy")
    c = cluster.claim_podnet_slot("/w/c", str(tmp_path), alive=lambda w: w != "/w/a")
    assert c == a and (tmp_path / ("slot-%03d" % a)).read_text() == "/w/c"
    with pytest.raises(RuntimeError, match="no free pod network slot"):
        cluster.claim_podnet_slot("/w/d", str(tmp_path), alive=lambda w: True)


def test_the_monitoring_roles_daemonset_shape_subpath_counters_and_new_host_label():
    """Counters file mounted by subPath (as the monitoring role and the GPU Operator do), image 4.6.0-4.8.3."""
    pod = exporter_pod(
        env=[
            {"name": "DCGM_EXPORTER_LISTEN", "value": ":9400"},
            {"name": "DCGM_EXPORTER_KUBERNETES", "value": "true"},
            {"name": "DCGM_EXPORTER_COLLECTORS", "value": "/etc/dcgm-exporter/dcgm-metrics.csv"},
            {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}},
        ],
        volumes=[
            {"name": "pod-gpu-resources", "hostPath": {"path": "/var/lib/kubelet/pod-resources"}},
            {"name": "counters", "configMap": {"name": "nvidia-dcgm-exporter-counters", "defaultMode": 420}},
        ],
        mounts=[
            {"name": "pod-gpu-resources", "mountPath": "/var/lib/kubelet/pod-resources", "readOnly": True},
            {
                "name": "counters",
                "mountPath": "/etc/dcgm-exporter/dcgm-metrics.csv",
                "subPath": "dcgm-metrics.csv",
                "readOnly": True,
            },
        ],
    )
    maps = {"nvidia-dcgm-exporter-counters": {"dcgm-metrics.csv": CUSTOM}}
    config = exporter.container_config(pod, "gpu-1", maps.get)
    families = parse_exposition(exporter.render(config, exporter.node_gpus("gpu-1", "NVIDIA-A10G", 1, 23028), "580.0"))
    assert list(families) == ["DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_FB_USED"]
    labels = families["DCGM_FI_DEV_GPU_TEMP"]["samples"][0][0]
    assert labels["hostname"] == "gpu-1" and "Hostname" not in labels and config.port == 9400
