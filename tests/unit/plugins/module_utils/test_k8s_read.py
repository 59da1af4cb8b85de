# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils import follow
from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s_read import check_reads
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset import runner as machineset_runner


def test_keys_default_to_the_kind_and_must_be_unique():
    reads = check_reads([{"kind": "Node"}, {"kind": "Node", "key": "gpu", "label_selectors": ["a=b"]}])
    assert [r["key"] for r in reads] == ["Node", "gpu"]
    with pytest.raises(GpuopsError, match=r"reads\[1\]\.key 'Node' is also the key of reads\[0\]"):
        check_reads([{"kind": "Node"}, {"kind": "Node"}])


@pytest.mark.parametrize(
    "reads, words",
    [
        ([], "must list at least one read"),
        ([{"kind": ""}], r"reads\[0\]\.kind is required"),
    ],
)
def test_bad_reads_name_the_option(reads, words):
    with pytest.raises(GpuopsError, match=words) as err:
        check_reads(reads)
    assert err.value.param == "reads"


# machineset_clone's k8s_read follower (the gpu_machineset role's reads in its plan's module run).


def test_the_reads_a_plan_follows_come_back_with_k8s_reads_defaults():
    checked = follow.check(
        {"k8s_read": {"reads": [{"kind": "ClusterAutoscaler", "api_version": "autoscaling.openshift.io/v1"}]}},
        machineset_runner.FOLLOWERS,
    )
    read = checked["k8s_read"]["reads"][0]
    assert read["skip"] is False and read["name"] is None and read["label_selectors"] is None
    assert follow.check({"k8s_read": None}, machineset_runner.FOLLOWERS) == {}


@pytest.mark.parametrize(
    "given, param, words",
    [
        ({"reads": []}, "k8s_read.reads", "must list at least one read"),
        ({"reads": [{"kind": "Node"}, {"kind": "Node"}]}, "k8s_read.reads", "is also the key of reads[0]"),
        ({"reads": [{"name": "default"}]}, "k8s_read", "as gpuops.cluster.k8s_read reads it"),
        ({"reads": [{"kind": "Node"}], "kubeconfig": "/x"}, "k8s_read", "kubeconfig"),
    ],
)
def test_a_bad_follower_read_is_named_under_k8s_read(given, param, words):
    with pytest.raises(GpuopsError) as err:
        follow.check({"k8s_read": given}, machineset_runner.FOLLOWERS)
    assert err.value.param == param and words in str(err.value)


class _NoServer(object):
    """A client whose first use fails the test: run() must refuse a bad follower before it reads anything."""

    def __getattr__(self, name):
        raise AssertionError("used the client ({0}) before checking k8s_read".format(name))


def test_machineset_clone_refuses_a_bad_follower_read_before_reading_the_server():
    from ansible_collections.gpuops.cluster.plugins.modules.machineset_clone import argument_spec

    params = dict((k, v.get("default")) for k, v in argument_spec().items())
    params.update(all_workers=True, instance_type="p3.2xlarge", k8s_read={"reads": []})

    class _Module(object):
        check_mode = True
        _diff = False

    _Module.params = params
    with pytest.raises(GpuopsError) as err:
        machineset_runner.run(_Module(), _NoServer(), _NoServer())
    assert err.value.param == "k8s_read.reads"
