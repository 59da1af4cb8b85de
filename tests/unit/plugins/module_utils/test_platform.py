"""Discovery facts preflight records (module_utils/platform.py)."""

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
