#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: operand_pods
short_description: A DaemonSet's pod on each GPU node, ready or why not, in one task
version_added: 0.1.0
author:
  - gpuops.cluster maintainers (!UNKNOWN)
description:
  - Reads the pods of O(selector) in O(namespace) and, for each node of O(node_names) (by default the GPU nodes, the
    same definition as M(gpuops.cluster.nfd_labels)), names the pod running there (a ready one first, else the
    newest), whether it is ready and its state in words (C(CrashLoopBackOff (restarts 3, last exit 1)),
    C(ImagePullBackOff) with its message, C(PodInitializing), or no pod at all), as the
    C(gpuops.cluster.operand_pod_states) filter does.
  - A pod whose containers all run ready but whose Ready condition is False was marked so by the node lifecycle
    controller (its node missed heartbeats, for example while the API server restarted); the kubelet sets it back
    within 10 seconds of reaching the API again. While a pod is only that, the pods are read again every 2 seconds
    for up to 30 seconds before the verdict stands.
  - Only the per-node verdicts come back, not the pods; with O(log_lines) the last lines of the log of every pod
    that is not ready come with them.
  - Reads only.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Reads only, so it runs the same in check mode.
  diff_mode:
    support: none
  platform:
    platforms: all
options:
  namespace:
    description: Namespace of the pods.
    type: str
    required: true
  selector:
    description: Label selector of the DaemonSet's pods (kubectl syntax), for example C(app=nvidia-dcgm-exporter).
    type: str
    required: true
  node_names:
    description:
      - The nodes to report on, in this order. When not set, the GPU nodes (one server-side list per form of NFD's
        NVIDIA PCI label).
    type: list
    elements: str
  service:
    description:
      - The name of a Service in O(namespace) that selects these pods; RV(endpoint_nodes) then names the nodes
        with a ready endpoint in its EndpointSlices (C(discovery.k8s.io/v1), label C(kubernetes.io/service-name)).
      - While a node with a ready pod has no ready endpoint, the EndpointSlices are read again every second for up
        to 65 seconds (after API server restarts the EndpointSlice controller's watches come back up to 60 seconds
        late, client-go's reflector backoff).
    type: str
  log_lines:
    description: For each pod that is not ready, read this many last lines of its log (0 reads none).
    type: int
    default: 0
requirements:
  - python >= 3.9
  - kubernetes >= 24.2.0
seealso:
  - module: gpuops.cluster.gpu_validate
  - module: gpuops.cluster.nfd_labels
"""

EXAMPLES = r"""
- name: The DCGM exporter on every GPU node
  gpuops.cluster.operand_pods:
    namespace: nvidia-gpu
    selector: app=nvidia-dcgm-exporter
  register: exporter

- name: Stop naming the nodes without a ready exporter
  ansible.builtin.fail:
    msg: "{{ exporter.not_ready | map(attribute='node') | zip(exporter.not_ready | map(attribute='state'))
             | map('join', ': ') | join('; ') }}"
  when: exporter.not_ready | length > 0
"""

RETURN = r"""
nodes:
  description:
    - Per node, C(node), C(pod) (null when none runs there), C(ready), C(settling) (its containers ready, the pod
      marked not ready), C(state) (in words), C(containers), and C(log_lines) for a pod that is not ready when
      O(log_lines) is set.
    - For a node whose pod is not ready, C(causes) - the known failures its state message and log lines show
      (C(signature), C(cause), C(fix), C(source) - the public report -, C(evidence)), as the
      C(gpuops.cluster.failure_signatures) filter finds them; empty when none matches.
  returned: always
  type: list
  elements: dict
  sample: [{"node": "gpu-1", "pod": "nvidia-dcgm-exporter-x7k2p", "ready": true, "settling": false,
            "state": "Running, ready", "containers": ["nvidia-dcgm-exporter"]}]
not_ready:
  description: The entries of RV(nodes) that are not ready.
  returned: always
  type: list
  elements: dict
endpoint_nodes:
  description: With O(service), the nodes that have a ready endpoint of the Service, sorted; else not returned.
  returned: when O(service) is set
  type: list
  elements: str
  sample: ["gpu-1", "gpu-2"]
pods:
  description: How many pods matched O(selector).
  returned: always
  type: int
summary:
  description: One line, for example C(app=nvidia-dcgm-exporter pods in nvidia-gpu, ready on 2 of 2 node(s)).
  returned: always
  type: str
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.args import OPERAND_POD_OPTIONS, module_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.common import new_module, run_module
from ansible_collections.gpuops.cluster.plugins.module_utils.operand_read import run


def argument_spec():
    return module_spec(OPERAND_POD_OPTIONS)


def main():
    module = new_module(argument_spec(), supports_check_mode=True)
    run_module(module, run)


if __name__ == "__main__":
    main()
