# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""gpuops.cluster.machineset_clone against the local control plane (openshift profile).

The seeded cluster has an Infrastructure on AWS and worker MachineSets in
openshift-machine-api shaped like seed 000; the simulated machine-api turns
MachineSet replicas into Machines and Nodes. Every write is counted from the
kube-apiserver audit log.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest
from waiting import wait_until

MODULE = "gpuops.cluster.machineset_clone"
NS = "openshift-machine-api"
GROUP, VERSION = "machine.openshift.io", "v1beta1"
LABEL_MS = "machine.openshift.io/cluster-api-machineset"
LABEL_ROLE = "machine.openshift.io/cluster-api-machine-role"
MANAGED = "app.kubernetes.io/managed-by=gpuops.cluster"
TEST_LABEL = "gpuops-test/machineset-clone"
GPU_TYPE = "g4dn.xlarge"


def custom(cluster):
    from kubernetes import client

    return client.CustomObjectsApi(cluster.api)


def core(cluster):
    from kubernetes import client

    return client.CoreV1Api(cluster.api)


def list_ms(cluster, selector=None):
    kw = {"label_selector": selector} if selector else {}
    return custom(cluster).list_namespaced_custom_object(GROUP, VERSION, NS, "machinesets", **kw)["items"]


def get_ms(cluster, name):
    from kubernetes.client.rest import ApiException

    try:
        return custom(cluster).get_namespaced_custom_object(GROUP, VERSION, NS, "machinesets", name)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def machines_of(cluster, names):
    items = custom(cluster).list_namespaced_custom_object(GROUP, VERSION, NS, "machines")["items"]
    return [m for m in items if (m["metadata"].get("labels") or {}).get(LABEL_MS) in names]


def prune(obj):
    if isinstance(obj, dict):
        return dict((k, prune(v)) for k, v in obj.items() if v is not None and prune(v) != {})
    if isinstance(obj, list):
        return [prune(i) for i in obj]
    return obj


def diffs(result):
    """{MachineSet name: diff entry} from the diff list (one before/after entry per object)."""
    return dict((e["before_header"].rsplit("/", 1)[1], e) for e in result["diff"])


def gpu_name(source):
    """Seed 000's manual naming: <infra>-worker-<zone> -> <infra>-gpu-<zone>."""
    return source.replace("-worker-", "-gpu-", 1)


@pytest.fixture(scope="module")
def workers(cluster):
    """The seeded worker MachineSets (names), sorted."""

    def seeded():
        found = [
            m
            for m in list_ms(cluster)
            if (m["spec"]["template"]["metadata"].get("labels") or {}).get(LABEL_ROLE) == "worker"
            and "gpuops.cluster" not in str(m["metadata"].get("labels"))
        ]
        return found if len(found) >= 3 else None

    return sorted(m["metadata"]["name"] for m in wait_until(seeded, 60, what="3 seeded worker MachineSets"))


@pytest.fixture(autouse=True)
def clean(cluster):
    """Remove what a test created (GPU MachineSets and helper MachineSets) and wait for their Machines."""
    yield
    api = custom(cluster)
    doomed = sorted(set(m["metadata"]["name"] for m in list_ms(cluster, MANAGED) + list_ms(cluster, TEST_LABEL)))
    for name in doomed:
        api.delete_namespaced_custom_object(GROUP, VERSION, NS, "machinesets", name)
    if doomed:
        wait_until(
            lambda: not list_ms(cluster, MANAGED) and not machines_of(cluster, doomed),
            120,
            what="GPU MachineSets and their Machines to be deleted",
        )


def helper_ms(cluster, source_name, name, role="worker", kind=None, instance_type=None, replicas=0):
    """A MachineSet made directly through the API (a user's own), labelled for cleanup."""
    src = get_ms(cluster, source_name)
    body = {
        "apiVersion": GROUP + "/" + VERSION,
        "kind": "MachineSet",
        "metadata": {"name": name, "namespace": NS, "labels": dict(src["metadata"].get("labels") or {})},
        "spec": copy.deepcopy(src["spec"]),
    }
    body["metadata"]["labels"][TEST_LABEL] = "true"
    body["spec"]["replicas"] = replicas
    body["spec"]["selector"]["matchLabels"][LABEL_MS] = name
    body["spec"]["template"]["metadata"]["labels"][LABEL_MS] = name
    body["spec"]["template"]["metadata"]["labels"][LABEL_ROLE] = role
    value = body["spec"]["template"]["spec"]["providerSpec"]["value"]
    if instance_type:
        value["instanceType"] = instance_type
    if kind:
        body["spec"]["template"]["spec"]["providerSpec"]["value"] = {
            "apiVersion": "machine.openshift.io/v1beta1",
            "kind": kind,
            "numCPUs": 4,
            "template": "rhcos",
        }
    return custom(cluster).create_namespaced_custom_object(GROUP, VERSION, NS, "machinesets", body)


# --------------------------------------------------------------------------- happy path


def test_check_create_idempotent_update(cluster, ansible_task, workers):
    source = workers[0]
    target = gpu_name(source)
    args = {"source": source, "instance_type": GPU_TYPE, "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]}

    # --check: reports the creation, sends no write at all (not even a dry run)
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, args, check=True, diff=True)
    assert not result.get("failed"), result
    assert result["changed"] is True
    item = result["machinesets"][0]
    assert (item["name"], item["source"], item["action"], item["changed"]) == (target, source, "created", True)
    assert item["instance_type"] == GPU_TYPE and item["zone"] and item["replicas"] == 1
    assert diffs(result)[target]["before"] == {}
    assert diffs(result)[target]["after"]["metadata"]["name"] == target
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []
    assert get_ms(cluster, target) is None

    # first run: one create, the clone is seed 000's hand edit
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, args)
    assert not result.get("failed"), result
    assert result["changed"] is True and result["machinesets"][0]["action"] == "created"
    writes = cluster.audit.writes_since(mark)
    assert [(w["verb"], w["resource"]) for w in writes] == [("create", "machinesets")], writes
    src, gpu = get_ms(cluster, source), get_ms(cluster, target)
    assert gpu["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "gpuops.cluster"
    assert gpu["metadata"]["annotations"]["gpuops.cluster/source-machineset"] == source
    assert gpu["spec"]["selector"]["matchLabels"][LABEL_MS] == target
    assert gpu["spec"]["template"]["metadata"]["labels"][LABEL_MS] == target
    tspec = gpu["spec"]["template"]["spec"]
    assert tspec["providerSpec"]["value"]["instanceType"] == GPU_TYPE
    assert tspec["metadata"]["labels"] == {"node-role.kubernetes.io/gpu": ""}
    assert tspec["taints"] == [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    expected_value = prune(copy.deepcopy(src["spec"]["template"]["spec"]["providerSpec"]["value"]))
    expected_value["instanceType"] = GPU_TYPE
    assert prune(tspec["providerSpec"]["value"]) == expected_value
    # let the simulated machine-api annotate / status the new set, then: no change, zero writes
    wait_until(
        lambda: (get_ms(cluster, target).get("status") or {}).get("replicas") is not None,
        60,
        what="machine-api to take the MachineSet",
    )
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, args)
    assert not result.get("failed"), result
    assert result["changed"] is False and result["machinesets"][0]["action"] == "unchanged"
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []

    # a different spec updates the same MachineSet (never a duplicate) and --diff shows it
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, dict(args, replicas=2), diff=True)
    assert not result.get("failed"), result
    assert result["changed"] is True and result["machinesets"][0]["action"] == "updated"
    assert diffs(result)[target]["before"] == {"spec": {"replicas": 1}}
    assert diffs(result)[target]["after"] == {"spec": {"replicas": 2}}
    writes = cluster.audit.writes_since(mark)
    assert [(w["verb"], w["resource"], w["name"]) for w in writes] == [("patch", "machinesets", target)]
    assert get_ms(cluster, target)["spec"]["replicas"] == 2
    assert len([m for m in list_ms(cluster) if m["metadata"]["name"].startswith(target)]) == 1

    # check mode of an update: reported, not written
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, dict(args, replicas=3), check=True)
    assert result["changed"] is True and result["machinesets"][0]["replicas"] == 3
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []
    assert get_ms(cluster, target)["spec"]["replicas"] == 2


def test_all_workers_wait_then_absent(cluster, ansible_task, workers):
    args = {
        "all_workers": True,
        "instance_type": GPU_TYPE,
        "replicas": 1,
        "node_labels": {"node-role.kubernetes.io/gpu": "", "gpuops.io/pool": "training"},
        "wait": True,
        "wait_sleep": 1,
        "wait_timeout": 180,
    }
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, args)
    assert not result.get("failed"), result
    targets = sorted(gpu_name(w) for w in workers)
    assert sorted(i["name"] for i in result["machinesets"]) == targets
    assert len(set(i["zone"] for i in result["machinesets"])) == len(workers)  # one per zone
    assert result["progress"] and "1/1 Nodes Ready" in result["progress"][-1]
    writes = cluster.audit.writes_since(mark)
    assert sorted((w["verb"], w["name"]) for w in writes) == [("create", t) for t in targets]

    machines = machines_of(cluster, targets)
    assert len(machines) == len(targets) and all(m["status"]["phase"] == "Running" for m in machines)
    for m in machines:
        node = core(cluster).read_node(m["status"]["nodeRef"]["name"])
        assert node.metadata.labels["gpuops.io/pool"] == "training"
        assert node.metadata.labels["node.kubernetes.io/instance-type"] == GPU_TYPE
    # What the task saw after its wait: these MachineSets, their Machines and only those Machines' Nodes.
    observed = result["observed"]
    assert sorted(m["metadata"]["name"] for m in observed["machinesets"]) == targets
    assert sorted(m["metadata"]["name"] for m in observed["machines"]) == sorted(
        m["metadata"]["name"] for m in machines
    )
    assert sorted(n["metadata"]["name"] for n in observed["nodes"]) == sorted(
        m["status"]["nodeRef"]["name"] for m in machines
    )
    assert all(m["status"]["phase"] == "Running" for m in observed["machines"])

    # same again: nothing to do
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, dict(args, wait=False))
    assert result["changed"] is False and cluster.audit.writes_since(mark, include_dry_run=True) == []

    # absent in check mode, then for real with wait, then again
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, {"state": "absent", "all_workers": True}, check=True, diff=True)
    assert result["changed"] is True and sorted(diffs(result)) == targets
    assert all(e["after"] == {} and e["before"]["metadata"]["name"] for e in result["diff"])
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []
    mark = cluster.audit.mark()
    result = ansible_task(
        MODULE, {"state": "absent", "all_workers": True, "wait": True, "wait_sleep": 1, "wait_timeout": 120}
    )
    assert not result.get("failed"), result
    assert sorted((w["verb"], w["name"]) for w in cluster.audit.writes_since(mark)) == [("delete", t) for t in targets]
    assert machines_of(cluster, targets) == []
    assert sorted(m["metadata"]["name"] for m in list_ms(cluster) if m["metadata"]["name"] in workers) == workers
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, {"state": "absent", "all_workers": True})
    assert result["changed"] is False and cluster.audit.writes_since(mark, include_dry_run=True) == []
    # Nothing of them left to see.
    result = ansible_task(MODULE, dict(args, wait=False), check=True)
    assert result["observed"] == {"machinesets": [], "machines": [], "nodes": []}, result["observed"]


def test_absent_never_deletes_a_users_machineset(cluster, ansible_task, workers):
    helper_ms(cluster, workers[0], "users-own-gpu", instance_type="p3.2xlarge")
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, {"state": "absent", "name": "users-own-gpu"})
    assert not result.get("failed"), result
    assert result["changed"] is False and result["machinesets"][0]["action"] == "skipped"
    assert any("users-own-gpu" in w for w in result.get("warnings", []))
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []
    assert get_ms(cluster, "users-own-gpu") is not None


def test_second_source_in_same_zone_is_refused_not_taken_over(cluster, ansible_task, workers):
    """A worker and an infra MachineSet of one zone map to one default name: the second clone must not patch the first."""
    source = workers[0]
    target = gpu_name(source)
    infra = source.replace("-worker-", "-infra-", 1)
    helper_ms(cluster, source, infra, role="infra")

    result = ansible_task(MODULE, {"source": source, "instance_type": GPU_TYPE})
    assert not result.get("failed"), result
    assert result["machinesets"][0]["name"] == target and result["machinesets"][0]["action"] == "created"
    wait_until(
        lambda: (get_ms(cluster, target).get("status") or {}).get("replicas") is not None,
        60,
        what="machine-api to take the GPU MachineSet",
    )
    first = get_ms(cluster, target)

    mark = cluster.audit.mark()
    result = ansible_task(MODULE, {"source": infra, "instance_type": "p3.2xlarge", "replicas": 0})
    assert result.get("failed") is True, result
    msg = result["msg"]
    assert msg.startswith("name_pattern:"), msg
    assert source in msg and infra in msg and target in msg and "{role}" in msg, msg
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []
    now = get_ms(cluster, target)
    assert now["spec"] == first["spec"] and now["spec"]["replicas"] == 1
    assert now["metadata"]["annotations"] == first["metadata"]["annotations"]
    assert now["metadata"]["annotations"]["gpuops.cluster/source-machineset"] == source
    assert now["metadata"]["labels"] == first["metadata"]["labels"]

    # state=absent for the infra source does not delete the worker's GPU MachineSet either
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, {"state": "absent", "source": infra})
    assert result.get("failed") is True and result["msg"].startswith("name_pattern:"), result
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []
    assert get_ms(cluster, target) is not None

    # a pattern that tells the sources apart gives the infra source its own GPU MachineSet
    mark = cluster.audit.mark()
    result = ansible_task(
        MODULE,
        {"source": infra, "instance_type": GPU_TYPE, "replicas": 0, "name_pattern": "{infra}-gpu-{role}-{suffix}"},
    )
    assert not result.get("failed"), result
    second = result["machinesets"][0]["name"]
    assert second != target and "-gpu-infra-" in second
    writes = cluster.audit.writes_since(mark)
    assert [(w["verb"], w["name"]) for w in writes] == [("create", second)], writes
    assert get_ms(cluster, target)["spec"] == first["spec"]


def test_the_plan_makes_the_reads_it_is_given_in_its_module_run(cluster, ansible_task, workers):
    """The gpu_machineset role's plan: machineset_clone in check mode with a k8s_read follower, which reads what the
    role made before (by owner label) and the ClusterAutoscaler default, as k8s_read would; no write."""
    source = workers[0]
    made = ansible_task(
        MODULE, {"source": source, "instance_type": GPU_TYPE, "replicas": 0, "labels": {TEST_LABEL: "x"}}
    )
    assert not made.get("failed") and made["changed"] is True, made
    reads = {
        "reads": [
            {
                "api_version": GROUP + "/" + VERSION,
                "kind": "MachineSet",
                "namespace": NS,
                "label_selectors": [TEST_LABEL + "=x"],
            },
            {"api_version": "autoscaling.openshift.io/v1", "kind": "ClusterAutoscaler", "name": "default"},
            {"kind": "Node", "key": "skipped", "skip": True},
        ]
    }
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, {"all_workers": True, "instance_type": GPU_TYPE, "k8s_read": reads}, check=True)
    assert not result.get("failed"), result
    assert result["changed"] is True and len(result["machinesets"]) == len(workers)
    assert [m["metadata"]["name"] for m in result["k8s_read"]["found"]["MachineSet"]] == [gpu_name(source)]
    assert result["k8s_read"]["found"]["ClusterAutoscaler"] == [] and result["k8s_read"]["found"]["skipped"] == []
    assert [a["api_found"] for a in result["k8s_read"]["answers"]] == [True, True, None]
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []
    # Without the option, nothing is read for it and nothing comes back.
    assert "k8s_read" not in ansible_task(MODULE, {"all_workers": True, "instance_type": GPU_TYPE}, check=True)


# --------------------------------------------------------------------------- bad inputs


BAD_INPUTS = [
    ("source_missing", {"source": "no-such-machineset", "instance_type": GPU_TYPE}, "source", "Existing MachineSets"),
    ("no_gpu", {"source": "{w0}", "instance_type": "m5.2xlarge"}, "instance_type", "has no GPU"),
    ("unknown_type", {"source": "{w0}", "instance_type": "g4dn.xlarg"}, "instance_type", "g4dn.xlarge"),
    (
        "unsupported_provider",
        {"source": "vsphere-infra-a", "instance_type": GPU_TYPE},
        "source",
        "VSphereMachineProviderSpec",
    ),
    ("name_too_long", {"source": "{w0}", "instance_type": GPU_TYPE, "name": "g" * 64}, "name", "63"),
    (
        "pattern_collision",
        {"all_workers": True, "instance_type": GPU_TYPE, "name_pattern": "{infra}-gpu"},
        "name_pattern",
        "same name",
    ),
    (
        "bad_node_label",
        {"source": "{w0}", "instance_type": GPU_TYPE, "node_labels": {"nvidia.com/Bad Key": "x"}},
        "node_labels",
        "nvidia.com/Bad Key",
    ),
    (
        "bad_follower_read",
        {"source": "{w0}", "instance_type": GPU_TYPE, "k8s_read": {"reads": [{"kind": "Node"}, {"kind": "Node"}]}},
        "k8s_read.reads",
        "is also the key of reads[0]",
    ),
    (
        "timeout_too_small",
        {"source": "{w0}", "instance_type": GPU_TYPE, "wait": True, "wait_timeout": 2},
        "wait_timeout",
        "too small",
    ),
    (
        "taken_name",
        {"source": "{w0}", "instance_type": GPU_TYPE, "name": "users-own-gpu"},
        "name",
        "not created by gpuops.cluster",
    ),
    ("zone_filter", {"all_workers": True, "instance_type": GPU_TYPE, "zones": ["mars-1a"]}, "zones", "mars-1a"),
    (
        "aws_check_without_credentials",
        {"source": "{w0}", "instance_type": GPU_TYPE, "validate_instance_type": True},
        "validate_instance_type",
        "credentials",
    ),
]


@pytest.mark.parametrize("case,args,param,fragment", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_fails_clearly_and_writes_nothing(cluster, ansible_task, workers, case, args, param, fragment):
    if case == "unsupported_provider":
        helper_ms(cluster, workers[0], "vsphere-infra-a", role="infra", kind="VSphereMachineProviderSpec")
    if case == "taken_name":
        helper_ms(cluster, workers[0], "users-own-gpu", instance_type="p3.2xlarge")
    args = dict((k, v.replace("{w0}", workers[0]) if isinstance(v, str) else v) for k, v in args.items())
    env = None
    if case == "aws_check_without_credentials":
        env = {
            "AWS_ACCESS_KEY_ID": None,
            "AWS_SECRET_ACCESS_KEY": None,
            "AWS_SESSION_TOKEN": None,
            "AWS_PROFILE": None,
            "AWS_CONFIG_FILE": "/nonexistent",
            "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
            "AWS_EC2_METADATA_DISABLED": "true",
        }
    before = sorted(m["metadata"]["name"] for m in list_ms(cluster))
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, args, env=env)
    assert result.get("failed") is True, result
    assert result["msg"].startswith(param + ":"), result["msg"]
    assert fragment in result["msg"], result["msg"]
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []
    assert sorted(m["metadata"]["name"] for m in list_ms(cluster)) == before
    if case == "source_missing":
        for name in workers:
            assert name in result["msg"]


def test_unreachable_api(cluster, ansible_task, workers):
    env = {
        "K8S_AUTH_KUBECONFIG": None,
        "K8S_AUTH_HOST": "https://127.0.0.1:1",
        "K8S_AUTH_API_KEY": "x",
        "K8S_AUTH_VERIFY_SSL": "false",
    }
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, {"source": workers[0], "instance_type": GPU_TYPE}, env=env)
    assert result.get("failed") is True
    assert result["msg"].startswith("host:") and "cannot reach" in result["msg"], result["msg"]
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []


def test_wrong_token(cluster, ansible_task, workers):
    env = {
        "K8S_AUTH_KUBECONFIG": None,
        "K8S_AUTH_HOST": cluster.server,
        "K8S_AUTH_API_KEY": "not-a-valid-token",
        "K8S_AUTH_SSL_CA_CERT": cluster.ca_cert,
    }
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, {"source": workers[0], "instance_type": GPU_TYPE}, env=env)
    assert result.get("failed") is True
    assert result["msg"].startswith("api_key:") and "401" in result["msg"], result["msg"]
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []
    assert gpu_name(workers[0]) not in [m["metadata"]["name"] for m in list_ms(cluster)]


def test_no_permission(cluster, ansible_task, workers):
    env = {"K8S_AUTH_KUBECONFIG": cluster.kubeconfig_of("nobody")}
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, {"source": workers[0], "instance_type": GPU_TYPE}, env=env)
    assert result.get("failed") is True
    assert "403" in result["msg"], result["msg"]
    assert cluster.audit.writes_since(mark, user="nobody", include_dry_run=True) == []
