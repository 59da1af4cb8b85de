# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils import validators as v
from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError


@pytest.mark.parametrize("name", ["gpu", "nvidia-gpu-operator", "a1"])
def test_dns_labels_ok(name):
    assert v.dns_label_problem(name) is None


@pytest.mark.parametrize("name", ["", "GPU", "-a", "a-", "a.b", "x" * 64])
def test_dns_labels_bad(name):
    assert v.dns_label_problem(name)


def test_subdomain_allows_dots():
    assert v.dns_subdomain_problem("a.b-c.d") is None
    assert v.dns_subdomain_problem("a..b")


@pytest.mark.parametrize(
    "image",
    ["nvcr.io/nvidia/driver:580.126.20-rhcos4.16", "registry:5000/x/y@sha256:" + "a" * 64, "busybox"],
)
def test_images_ok(image):
    assert v.check_image(image, "p") == image


@pytest.mark.parametrize("image", ["NVCR.io/x", "x:", "x::y", "a b"])
def test_images_bad_name_param(image):
    with pytest.raises(GpuopsError) as err:
        v.check_image(image, "vectoradd_image")
    assert err.value.param == "vectoradd_image"


def test_selector_syntax():
    assert v.check_selector("app in (a, b),!x,y=z", "s")
    for bad in ("", "a=b=c", "app in a"):
        with pytest.raises(GpuopsError):
            v.check_selector(bad, "s")


def test_labels_normalized_and_checked():
    assert v.check_labels({"a": True, "b": 3, "c": None}, "labels") == {"a": "true", "b": "3", "c": None}
    with pytest.raises(GpuopsError):
        v.check_labels({"bad key": "x"}, "labels")
    with pytest.raises(GpuopsError):
        v.check_labels({"a": None}, "labels", allow_remove=False)
