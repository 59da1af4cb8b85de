# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The container_toolkit role's installer env, run through the toolkit's own runtime code and real containerd.

For each containerd minor (1.7, 2.0, 2.1, 2.2; upstream cmd/containerd built from the Go module proxy), starting from
that version's own ``containerd config default``:

1. the role renders its DaemonSet (tests/oracles/role_render.py); the installer container's env and hostPath mounts
   are taken from it as rendered;
2. ``ctkinstaller`` (tests/oracles/go/ctkinstaller: nvidia-container-toolkit v1.20.0's
   cmd/nvidia-ctk-installer/container/runtime package, with the installer's flags and env) writes the host config
   and the drop-in into a temp node (tests/oracles/toolkit_node.py maps container paths to host paths);
3. ``containerd config dump`` (the same LoadConfig the daemon runs at start, cmd/containerd/command/main.go) says
   what containerd loads: the ``nvidia`` runtime handler must be there, running the toolkit's runtime, with CDI on and
   runc still the default.

Review item T6 (../shared/docs/real-node-review.md): without RUNTIME_DROP_IN_CONFIG_HOST_PATH the installer imports
the drop-in by its container path (NCT pkg/config/engine/containerd/config_drop_in.go importPattern/asHostPath), which
containerd on the host never finds; only containerd's own default import of /etc/containerd/conf.d (in
``containerd config default`` since 2.2, containerd PR #12323) still loads it. That is checked as well, so a change
of either upstream shows here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import tomllib

import pytest
import toolkit_node
from oracle_bins import oracle

VERSIONS = ["1.7", "2.0", "2.1", "2.2"]
# Review T6: the handler is loaded without RUNTIME_DROP_IN_CONFIG_HOST_PATH only where the default config imports
# /etc/containerd/conf.d/*.toml (containerd >= 2.2).
LOADED_WITHOUT_HOST_PATH = {"1.7": False, "2.0": False, "2.1": False, "2.2": True}


@pytest.fixture(scope="module")
def ctkinstaller():
    return oracle("ctkinstaller")


@pytest.fixture(scope="module")
def role_pod():
    env, mounts = toolkit_node.installer_pod("containerd")
    return env, mounts


def nvidia_handler(result, env):
    runtimes = toolkit_node.cri_runtime_plugin(result["dump"]).get("containerd", {}).get("runtimes", {})
    return runtimes.get(env.get("CONTAINERD_RUNTIME_CLASS", "nvidia"))


def explain(result):
    return (
        "imports written: %s; default imports: %s\n--- top-level config (head)\n%s\n--- drop-in (head)\n%s\n--- installer log\n%s"
        % (
            result["imports_written"],
            result["default_imports"],
            "\n".join(result["top_level"].splitlines()[:12]),
            "\n".join((result["drop_in"] or "<none>").splitlines()[:8]),
            result["log"],
        )
    )


def test_role_renders_the_installer_env_the_oracle_maps(role_pod):
    """The env this oracle relies on is what the role renders (GO transformForRuntime; nvidia-stack.md section 4)."""
    env, mounts = role_pod
    assert env["RUNTIME"] == "containerd"
    assert env["RUNTIME_DROP_IN_CONFIG_HOST_PATH"] == "/etc/containerd/conf.d/99-nvidia.toml"
    assert dict(mounts)[os.path.dirname(env["CONTAINERD_CONFIG"])] == "/etc/containerd"
    assert dict(mounts)[os.path.dirname(env["RUNTIME_DROP_IN_CONFIG"])] == "/etc/containerd/conf.d"
    assert env["RUNTIME_CONFIG_SOURCE"] == "command,file" and env["CDI_ENABLED"] == "true"
    assert env["NVIDIA_RUNTIME_SET_AS_DEFAULT"] == "false"


@pytest.mark.parametrize("version", VERSIONS)
def test_role_env_loads_the_nvidia_handler(tmp_path, ctkinstaller, role_pod, version):
    env, mounts = role_pod
    containerd = oracle("containerd-" + version)
    result = toolkit_node.configure_containerd(tmp_path, containerd, ctkinstaller, env, mounts)
    handler = nvidia_handler(result, env)
    assert handler is not None, "containerd %s does not load the nvidia handler:\n%s" % (version, explain(result))
    # The host path of the drop-in's directory is imported (config_drop_in.go ensureImports).
    assert "/etc/containerd/conf.d/*.toml" in result["imports_written"], explain(result)
    assert not [p for p in result["imports_written"] if p.startswith("<container>")], explain(result)
    # NCT cmd/nvidia-ctk-installer/container/operator: the nvidia runtime is <ROOT>/toolkit/nvidia-container-runtime.
    assert handler["runtime_type"] == "io.containerd.runc.v2"
    assert handler["options"]["BinaryName"] == env["ROOT"] + "/toolkit/nvidia-container-runtime"
    plugin = toolkit_node.cri_runtime_plugin(result["dump"])
    # NVIDIA_RUNTIME_SET_AS_DEFAULT=false: pods opt in through the RuntimeClass; CDI_ENABLED=true: enable_cdi.
    assert plugin["containerd"]["default_runtime_name"] == "runc"
    assert plugin["enable_cdi"] is True


@pytest.mark.parametrize("version", VERSIONS)
def test_without_the_host_path_the_handler_is_lost_before_containerd_2_2(tmp_path, ctkinstaller, role_pod, version):
    """Review T6 on real code: the env of the manifests before the fix (no RUNTIME_DROP_IN_CONFIG_HOST_PATH)."""
    env, mounts = role_pod
    env = {k: v for k, v in env.items() if k != "RUNTIME_DROP_IN_CONFIG_HOST_PATH"}
    containerd = oracle("containerd-" + version)
    result = toolkit_node.configure_containerd(tmp_path, containerd, ctkinstaller, env, mounts)
    # The installer imports the container path of the drop-in directory into the host config.
    assert "<container>/runtime/config-dir.d/*.toml" in result["imports_written"], explain(result)
    loaded = nvidia_handler(result, env) is not None
    assert (
        loaded == LOADED_WITHOUT_HOST_PATH[version]
    ), "containerd %s: nvidia handler loaded=%s, review T6 says %s\n%s" % (
        version,
        loaded,
        LOADED_WITHOUT_HOST_PATH[version],
        explain(result),
    )


# CRI-O (OpenShift). No CRI-O binary: cri-o v1.34.0 is on the proxy but two of its dependencies are not verifiable
# (`go get github.com/cri-o/cri-o/cmd/crio@v1.34.0`: "github.com/containerd/nri@v0.9.1-0.20250219030224-e597e7849f24:
# verifying module: ... sum.golang.org/lookup/...: 404 Not Found", same for github.com/CloudNativeAI/model-spec@v0.0.4),
# v1.32.0 is refused (403), and a build would also need cgo libraries (gpgme, libseccomp). The next most real oracle:
# the installer's own CRI-O code writes the drop-in, and the test reads it with the keys and the directory CRI-O's
# config loader uses (cri-o v1.34.0 pkg/config/config.go: [crio.runtime.runtimes.<name>] runtime_path / runtime_type;
# UpdateFromPath reads every file under CrioConfigDropInPath, /etc/crio/crio.conf.d, pkg/config/config_unix.go).
CRIO_DROP_IN_DIR = "/etc/crio/crio.conf.d"


def test_crio_drop_in_lands_where_crio_reads_it_with_the_nvidia_handler(tmp_path, ctkinstaller):
    env, mounts = toolkit_node.installer_pod("crio")
    files, log = toolkit_node.configure_crio(tmp_path, ctkinstaller, env, mounts)
    # Only the drop-in, in CRI-O's drop-in directory; no top-level config written, no container path anywhere.
    assert sorted(files) == [env["RUNTIME_DROP_IN_CONFIG_HOST_PATH"]], (sorted(files), log)
    assert os.path.dirname(env["RUNTIME_DROP_IN_CONFIG_HOST_PATH"]) == CRIO_DROP_IN_DIR
    text = files[env["RUNTIME_DROP_IN_CONFIG_HOST_PATH"]]
    assert "<container>" not in text and "/runtime/" not in text, text
    runtime = tomllib.loads(text)["crio"]["runtime"]
    handler = runtime["runtimes"]["nvidia"]
    assert handler == {"runtime_path": env["ROOT"] + "/toolkit/nvidia-container-runtime", "runtime_type": "oci"}, text
    # NVIDIA_RUNTIME_SET_AS_DEFAULT=false: crio.runtime.default_runtime stays CRI-O's own.
    assert "default_runtime" not in runtime, text
