# -*- coding: utf-8 -*-
"""Entitlement in the simulation: judged from the config a node runs now, as CRI-O mounts it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64

import pytest
from simopenshift import entitlement, mco

KERNEL = "5.14.0-427.22.1.el9_4.x86_64"
PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"


def rendered(name, files):
    return {
        "metadata": {"name": name},
        "spec": {
            "config": {
                "storage": {
                    "files": [
                        {"path": p, "contents": {"source": "data:text/plain;base64," + base64.b64encode(c).decode()}}
                        for p, c in files.items()
                    ]
                }
            }
        },
    }


def node(current, desired=None):
    ann = {mco.ANN_CURRENT: current, mco.ANN_DESIRED: desired or current}
    return {"metadata": {"name": "worker-a", "annotations": ann}}


CONFIGS = {
    "rendered-worker-old": rendered("rendered-worker-old", {"/etc/motd": b"hi"}),
    "rendered-worker-ent": rendered("rendered-worker-ent", {mco.ENTITLEMENT_PEM: PEM, mco.ENTITLEMENT_KEY: PEM}),
    "rendered-worker-junk": rendered("rendered-worker-junk", {mco.ENTITLEMENT_PEM: b"not a pem"}),
}


def test_a_node_running_the_entitled_config_is_entitled():
    assert mco.node_entitlement(node("rendered-worker-ent"), CONFIGS.get) == (True, "")


def test_a_node_still_on_the_old_config_is_not():
    ok, why = mco.node_entitlement(node("rendered-worker-old", desired="rendered-worker-ent"), CONFIGS.get)
    assert not ok and "is not in rendered-worker-old" in why and "worker-a" in why


def test_any_content_at_the_path_counts():
    assert mco.node_entitlement(node("rendered-worker-junk"), CONFIGS.get) == (True, "")


def test_unmanaged_node():
    assert not mco.node_entitlement({"metadata": {"name": "n"}}, CONFIGS.get)[0]


@pytest.mark.parametrize(
    "command, args, term",
    [
        (["/bin/sh", "-c"], ["dnf search kernel-devel --showduplicates | grep kernel-devel"], "kernel-devel"),
        (["dnf", "search", "--showduplicates", "kernel-headers"], [], "kernel-headers"),
        (["/usr/bin/yum", "list", "kernel-devel"], [], "kernel-devel"),
        (["sleep", "1"], [], "kernel-devel"),
    ],
)
def test_search_term(command, args, term):
    assert entitlement.search_term({"spec": {"containers": [{"command": command, "args": args}]}}) == term


def test_entitled_output_lists_the_node_kernel():
    code, log = entitlement.dnf_output("kernel-devel", KERNEL, True)
    assert code == 0 and "Red Hat Enterprise Linux 9 for x86_64 - BaseOS (RPMs)" in log
    assert "kernel-devel-5.14.0-427.22.1.el9_4.x86_64 : Development package" in log
    assert "not registered" not in log


def test_unentitled_output_is_dnfs_error():
    code, log = entitlement.dnf_output("kernel-devel", KERNEL, False)
    assert code == 1 and "This system is not registered with an entitlement server" in log
    assert log.rstrip().endswith("No matches found.") and "Enterprise Linux 9 for" not in log


def test_an_unknown_package_is_not_found_even_when_entitled():
    code, log = entitlement.dnf_output("no-such-package", KERNEL, True)
    assert code == 1 and log.rstrip().endswith("No matches found.") and "Enterprise Linux 9 for" in log
