"""The container_toolkit role's decisions (module_utils/container_toolkit.py): host files, runtime, verify lines."""

from ansible_collections.gpuops.cluster.plugins.module_utils import container_toolkit as ctk

FILES = [
    "container_toolkit_containerd_config",
    "container_toolkit_containerd_dropin",
    "container_toolkit_containerd_socket",
    "container_toolkit_crio_config",
    "container_toolkit_crio_dropin",
    "container_toolkit_install_dir",
]
GOOD = ["/etc/containerd/config.toml", "/etc/containerd/conf.d/99-nvidia.toml", "/run/containerd/containerd.sock"]
GOOD += ["/etc/crio/config.toml", "/etc/crio/crio.conf.d/99-nvidia.conf", "/usr/local/nvidia"]
LABELS = ["feature.node.kubernetes.io/pci-10de.present"]


def node(name, runtime):
    return {"name": name, "gpu": True, "container_runtime": runtime}


def plan(nodes, runtime="auto", openshift=True, ns_read=None, check=False):
    read = {"resources": [{"metadata": {"name": "gpu"}}]} if ns_read is None else ns_read
    return ctk.plan(nodes, runtime, openshift, "gpu", read, check, LABELS)


def test_host_files_name_the_group_once_with_the_bad_values():
    assert ctk.host_file_problems(FILES, GOOD) == []
    for bad in ("etc/containerd/config.toml", "/run/containerd/../containerd.sock", "/etc/crio/", "/", None):
        values = list(GOOD)
        values[2] = bad
        (msg,) = ctk.host_file_problems(FILES, values)
        assert msg.startswith("container_toolkit: container_toolkit_containerd_config, _containerd_dropin, "), msg
        assert "_crio_dropin and _install_dir must be absolute host paths of a file" in msg
        assert msg.endswith("got {0}.".format(bad if isinstance(bad, str) else repr(bad))), msg


def test_auto_takes_the_gpu_nodes_runtime_else_the_platform_default():
    p = plan([node("a", "cri-o://1.29.5"), node("b", "cri-o://1.29.5")])
    assert p["runtime"] == "crio" and p["problems"] == [] and p["skip"] is False
    assert p["node_runtimes"] == {"a": "cri-o://1.29.5", "b": "cri-o://1.29.5"}
    assert plan([node("a", "containerd://1.7.2")], openshift=True)["runtime"] == "containerd"
    assert plan([node("a", "docker://24")], openshift=False)["runtime"] == "containerd"
    assert plan([node("a", None)], openshift=True)["runtime"] == "crio"
    assert plan([node("a", "cri-o://1.29.5")], runtime="containerd")["runtime"] == "containerd"


def test_auto_with_two_runtimes_stops_naming_each_node_even_in_check_mode():
    nodes = [node("a", "cri-o://1.29.5"), node("b", "containerd://1.7.2")]
    (msg,) = plan(nodes, check=True)["problems"]
    assert msg.startswith("container_toolkit: container_toolkit_runtime auto: the GPU nodes run different")
    assert "(a cri-o://1.29.5, b containerd://1.7.2)" in msg
    assert plan(nodes, runtime="crio")["problems"] == []


def test_no_gpu_node_or_namespace_stops_but_check_mode_skips():
    missing = {"resources": []}
    problems = plan([], ns_read=missing)["problems"]
    assert problems[0].startswith("container_toolkit: no GPU node: no node carries an NFD NVIDIA PCI label")
    assert problems[1].startswith("container_toolkit: namespace gpu (container_toolkit_namespace) does not exist")
    p = plan([], ns_read=missing, check=True)
    assert p["problems"] == [] and p["skip"] is True and p["namespace_exists"] is False
    # A skipped read: this run's driver state made the namespace.
    assert plan([node("a", "")], ns_read={"skipped": True})["namespace_exists"] is True


def test_not_ready_lines_name_node_runtime_pod_state_and_the_installer_error():
    logs = [
        'time="t" level=info msg="Starting"',
        'time="t" level=error msg="error running nvidia-toolkit: unable to restart containerd"',
        'time="t" level=info msg="Shutting down"',
        "",
    ]
    bad = [
        {"node": "a", "pod": "tk-1", "state": "CrashLoopBackOff (restarts 2, last exit 1)", "log_lines": logs},
        {"node": "b", "pod": None, "state": "no pod"},
        {"node": "c", "pod": "tk-3", "state": "PodInitializing", "log_lines": ["waiting for the driver"]},
    ]
    lines = ctk.not_ready_lines(bad, {"a": "cri-o://1.29.5", "c": ""}, "containerd", "tk")
    assert lines[0] == (
        "container_toolkit: node a (runtime cri-o://1.29.5, toolkit configured for containerd): pod tk-1 "
        "CrashLoopBackOff (restarts 2, last exit 1): error running nvidia-toolkit: unable to restart containerd"
    )
    assert lines[1] == (
        "container_toolkit: node b (runtime unknown, toolkit configured for containerd): no tk pod: check "
        "container_toolkit_node_selector and container_toolkit_tolerations"
    )
    assert lines[2].endswith("pod tk-3 PodInitializing: waiting for the driver")
    assert ctk.not_ready_lines([], {}, "crio", "tk") == []
