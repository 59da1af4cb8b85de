# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""What preflight learns from the API server's discovery (kubernetes.core.k8s_cluster_info's ``apis``)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def api_kinds(apis):
    """Every served resource as ``group/version/Kind`` (``v1/Node`` for the core group), sorted.

    ``apis`` maps ``group/version`` to its kinds (a dict keyed by kind, or a list of kinds), as k8s_cluster_info
    returns it after refreshing discovery; later states look a CRD up here instead of reading it again.
    """
    out = set()
    for group_version, kinds in (apis or {}).items():
        for kind in kinds or []:
            out.add("{0}/{1}".format(group_version, kind))
    return sorted(out)
