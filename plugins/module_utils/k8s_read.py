# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""k8s_read: several k8s_info reads in one module run.

A looped ``kubernetes.core.k8s_info`` starts one module process per item, and each
costs about 0.6 s before it sends a request (the kubernetes client import and the
AnsiballZ payload); the reads themselves take milliseconds. Each read here is
kubernetes.core's own ``K8sService.find`` (the same resources, ``api_found`` and
NotFound handling as k8s_info), and ``answers`` holds one entry per read shaped as an
item of a looped k8s_info register (``item`` / ``resources`` / ``api_found``), and ``found``
the resources by each read's ``key``. Not ``results``: Ansible shows a result's ``results``
even under ``no_log`` (it takes them for loop items), and these reads carry certificates.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.args import module_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError

READ_OPTIONS = dict(
    key=dict(type="str", no_log=False),
    api_version=dict(type="str", default="v1"),
    kind=dict(type="str", required=True),
    name=dict(type="str"),
    namespace=dict(type="str"),
    label_selectors=dict(type="list", elements="str"),
    field_selectors=dict(type="list", elements="str"),
    skip=dict(type="bool", default=False),
)


def argument_spec():
    """k8s_read's options (here, not in the module, so that another module can take them as a follower)."""
    return module_spec(reads=dict(type="list", elements="dict", required=True, options=READ_OPTIONS))


def check_reads(reads):
    """The reads, checked and completed (``key`` defaults to ``kind``; keys are unique)."""
    if not reads:
        raise GpuopsError("must list at least one read, e.g. [{kind: Node}].", param="reads")
    checked, keys = [], {}
    for index, read in enumerate(reads):
        where = "reads[{0}]".format(index)
        read = dict(read)
        if not read.get("kind"):
            raise GpuopsError("{0}.kind is required: the kind to read, e.g. Node.".format(where), param="reads")
        read["key"] = read.get("key") or read["kind"]
        if read["key"] in keys:
            raise GpuopsError(
                "{0}.key {1!r} is also the key of reads[{2}]: give each read of the same kind its own key.".format(
                    where, read["key"], keys[read["key"]]
                ),
                param="reads",
            )
        keys[read["key"]] = index
        # Names and selectors go to the API as k8s_info sends them (a role checks its own inputs first and names
        # its variable; a second check here would stop it with a message about reads[i] instead).
        checked.append(read)
    return checked


def check_params(params):
    """The rules a follower's options are checked by (follow.check), as the module checks its own."""
    check_reads(params["reads"])


def skipped_result(read):
    return {"item": read, "skipped": True, "api_found": None, "resources": []}


def read_one(svc, read):
    """One read, as k8s_info does it: (api_found, resources)."""
    found = svc.find(
        read["kind"],
        read.get("api_version") or "v1",
        name=read.get("name"),
        namespace=read.get("namespace"),
        label_selectors=read.get("label_selectors") or [],
        field_selectors=read.get("field_selectors") or [],
    )
    return {"item": read, "api_found": found["api_found"], "resources": found["resources"]}


def run(module, client, svc):
    reads = check_reads(module.params["reads"])
    answers = [skipped_result(read) if read.get("skip") else read_one(svc, read) for read in reads]
    return dict(
        changed=False,
        answers=answers,
        found={answer["item"]["key"]: answer["resources"] for answer in answers},
    )
