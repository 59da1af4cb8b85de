# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The device_plugin role's plugin configs, read by the device plugin's own config loader.

Every config the role can put in its ConfigMap is rendered the way the role renders it (tasks/preflight.yml's
expressions and templates/device_plugin.yaml.j2, through Ansible's Templar: tests/oracles/role_render.py) and loaded
by ``dpconfig`` (tests/oracles/go/dpconfig): k8s-device-plugin's api/config/v1 ``NewConfig`` with the env the role's
DaemonSet gives the plugin container. The loader must accept it and run with what the role meant (replicas,
renameByDefault and the rename it implies, failRequestsGreaterThanOne, migStrategy). Inputs the preflight refuses are
loaded too: where the loader has an opinion it must refuse them as well.

Upstream version: k8s-device-plugin v0.19.3. The image the role deploys is v0.20.0, which the Go module proxy refuses
here (403 "This module version is not available", for v0.20.0, v0.20.1, v0.20.2 and v0.20.0's commit alike). Between
the two tags api/config/v1 changes only MPS's failRequestsGreaterThanOne default (a *bool, nil = true for MPS), a
sharedDevicesAllocationPolicy flag and anchored resource patterns (git diff v0.19.3 v0.20.0 -- api/config/v1);
time-slicing parsing, ``replicas >= 2``, the version check and the MIG flag are the same code.

The disagreements this oracle found (replicas 1, resource names that are not DNS names, a config's migStrategy
that the env overrides) are fixed in the role's preflight and are now among the refused cases.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import itertools
import json
import os
import subprocess

import pytest
import role_render
import yaml
from oracle_bins import oracle

from ansible_collections.gpuops.cluster.plugins.module_utils import device_plugin

TEMPLATE = os.path.join(role_render.ROLES, "device_plugin", "templates", "device_plugin.yaml.j2")
# How the template writes one config into the ConfigMap (templates/device_plugin.yaml.j2); a refused input has no
# rendered ConfigMap, so its config is serialized with this same filter call.
CONFIGMAP_FILTER = "to_nice_yaml(indent=2, sort_keys=false)"
# Stand-ins for the preflight's cluster reads: one containerd GPU node, no node labelled with a config key.
RESULTS = {"__device_plugin_reads": {"results": [{"resources": []}]}}
BASE = {
    "preflight_platform": {"openshift": False},
    "preflight_gpu_nodes": [{"name": "gpu-0", "gpu": True, "container_runtime": "containerd://2.2.0"}],
}
PLUGIN = "nvidia-device-plugin"
# k8s-device-plugin api/config/v1/resources.go: DefaultSharedRename appends ".shared".
SHARED_SUFFIX = ".shared"


@pytest.fixture(scope="module")
def dpconfig():
    return oracle("dpconfig")


def load(dpconfig, tmp_path, text, env):
    """Run the plugin's loader on ``text`` with the plugin container's ``env``: (exit status, parsed JSON or error)."""
    path = tmp_path / "config.yaml"
    path.write_text(text)
    run_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    run_env.update({k: v for k, v in env.items() if v is not None})
    run_env["CONFIG_FILE"] = str(path)
    proc = subprocess.run(
        [dpconfig], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=run_env, check=False
    )
    if proc.returncode == 0:
        return 0, json.loads(proc.stdout)
    return proc.returncode, proc.stderr.strip()


def rendered(inputs):
    """(ConfigMap data or {}, the plugin container's env) as the role renders them for ``inputs``."""
    _facts, objs = role_render.render("device_plugin", dict(BASE, **inputs), RESULTS)
    daemonset = role_render.find(objs, "DaemonSet")
    env = role_render.env_of(role_render.container(daemonset, PLUGIN))
    maps = [o for o in objs if o["kind"] == "ConfigMap"]
    return (maps[0]["data"] if maps else {}), env


def qualified(name):
    # api/config/v1/resources.go NewResourceName: a bare name gets the nvidia.com/ prefix.
    return name if name.startswith("nvidia.com/") else "nvidia.com/" + name


def assert_agrees(role_cfg, loaded, env):
    """The loader runs the config with what the role wrote into it."""
    cfg = loaded["config"]
    assert cfg["version"] == "v1"
    # The plugin's migStrategy: the file's flags.migStrategy, unless MIG_STRATEGY is set (NewConfig ->
    # Flags.UpdateFromCLIFlags: a set flag or env var wins over the file, api/config/v1/flags.go updateFromCLIFlag).
    wanted_mig = (role_cfg.get("flags") or {}).get("migStrategy", "none")
    assert (
        cfg["flags"]["migStrategy"] == wanted_mig
    ), "the plugin runs migStrategy %r, the config says %r (MIG_STRATEGY=%r)" % (
        cfg["flags"]["migStrategy"],
        wanted_mig,
        env.get("MIG_STRATEGY"),
    )
    sharing = role_cfg.get("sharing") or {}
    ts = sharing.get("timeSlicing")
    if ts is None:
        assert "timeSlicing" not in cfg["sharing"] or not cfg["sharing"]["timeSlicing"].get("resources")
    else:
        got = cfg["sharing"]["timeSlicing"]
        assert got.get("renameByDefault", False) == ts.get("renameByDefault", False)
        assert got.get("failRequestsGreaterThanOne", False) == ts.get("failRequestsGreaterThanOne", False)
        want = []
        for res in ts["resources"]:
            name = qualified(res["name"])
            entry = {"name": name, "devices": "all", "replicas": int(res["replicas"])}
            # replicas.go: renameByDefault renames every resource to <name>.shared.
            if ts.get("renameByDefault"):
                entry["rename"] = name + SHARED_SUFFIX
            want.append(entry)
        assert got["resources"] == want
    strategy = "mps" if sharing.get("mps") else ("time-slicing" if ts else "none")
    assert loaded["sharingStrategy"] == strategy


# Every config the generated path can render: replicas > 1 (1 renders none) x the three booleans / MIG strategies.
GENERATED = list(itertools.product([2, 8, "4"], [False, True], [False, True], ["none", "single", "mixed"]))


@pytest.mark.parametrize(
    "replicas,rename,fail_gt1,mig", GENERATED, ids=["r%s-rename%s-fail%s-%s" % g for g in GENERATED]
)
def test_generated_time_slicing_config_is_loaded_as_meant(dpconfig, tmp_path, replicas, rename, fail_gt1, mig):
    inputs = {
        "device_plugin_time_slicing_replicas": replicas,
        "device_plugin_rename_by_default": rename,
        "device_plugin_fail_requests_greater_than_one": fail_gt1,
        "device_plugin_mig_strategy": mig,
    }
    data, env = rendered(inputs)
    assert list(data) == ["default"], data
    role_cfg = yaml.safe_load(data["default"])
    rc, out = load(dpconfig, tmp_path, data["default"], env)
    assert rc == 0, out
    assert_agrees(role_cfg, out, env)
    assert out["config"]["sharing"]["timeSlicing"]["resources"][0]["replicas"] == int(replicas)
    assert out["config"]["flags"]["migStrategy"] == mig


@pytest.mark.parametrize("mig", ["none", "single", "mixed"])
def test_no_sharing_renders_no_config_and_the_plugin_runs_the_mig_strategy(dpconfig, tmp_path, mig):
    data, env = rendered({"device_plugin_mig_strategy": mig})
    assert data == {} and "CONFIG_FILE" not in env
    run_env = dict(env)
    proc = subprocess.run(
        [dpconfig],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict({"PATH": os.environ.get("PATH", "")}, **{k: v for k, v in run_env.items() if v is not None}),
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["config"]["flags"]["migStrategy"] == mig and out["sharingStrategy"] == "none"


def ts_config(replicas, rename=False, fail_gt1=False, mig="none", name="nvidia.com/gpu"):
    return {
        "version": "v1",
        "flags": {"migStrategy": mig},
        "sharing": {
            "timeSlicing": {
                "renameByDefault": rename,
                "failRequestsGreaterThanOne": fail_gt1,
                "resources": [{"name": name, "replicas": replicas}],
            }
        },
    }


# User configs (device_plugin_configs) the preflight accepts: the plugin must load each key as written.
ACCEPTED = [
    pytest.param({"default": ts_config(3, fail_gt1=True)}, {}, id="one-key"),
    pytest.param(
        {"default": ts_config(2, mig="single"), "a100-shared": ts_config(8, rename=True, mig="single")},
        {"device_plugin_mig_strategy": "single"},
        id="two-keys-mig-single",
    ),
    pytest.param(
        {"plain": {"version": "v1", "flags": {"migStrategy": "none"}}},
        {"device_plugin_default_config": "plain"},
        id="no-sharing",
    ),
    pytest.param({"default": ts_config(4, name="gpu")}, {}, id="bare-resource-name"),
]


@pytest.mark.parametrize("configs,extra", ACCEPTED)
def test_user_config_accepted_by_the_role_is_loaded_as_written(dpconfig, tmp_path, configs, extra):
    data, env = rendered(dict({"device_plugin_configs": configs}, **extra))
    assert sorted(data) == sorted(configs)
    for key, text in sorted(data.items()):
        assert yaml.safe_load(text) == configs[key], "the ConfigMap holds the config as given"
        rc, out = load(dpconfig, tmp_path, text, env)
        assert rc == 0, "%s: the plugin refuses a config the role accepted: %s" % (key, out)
        assert_agrees(configs[key], out, env)


def refused_config_text(facts, key):
    """The refused config serialized as the template would (the same filter call; the template must still use it)."""
    with open(TEMPLATE) as f:
        assert (
            "config | " + CONFIGMAP_FILTER in f.read()
        ), "the ConfigMap line of the template changed: update CONFIGMAP_FILTER"
    templar = role_render.Templar(
        loader=role_render.DataLoader(), variables={"cfg": facts["__device_plugin"]["configs"][key]}
    )
    return templar.template(role_render.trust_as_template("{{ cfg | %s }}" % CONFIGMAP_FILTER))


# Inputs the preflight refuses, each with the loader's error for the same config (file only: the role stops before
# it renders a DaemonSet, so there is no env), or None where the loader accepts it (the role is stricter).
REFUSED = [
    pytest.param(
        {"device_plugin_configs": {"default": ts_config(0)}}, "number of replicas must be >= 2", id="replicas-0"
    ),
    pytest.param(
        {"device_plugin_configs": {"default": ts_config(-3)}}, "number of replicas must be >= 2", id="replicas-negative"
    ),
    pytest.param(
        {"device_plugin_configs": {"default": ts_config("two")}}, "unmarshal error", id="replicas-not-a-number"
    ),
    pytest.param(
        {"device_plugin_configs": {"default": {"version": "v1", "sharing": {"timeSlicing": {"resources": []}}}}},
        "no resources specified",
        id="no-resources",
    ),
    pytest.param(
        {
            "device_plugin_configs": {
                "default": {"version": "v1", "sharing": {"timeSlicing": {"resources": [{"replicas": 2}]}}}
            }
        },
        "no resource name specified",
        id="resource-without-name",
    ),
    pytest.param(
        {"device_plugin_configs": {"default": dict(ts_config(2), version="v2")}}, "unknown version: v2", id="version-v2"
    ),
    pytest.param(
        {"device_plugin_configs": {"default": ts_config(2, mig="auto")}},
        "unknown MIG strategy: auto",
        id="config-mig-auto",
    ),
    # The plugin refuses MPS without --mps-root (MPS_ROOT), which needs the MPS control daemon the collection does
    # not deploy (cmd/nvidia-device-plugin/main.go validateFlags; review P11).
    pytest.param(
        {
            "device_plugin_configs": {
                "default": {
                    "version": "v1",
                    "sharing": {"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}},
                }
            }
        },
        "using MPS requires --mps-root to be specified",
        id="mps",
    ),
    # replicas 1: the plugin refuses replicas < 2 (api/config/v1/replicas.go ReplicatedResource.UnmarshalJSON).
    pytest.param(
        {"device_plugin_configs": {"default": ts_config(1)}}, "number of replicas must be >= 2", id="replicas-1"
    ),
    # The plugin wants a DNS-1123 subdomain after nvidia.com/ (api/config/v1/resources.go NewResourceName).
    pytest.param(
        {"device_plugin_configs": {"default": ts_config(2, name="nvidia.com/GPU_shared")}},
        "incorrect format for resource name",
        id="resource-name-not-dns",
    ),
    # flags.migStrategy mixed in a file is valid for the loader, but the DaemonSet's MIG_STRATEGY (none) would win
    # over it (api/config/v1/flags.go): the role refuses the config that would not run as written.
    pytest.param(
        {"device_plugin_configs": {"default": ts_config(2, mig="mixed")}}, None, id="config-mig-mixed-env-none"
    ),
    # api/config/v1/config.go parseConfigFrom: an empty version means v1. The role asks for version: v1.
    pytest.param(
        {"device_plugin_configs": {"default": {k: v for k, v in ts_config(2).items() if k != "version"}}},
        None,
        id="no-version-role-stricter",
    ),
]


@pytest.mark.parametrize("inputs,loader_error", REFUSED)
def test_config_refused_by_the_role_is_refused_by_the_plugin(dpconfig, tmp_path, inputs, loader_error):
    run = role_render.RoleRun("device_plugin", dict(BASE, **inputs), RESULTS)
    with pytest.raises(role_render.Refused) as refused:
        run.preflight()
    assert refused.value.message.startswith("device_plugin: device_plugin_configs: default: "), refused.value.message
    rc, out = load(dpconfig, tmp_path, refused_config_text(run.facts, "default"), {})
    if loader_error is None:
        assert rc == 0, "the loader now refuses it too (%s): move the case to the agreeing ones" % out
    else:
        assert rc != 0 and loader_error in out, (rc, out)


def test_generated_mig_strategy_the_role_refuses_the_plugin_refuses(dpconfig, tmp_path):
    """device_plugin_mig_strategy outside none/single/mixed: the config and env the role would write, refused by both."""
    inputs = dict(BASE, device_plugin_time_slicing_replicas=4, device_plugin_mig_strategy="auto")
    run = role_render.RoleRun("device_plugin", inputs, RESULTS)
    with pytest.raises(role_render.Refused) as refused:
        run.preflight()
    # ansible-core's argument spec validation refuses it before the role's first task (choices).
    assert "device_plugin_mig_strategy must be one of: none, single, mixed" in refused.value.message
    # The config the role's generator would write past the refusal (module_utils/device_plugin.py).
    names = role_render.RoleRun("device_plugin", inputs, RESULTS).facts["_device_plugin_plan_inputs"]
    configs = device_plugin.render_configs({n: run.templar().template(run.facts[n]) for n in names})
    run.facts["__device_plugin"] = {"configs": configs}
    rc, out = load(dpconfig, tmp_path, refused_config_text(run.facts, "default"), {"MIG_STRATEGY": "auto"})
    assert rc == 3 and "unknown MIG strategy: auto" in out, (rc, out)


def test_generated_replicas_below_one_is_refused_by_the_role():
    """replicas 0: the role refuses it (and never generates a config for <= 1: the plugin's minimum is 2)."""
    for replicas in (0, -1):
        run = role_render.RoleRun("device_plugin", dict(BASE, device_plugin_time_slicing_replicas=replicas), RESULTS)
        with pytest.raises(role_render.Refused) as refused:
            run.preflight()
        assert "device_plugin_time_slicing_replicas must be a whole number >= 1" in refused.value.message
        assert run.facts["__device_plugin"]["configs"] == {}
    # Not a number: ansible-core's argument spec (type int) refuses it before the role's first task.
    run = role_render.RoleRun("device_plugin", dict(BASE, device_plugin_time_slicing_replicas="four"), RESULTS)
    with pytest.raises(role_render.Refused) as refused:
        run.preflight()
    assert "device_plugin_time_slicing_replicas" in refused.value.message and "int" in refused.value.message
