# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The container runtime of a GPU node as the NVIDIA container toolkit left it, and what it lets pods do (pure).

A pod gets the NVIDIA driver's libraries (NVML, libcuda) and nvidia-smi only through the ``nvidia`` runtime
handler the toolkit installs (selected by ``runtimeClassName``, or made the default) or through CDI devices the
runtime injects; otherwise it has the device nodes at most. Each rule names its upstream source:

* **handler**: the toolkit writes its runtime into a drop-in file. CRI-O reads ``/etc/crio/crio.conf.d`` by
  itself. containerd reads a drop-in only if its config imports it: the installer adds ``imports`` to the host
  config.toml with the path it was given, which is the CONTAINER path unless ``RUNTIME_DROP_IN_CONFIG_HOST_PATH``
  says the host path (NVIDIA/nvidia-container-toolkit pkg/config/engine/containerd/config_drop_in.go, PR #1303);
  containerd's own default config imports ``/etc/containerd/conf.d/*.toml`` from 2.2 on (containerd PR #12323).
  Without the handler: ``failed to get sandbox runtime: no runtime for "nvidia" is configured`` (containerd
  internal/cri/server/podsandbox) / ``failed to find runtime handler nvidia`` (CRI-O server/sandbox_run_linux.go).
* **CDI kind**: in ``cdi`` mode the nvidia runtime turns an unqualified ``NVIDIA_VISIBLE_DEVICES`` value into
  ``<default kind>=<value>`` (NVIDIA/nvidia-container-toolkit internal/modifier/cdi.go; default kind
  ``nvidia.com/gpu``, api/config/v1/config.go) while the installer writes only a ``management.nvidia.com/gpu=all``
  spec (cmd/nvidia-ctk-installer/toolkit/toolkit.go): ``unresolvable CDI devices nvidia.com/gpu=all`` unless
  ``NVIDIA_CONTAINER_RUNTIME_MODES_CDI_DEFAULT_KIND=management.nvidia.com/gpu`` (GPU Operator
  assets/state-container-toolkit/0500_daemonset.yaml).
* **device list strategy**: GPUs the device plugin allocates reach a container as ``NVIDIA_VISIBLE_DEVICES=<uuid>``
  (``envvar``) or as CDI device names of the plugin's own spec (``cdi-annotations`` / ``cdi-cri``;
  NVIDIA/k8s-device-plugin internal/plugin/server.go, kind ``k8s.device-plugin.nvidia.com/gpu``, written into
  the host's /var/run/cdi). With the toolkit in cdi mode a UUID under ``envvar`` resolves against the management
  kind, which has no such device.
* **read-only root**: CDI's ``update-ldcache`` createContainer hook writes /etc/ld.so.cache in the container's
  root filesystem (kserve/kserve#5711).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

HANDLER = "nvidia"
MANAGEMENT_KIND = "management.nvidia.com/gpu"
DEFAULT_KIND = "nvidia.com/gpu"
PLUGIN_KIND = "k8s.device-plugin.nvidia.com/gpu"
CONTAINERD_CONFD_DEFAULT = (2, 2)
# Where the toolkit's installer writes the runtime's drop-in by default inside its container (GO manifests).
CONTAINER_DROPIN_PREFIX = "/runtime/config-dir.d/"


def env_of(container, name):
    for entry in container.get("env") or []:
        if entry.get("name") == name:
            return entry.get("value")
    return None


def pod_env(pod, name):
    for container in (pod.get("spec") or {}).get("containers") or []:
        value = env_of(container, name)
        if value is not None:
            return value
    return None


def runtime_version(node):
    """(name, (major, minor)) from status.nodeInfo.containerRuntimeVersion, e.g. ('containerd', (1, 7))."""
    text = ((node.get("status") or {}).get("nodeInfo") or {}).get("containerRuntimeVersion") or ""
    name, _sep, version = text.partition("://")
    match = re.match(r"v?(\d+)\.(\d+)", version)
    return {"cri-o": "crio"}.get(name, name), (int(match.group(1)), int(match.group(2))) if match else (0, 0)


class NodeRuntime(object):
    """What the node's runtime can do for GPU pods."""

    def __init__(self, handler=False, why=None, cdi=False, default_kind=DEFAULT_KIND, default_runtime=False,
                 runtime="containerd", native_cdi=False):  # fmt: skip
        self.handler = handler  # the runtime has an "nvidia" handler
        self.why = why  # why not
        self.cdi = cdi  # the nvidia runtime runs in cdi mode
        self.default_kind = default_kind
        self.default_runtime = default_runtime  # nvidia is the runtime's default
        self.runtime = runtime
        self.native_cdi = native_cdi  # the runtime injects CDI devices passed over the CRI itself


def host_toolkit():
    """A node whose image brings the driver and the toolkit (cloud GPU images): nvidia is the default runtime."""
    return NodeRuntime(True, cdi=False, default_runtime=True, native_cdi=True)


def from_toolkit(node, container):
    """The node's runtime after the toolkit container (its env, as the installer reads it) configured it."""
    runtime, version = runtime_version(node)
    wanted = env_of(container, "RUNTIME") or runtime
    mode = (env_of(container, "NVIDIA_CONTAINER_RUNTIME_MODE") or "").lower()
    cdi_enabled = (env_of(container, "CDI_ENABLED") or "false").lower() == "true"
    state = NodeRuntime(
        cdi=mode == "cdi" and cdi_enabled,
        default_kind=env_of(container, "NVIDIA_CONTAINER_RUNTIME_MODES_CDI_DEFAULT_KIND") or DEFAULT_KIND,
        default_runtime=(env_of(container, "NVIDIA_RUNTIME_SET_AS_DEFAULT") or "false").lower() == "true",
        runtime=runtime,
        # CRI-O >= 1.23 and containerd >= 2.0 (enable_cdi default) inject CDI devices from the CRI themselves.
        native_cdi=runtime == "crio" or (runtime == "containerd" and version >= (2, 0)),
    )
    if wanted != runtime:
        state.why = "the toolkit configured %s, the node runs %s" % (wanted, runtime)
        return state
    if runtime == "containerd":
        dropin = env_of(container, "RUNTIME_DROP_IN_CONFIG") or CONTAINER_DROPIN_PREFIX + "99-nvidia.toml"
        host_path = env_of(container, "RUNTIME_DROP_IN_CONFIG_HOST_PATH")
        imported = bool(host_path) or not dropin.startswith(CONTAINER_DROPIN_PREFIX)
        if not imported and version < CONTAINERD_CONFD_DEFAULT:
            state.why = (
                "containerd %d.%d imports the toolkit's drop-in by its container path %s (no "
                "RUNTIME_DROP_IN_CONFIG_HOST_PATH): the nvidia handler is never loaded" % (version + (dropin,))
            )
            return state
    state.handler = True
    return state


def sandbox_error(state):
    if state.runtime == "crio":
        return (
            "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to find runtime handler %s from "
            "runtime list map[crun:0xc000 runc:0xc001]" % HANDLER
        )
    return (
        "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "
        '"%s" is configured' % HANDLER
    )


def cdi_error(devices):
    return (
        "failed to create containerd task: failed to create shim task: OCI runtime create failed: could not apply "
        "required modification to OCI specification: error modifying OCI spec: failed to inject CDI devices: "
        "unresolvable CDI devices %s: unknown" % ", ".join(devices)
    )


READ_ONLY_ROOT_ERROR = (
    "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: "
    "unable to start container process: error during container init: error running createContainer hook #1: exit "
    'status 1, stdout: , stderr: time="2026-01-01T00:00:00Z" level=error msg="failed to update ldcache: open '
    '/etc/ld.so.cache~: read-only file system": unknown'
)


class Block(object):
    """Why a container does not run: ``sandbox`` (pod stays ContainerCreating), ``create`` (CreateContainerError)
    or ``crash`` (the process starts and exits: CrashLoopBackOff with ``log``)."""

    def __init__(self, kind, message, log=None):
        self.kind = kind
        self.message = message
        self.log = log


def uses_nvidia_runtime(pod, state, handlers):
    """Whether the pod's containers run under the nvidia runtime (``handlers``: RuntimeClass name -> handler)."""
    name = (pod.get("spec") or {}).get("runtimeClassName")
    if name:
        return handlers.get(name) == HANDLER
    return state.default_runtime


def _unresolvable(values, state):
    """The CDI names an unqualified NVIDIA_VISIBLE_DEVICES resolves to that no spec provides."""
    bad = []
    for value in values:
        if not value or value in ("void", "none") or "=" in value:
            continue
        if state.default_kind == MANAGEMENT_KIND and value == "all":
            continue
        bad.append("%s=%s" % (state.default_kind, value))
    return bad


NVML_MISSING_LOG = (
    "Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND\n"
    "If this is a GPU node, did you set the docker default runtime to `nvidia`?\n"
    "You can check the prerequisites at: https://github.com/NVIDIA/k8s-device-plugin#prerequisites\n"
)


# What each operand logs when libnvidia-ml.so.1 is not in its container (no nvidia runtime, no driver root):
# GPU feature discovery (NVIDIA/gpu-feature-discovery#25) and dcgm-exporter (DCGM's NVML load, level ERROR).
GFD_NVML_MISSING_LOG = (
    "gpu-feature-discovery: 2022/08/30 02:07:24 Start running\n"
    "gpu-feature-discovery: 2022/08/30 02:07:24 Exiting\n"
    "gpu-feature-discovery: 2022/08/30 02:07:24 Error: error creating NVML labeler: failed to initialize NVML: "
    "unexpected failure calling nvml.Init: error opening libnvidia-ml.so.1: libnvidia-ml.so.1: cannot open shared "
    "object file: No such file or directory\n"
)
DCGM_NVML_MISSING_LOG = (
    'time=2026-09-19T20:06:59.540Z level=INFO msg="Starting dcgm-exporter"\n'
    'time=2026-09-19T20:06:59.547Z level=ERROR msg="Cannot init NVML library; err: ERROR_LIBRARY_NOT_FOUND"\n'
)


def nvml_missing_log(component):
    """The operand's own log when it finds no NVML (the device plugin's is NVML_MISSING_LOG)."""
    return {"gpu-feature-discovery": GFD_NVML_MISSING_LOG, "dcgm-exporter": DCGM_NVML_MISSING_LOG}.get(
        component, NVML_MISSING_LOG
    )


def host_mounts(pod, container):
    """{mount path in the container: host path} of the container's hostPath volumes."""
    volumes = dict(
        (v.get("name"), (v.get("hostPath") or {}).get("path"))
        for v in (pod.get("spec") or {}).get("volumes") or []
        if v.get("hostPath")
    )
    return dict(
        (m.get("mountPath"), volumes[m.get("name")])
        for m in container.get("volumeMounts") or []
        if m.get("name") in volumes
    )


def has_driver_root(pod, container):
    """The device plugin finds libnvidia-ml under /driver-root when the driver root is mounted there."""
    return host_mounts(pod, container).get("/driver-root") in ("/run/nvidia/driver", "/")


def operand_block(pod, state, handlers, component):
    """Why an NVIDIA operand (device plugin, GFD, dcgm-exporter) cannot use NVML on this node, or None.

    The plugin also finds NVML under /driver-root (NVIDIA/k8s-device-plugin cmd/nvidia-device-plugin/main.go);
    GFD (cmd/gpu-feature-discovery/main.go) and dcgm-exporter only through the runtime.
    """
    container = ((pod.get("spec") or {}).get("containers") or [{}])[0]
    if uses_nvidia_runtime(pod, state, handlers):
        if not state.handler:
            return Block("sandbox", sandbox_error(state))
        if state.cdi:
            visible = env_of(container, "NVIDIA_VISIBLE_DEVICES")
            # the operand images set NVIDIA_VISIBLE_DEVICES=all themselves (k8s-device-plugin, dcgm-exporter)
            bad = _unresolvable((visible if visible is not None else "all").split(","), state)
            if bad:
                return Block("create", cdi_error(bad))
        return None
    if component == "nvidia-device-plugin" and has_driver_root(pod, container):
        return None
    return Block("crash", "NVML not found", nvml_missing_log(component))


def plugin_strategy(plugin_pod):
    container = ((plugin_pod or {}).get("spec") or {}).get("containers") or [{}]
    return [s.strip() for s in (env_of(container[0], "DEVICE_LIST_STRATEGY") or "envvar").split(",")]


def plugin_writes_cdi(plugin_pod):
    """The plugin's CDI spec reaches the host only if CDI is on and /var/run/cdi is mounted from the host."""
    if not plugin_pod:
        return False
    container = ((plugin_pod.get("spec") or {}).get("containers") or [{}])[0]
    if (env_of(container, "CDI_ENABLED") or "false").lower() != "true":
        return False
    return "/var/run/cdi" in host_mounts(plugin_pod, container).values()


def workload_block(pod, state, handlers, plugin_pod, requested):
    """Why a GPU workload (a pod with a GPU limit, or a validation pod) gets no working GPU, or None."""
    nvidia = uses_nvidia_runtime(pod, state, handlers)
    if nvidia and not state.handler:
        return Block("sandbox", sandbox_error(state))
    strategies = plugin_strategy(plugin_pod)
    cdi_names = requested and any(s in ("cdi-annotations", "cdi-cri") for s in strategies)
    injected_by_cdi = False
    if cdi_names:
        if not plugin_writes_cdi(plugin_pod):
            return Block("create", cdi_error(["%s=GPU-0" % PLUGIN_KIND]))
        if nvidia or state.native_cdi:
            injected_by_cdi = True
    if not injected_by_cdi:
        if not nvidia:
            return Block("crash", "no NVIDIA libraries in the container (not run by the nvidia runtime)")
        if state.cdi:
            values = ["GPU-0"] if requested else [pod_env(pod, "NVIDIA_VISIBLE_DEVICES") or "all"]
            bad = _unresolvable(values, state)
            if bad:
                return Block("create", cdi_error(bad))
        injected_by_cdi = state.cdi
    if injected_by_cdi:
        for container in (pod.get("spec") or {}).get("containers") or []:
            if ((container.get("securityContext") or {}).get("readOnlyRootFilesystem")) is True:
                return Block("create", READ_ONLY_ROOT_ERROR)
    return None


def waits_for_dependency(pod):
    """An init container that waits (a shell ``until`` loop or the validator) for the driver / toolkit."""
    for container in (pod.get("spec") or {}).get("initContainers") or []:
        text = " ".join((container.get("command") or []) + (container.get("args") or []))
        if "until " in text or "nvidia-validator" in text:
            return True
    return False
