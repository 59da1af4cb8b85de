# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""A node's runtime config files in a temp dir, configured by the toolkit installer's own code with the role's env.

Layout (no chroot, no mount namespace, nothing restarted):

- ``<tmp>/host`` is the node's root: the runtime reads ``<tmp>/host/etc/containerd/config.toml``.
- ``<tmp>/ctr`` is the installer container's view: each hostPath volume of the rendered DaemonSet is a symlink
  ``<tmp>/ctr/<mountPath> -> <tmp>/host/<hostPath>`` (a bind mount). The env values that are container paths get the
  ``<tmp>/ctr`` prefix, the one that is a host path (RUNTIME_DROP_IN_CONFIG_HOST_PATH) gets ``<tmp>/host``.
- After the installer ran, ``<tmp>/ctr`` is deleted: the container's mounts are not visible on the host, so a
  container path written into the host config (the T6 bug: ``imports = ["/runtime/config-dir.d/*.toml"]``) points
  at nothing, as on a node. Absolute paths in the runtime's own default config (containerd 2.2's
  ``imports = ['/etc/containerd/conf.d/*.toml']``) get the ``<tmp>/host`` prefix: only the temp root is rewritten.

Three env values are the oracle's, not the role's: RUNTIME_RESTART_MODE=none (nothing to signal), and
HOST_ROOT_MOUNT=/ with RUNTIME_EXECUTABLE_PATH=<wrapper>: the installer's ``command`` config source runs
``chroot /host containerd config dump`` on a node (NCT pkg/config/engine/containerd/containerd.go
CommandLineSource), here the wrapper runs the containerd under test on the temp host config, which is what the
node's containerd reads (its default --config, /etc/containerd/config.toml).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import shutil
import subprocess
import tomllib

import role_render

INSTALLER = "nvidia-container-toolkit-ctr"
# Env values that are paths inside the installer container (NCT cmd/nvidia-ctk-installer/container/runtime/runtime.go
# Flags: RUNTIME_CONFIG/CONTAINERD_CONFIG, RUNTIME_DROP_IN_CONFIG, CONTAINERD_SOCKET; crio.go: CRIO_HOOKS_DIR).
CONTAINER_PATH_ENV = {
    "RUNTIME_CONFIG",
    "CONTAINERD_CONFIG",
    "CRIO_CONFIG",
    "RUNTIME_DROP_IN_CONFIG",
    "CONTAINERD_SOCKET",
    "CRIO_HOOKS_DIR",
}
# "When running in a container, this is the path to the drop-in config on the host" (runtime.go).
HOST_PATH_ENV = {"RUNTIME_DROP_IN_CONFIG_HOST_PATH"}
# Stand-ins for the preflight's cluster reads (role_render): one GPU node, the namespace exists.
NS = {"resources": [{"metadata": {"name": "nvidia-gpu-driver"}}]}


def installer_pod(runtime, **inputs):
    """(env, [(mountPath, hostPath)]) of the installer container the container_toolkit role renders."""
    scheme = {"containerd": "containerd://2.2.9", "crio": "cri-o://1.34.0"}[runtime]
    results = {"__container_toolkit_ns": NS}
    base = {
        "preflight_platform": {"openshift": runtime == "crio"},
        "preflight_gpu_nodes": [{"name": "gpu-0", "gpu": True, "container_runtime": scheme}],
        "container_toolkit_runtime": runtime,
    }
    base.update(inputs)
    _facts, objs = role_render.render("container_toolkit", base, results)
    ds = role_render.find(objs, "DaemonSet")
    ctr = role_render.container(ds, INSTALLER)
    volumes = {v["name"]: v for v in ds["spec"]["template"]["spec"]["volumes"]}
    mounts = []
    for m in ctr.get("volumeMounts") or []:
        host = (volumes[m["name"]].get("hostPath") or {}).get("path")
        if host and host != "/":
            mounts.append((m["mountPath"], host))
    return role_render.env_of(ctr), mounts


class Node(object):
    def __init__(self, tmp, mounts):
        self.tmp = str(tmp)
        self.host = os.path.join(self.tmp, "host")
        self.ctr = os.path.join(self.tmp, "ctr")
        self.mounts = mounts
        for ctr_path, host_path in mounts:
            # hostPath type DirectoryOrCreate: the kubelet makes the host directory.
            os.makedirs(self.in_host(host_path), exist_ok=True)
            link = self.in_ctr(ctr_path)
            os.makedirs(os.path.dirname(link), exist_ok=True)
            os.symlink(self.in_host(host_path), link)

    def in_host(self, path):
        return self.host + path

    def in_ctr(self, path):
        return self.ctr + path

    def unmap(self, text):
        """A path (or text) written by the programs, as it reads on a node."""
        return text.replace(self.host, "").replace(self.ctr, "<container>")

    def env(self, env, writes):
        """The installer's env with its paths mapped. ``writes``: env names of the files it will write; each must be set
        (else the installer falls back to its defaults, real paths of this machine, e.g. /etc/containerd/config.toml).
        """
        unset = [names for names in writes if not any(env.get(n) for n in names)]
        assert not unset, (
            "the role's env sets none of %s: the installer would write its default path on this machine" % unset
        )
        out = {}
        for name, value in env.items():
            if value is None:
                continue
            if name in CONTAINER_PATH_ENV:
                out[name] = self.in_ctr(value)
            elif name in HOST_PATH_ENV:
                out[name] = self.in_host(value)
            elif value.startswith("/runtime/"):
                raise AssertionError("env %s=%s is a container path the oracle does not map" % (name, value))
            else:
                out[name] = value
        return out

    def leave_container(self):
        shutil.rmtree(self.ctr)


def default_config(containerd, node):
    """`containerd config default` of this version, its absolute imports moved under the temp root."""
    text = subprocess.run([containerd, "config", "default"], stdout=subprocess.PIPE, text=True, check=True).stdout
    imports = tomllib.loads(text).get("imports") or []
    moved = [node.in_host(p) if p.startswith("/") else p for p in imports]
    text, n = re.subn(r"(?m)^imports = .*$", "imports = " + json.dumps(moved), text, count=1)
    assert n == 1, "no imports line in the default config"
    return text, imports


def containerd_wrapper(node, containerd, config):
    path = os.path.join(node.tmp, "bin", "containerd")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write('#!/bin/sh\nexec %s --config %s "$@"\n' % (containerd, config))
    os.chmod(path, 0o755)
    return path


def run_installer(ctkinstaller, env):
    run_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    run_env.update(env)
    proc = subprocess.run(
        [ctkinstaller], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=run_env, check=False
    )
    assert proc.returncode == 0, "the installer's runtime setup failed:\n" + proc.stdout
    return proc.stdout


def cri_runtime_plugin(config):
    """The CRI plugin section holding containerd.runtimes (config version 3: io.containerd.cri.v1.runtime, else
    io.containerd.grpc.v1.cri; NCT pkg/config/engine/containerd/containerd.go criRuntimePluginName)."""
    plugins = config.get("plugins") or {}
    if config.get("version", 1) >= 3:
        return plugins.get("io.containerd.cri.v1.runtime") or {}
    return plugins.get("io.containerd.grpc.v1.cri") or {}


def configure_containerd(tmp, containerd, ctkinstaller, env, mounts):
    """Start from the version's default config, run the installer's runtime setup, return what containerd loads.

    Returns a dict: ``dump`` (the parsed `containerd config dump`), ``top_level`` / ``drop_in`` (files on the host,
    text, paths un-mapped), ``imports_written`` (the top-level config's imports, un-mapped), ``log``.
    """
    node = Node(tmp, mounts)
    # The host file behind the installer's --config (RUNTIME_CONFIG first, then CONTAINERD_CONFIG: runtime.go).
    ctr_config = env.get("RUNTIME_CONFIG") or env["CONTAINERD_CONFIG"]
    host_dir = dict(mounts).get(os.path.dirname(ctr_config))
    assert host_dir, "the DaemonSet mounts no host directory at %s: %r" % (os.path.dirname(ctr_config), mounts)
    config_host = node.in_host(os.path.join(host_dir, os.path.basename(ctr_config)))
    text, default_imports = default_config(containerd, node)
    with open(config_host, "w") as f:
        f.write(text)
    # runtime.go Flags: --config from RUNTIME_CONFIG or CONTAINERD_CONFIG (the top-level config is rewritten),
    # --drop-in-config from RUNTIME_DROP_IN_CONFIG.
    run_env = node.env(env, [("RUNTIME_CONFIG", "CONTAINERD_CONFIG"), ("RUNTIME_DROP_IN_CONFIG",)])
    run_env.update(
        {
            "RUNTIME_RESTART_MODE": "none",
            "HOST_ROOT_MOUNT": "/",
            "RUNTIME_EXECUTABLE_PATH": containerd_wrapper(node, containerd, config_host),
        }
    )
    log = run_installer(ctkinstaller, run_env)
    node.leave_container()
    with open(config_host) as f:
        top_level = f.read()
    # The drop-in, where the installer wrote it: the host directory mounted at the drop-in's container directory.
    drop_in_dir = dict(mounts)[os.path.dirname(env["RUNTIME_DROP_IN_CONFIG"])]
    drop_in_path = node.in_host(os.path.join(drop_in_dir, os.path.basename(env["RUNTIME_DROP_IN_CONFIG"])))
    drop_in = None
    if os.path.exists(drop_in_path):
        with open(drop_in_path) as f:
            drop_in = f.read()
    dump = subprocess.run(
        [containerd, "--config", config_host, "config", "dump"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    assert dump.returncode == 0, "containerd config dump failed: " + dump.stderr
    return {
        "dump": tomllib.loads(dump.stdout),
        "top_level": node.unmap(top_level),
        "drop_in": node.unmap(drop_in) if drop_in is not None else None,
        "imports_written": [node.unmap(p) for p in tomllib.loads(top_level).get("imports") or []],
        "default_imports": default_imports,
        "log": node.unmap(log),
    }


def configure_crio(tmp, ctkinstaller, env, mounts):
    """Run the installer's CRI-O setup (config mode) with the role's env; return the files it left on the host.

    No CRI-O binary here (see test_oracle_container_toolkit.py): the installer's ``command`` source
    (``crio status config``) gets a stand-in that fails, so it reads the config file, as with a stopped CRI-O.
    Returns {host path: text} of every file under the temp host root, and the installer log.
    """
    # Hook mode writes to the installer's default hooks dir, a container path the oracle would have to map too.
    assert env.get("CRIO_CONFIG_MODE") == "config", "only CRI-O config mode is checked here"
    node = Node(tmp, mounts)
    stand_in = os.path.join(node.tmp, "bin", "crio")
    os.makedirs(os.path.dirname(stand_in), exist_ok=True)
    with open(stand_in, "w") as f:
        f.write("#!/bin/sh\necho 'no CRI-O in this oracle' >&2\nexit 1\n")
    os.chmod(stand_in, 0o755)
    # CRI-O: only the drop-in is written (container.Options.Flush writes RUNTIME_DROP_IN_CONFIG when it is set).
    run_env = node.env(env, [("RUNTIME_DROP_IN_CONFIG",)])
    run_env.update({"RUNTIME_RESTART_MODE": "none", "HOST_ROOT_MOUNT": "/", "RUNTIME_EXECUTABLE_PATH": stand_in})
    log = run_installer(ctkinstaller, run_env)
    node.leave_container()
    files = {}
    for root, _dirs, names in os.walk(node.host):
        for name in names:
            path = os.path.join(root, name)
            with open(path) as f:
                files[node.unmap(path)] = node.unmap(f.read())
    return files, node.unmap(log)
