"""What preflight records of a cluster (module_utils/platform.py)."""

from ansible_collections.gpuops.cluster.plugins.module_utils.platform import api_kinds


def test_api_kinds_from_dicts_and_lists_sorted_once():
    apis = {
        "v1": {"Node": {}, "Pod": {}},
        "config.openshift.io/v1": ["ClusterVersion"],
        "apps/v1": {"DaemonSet": {}},
        "x/v1": None,
    }
    assert api_kinds(apis) == ["apps/v1/DaemonSet", "config.openshift.io/v1/ClusterVersion", "v1/Node", "v1/Pod"]
    assert api_kinds({}) == [] and api_kinds(None) == []


from ansible_collections.gpuops.cluster.plugins.module_utils import platform  # noqa: E402


class _Resource(object):
    def __init__(self, group, version, kind):
        self.group, self.kind = group, kind
        self.group_version = "{0}/{1}".format(group, version) if group else version


class _Resources(object):
    """What kubernetes.core's discoverer yields: one list per resource, its first entry the resource."""

    def __init__(self, resources):
        self.resources, self.invalidated = resources, 0

    def invalidate_cache(self):
        self.invalidated += 1

    def __iter__(self):
        return iter([[r] for r in self.resources])


class _Client(object):
    def __init__(self, resources):
        self.resources = _Resources(resources)


def test_discovered_apis_keys_group_version_as_k8s_cluster_info_and_refreshes_discovery():
    client = _Client(
        [
            _Resource("", "v1", "Node"),
            _Resource("", "v1", "Pod"),
            _Resource("config.openshift.io", "v1", "ClusterVersion"),
            _Resource("apps", "v1", "DaemonSet"),
            _Resource("apps", "v1", "DaemonSet"),
        ]
    )
    apis = platform.discovered_apis(client)
    assert client.resources.invalidated == 1
    assert apis == {"v1": ["Node", "Pod"], "config.openshift.io/v1": ["ClusterVersion"], "apps/v1": ["DaemonSet"]}
    kinds = api_kinds(apis)
    assert platform.is_openshift(kinds) and not platform.is_openshift(["v1/Node", "apps/v1/DaemonSet"])
    platform.discovered_apis(client, invalidate=False)
    assert client.resources.invalidated == 1


def test_requirements_read_the_minor_as_a_number():
    assert platform.kubernetes_minor({"minor": "29+"}) == 29
    assert platform.kubernetes_minor({"minor": ""}) == 0 and platform.kubernetes_minor(None) == 0
    assert platform.meets_requirements({"minor": "32"}, False, 24, False)
    assert not platform.meets_requirements({"minor": "23"}, True, 24, False)
    assert not platform.meets_requirements({"minor": "32"}, False, 24, True)
    assert platform.meets_requirements({"minor": "32"}, True, 24, True)


def test_platform_facts_on_openshift_and_on_kubernetes():
    infra = {
        "status": {
            "platform": "AWS",
            "infrastructureName": "ocp-x7k2p",
            "platformStatus": {"aws": {"region": "eu-west-1"}},
        }
    }
    cv = {"status": {"desired": {"version": "4.19.3"}}}
    nodes = [{"allocatable_gpus": None}, {"allocatable_gpus": 0}, {"allocatable_gpus": 4}]
    facts = platform.platform_facts({"gitVersion": "v1.32.5"}, True, ["v1/Node"], infra, cv, nodes)
    assert facts == {
        "openshift": True,
        "kubernetes_version": "v1.32.5",
        "openshift_version": "4.19.3",
        "cloud": "AWS",
        "region": "eu-west-1",
        "infrastructure_name": "ocp-x7k2p",
        "api_kinds": ["v1/Node"],
        "nodes": 3,
        # a node advertising nvidia.com/gpu: 0 (every GPU taken by MIG or unhealthy) still advertises it
        "gpu_nodes": 2,
    }
    k8s = platform.platform_facts({"gitVersion": "v1.34.10"}, False, [], {}, {}, [])
    assert k8s["cloud"] == "none" and k8s["region"] == "" and k8s["infrastructure_name"] == ""
    assert "openshift_version" not in k8s and k8s["nodes"] == 0


def test_gpu_operator_found_names_its_policies_and_only_its_subscriptions():
    policies = [{"metadata": {"name": "gpu-cluster-policy"}}]
    subs = [
        {"metadata": {"namespace": "nvidia-gpu-operator"}, "spec": {"name": "gpu-operator-certified"}},
        {"metadata": {"namespace": "openshift-nfd"}, "spec": {"name": "nfd"}},
        {"metadata": {"namespace": "broken"}},
    ]
    assert platform.gpu_operator_found(policies, subs) == [
        "ClusterPolicy gpu-cluster-policy",
        "Subscription nvidia-gpu-operator/gpu-operator-certified",
    ]
    assert platform.gpu_operator_found(None, None) == []


def test_reads_only_what_the_platform_and_the_check_need():
    assert platform._reads(False, False) == []
    assert [r["kind"] for r in platform._reads(True, False)] == ["Infrastructure", "ClusterVersion"]
    assert [r["kind"] for r in platform._reads(False, True)] == ["ClusterPolicy", "Subscription"]


import pytest  # noqa: E402

from ansible_collections.gpuops.cluster.plugins.module_utils import follow  # noqa: E402
from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError  # noqa: E402


def test_the_ledger_asked_in_the_same_run_comes_back_with_state_ledgers_defaults():
    checked = follow.check({"state_ledger": {"states": [{"name": "nfd", "inputs": "x"}]}}, platform.FOLLOWERS)
    ledger = checked["state_ledger"]
    assert ledger["mode"] == "check" and ledger["write"] is False and ledger["force"] is False
    assert ledger["namespace"] == "kube-system" and ledger["name"] == "gpuops-state-ledger"
    # Not given: nothing asked.
    assert follow.check({"state_ledger": None}, platform.FOLLOWERS) == {}


@pytest.mark.parametrize(
    "given, param, words",
    [
        ({"mode": "record"}, "state_ledger.mode", "only mode=check"),
        ({"write": True}, "state_ledger.mode", "only mode=check"),
        ({"mode": "invalidate", "failed_state": "nfd"}, "state_ledger.mode", "record and invalidate run as"),
        ({"states": [{"name": "nfd"}]}, "state_ledger.states", "inputs"),
        ({"namespace": "Kube_System"}, "state_ledger.namespace", "not a valid"),
        ({"mode": "sometimes"}, "state_ledger", "as gpuops.cluster.state_ledger reads it"),
        # The connection is platform_info's own.
        ({"kubeconfig": "/x"}, "state_ledger", "kubeconfig"),
    ],
)
def test_a_bad_ledger_option_is_named_under_state_ledger_before_any_read(given, param, words):
    with pytest.raises(GpuopsError) as err:
        follow.check({"state_ledger": given}, platform.FOLLOWERS)
    assert err.value.param == param and words in str(err.value)


class _Stop(Exception):
    pass


class _NoServer(object):
    """A client whose first use fails the test: run() must refuse a bad follower before it reads anything."""

    @property
    def client(self):
        raise _Stop("read the server before checking state_ledger")


def test_run_refuses_a_bad_ledger_option_before_reading_the_server():
    class _Module(object):
        params = {"state_ledger": {"mode": "record"}}

    with pytest.raises(GpuopsError) as err:
        platform.run(_Module(), _NoServer(), None)
    assert err.value.param == "state_ledger.mode"
