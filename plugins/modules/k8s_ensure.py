#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: k8s_ensure
short_description: Apply a list of Kubernetes manifests, sending nothing when the cluster already matches
version_added: 0.1.0
author:
  - gpuops.cluster maintainers (!UNKNOWN)
description:
  - Converges a whole list of objects in one task, the way every role of the collection applies its manifests.
  - Each object is read and compared with the manifest first. When every field of the manifest already has the
    same value on the server, nothing is sent, so a run that changes nothing makes no write request at all
    (the collection's integration tests count them in the API server's audit log).
  - An object that is missing or different is written with one server-side apply (field manager O(field_manager),
    conflicts forced), so the fields of the manifest are owned by the collection and fields it no longer sets are
    removed. Before the first write, every write is sent as a server-side dry run; a manifest the server would
    refuse stops the task with nothing written.
  - Namespaces and CustomResourceDefinitions in the list are written first; objects of a kind that a
    CustomResourceDefinition of the same list brings are written once it is Established (looked at 0.2 s after
    its creation, the interval doubling up to O(wait_sleep)).
  - Every object written carries the label C(app.kubernetes.io/managed-by=gpuops.cluster), and
    C(gpuops.cluster/owner=<owner>) when O(owner) is set; O(prune) deletes objects of an owner that left the list.
  - O(state=absent) deletes the listed objects in reverse order and waits until they are gone.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - gpuops.cluster.wait
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: No write request is sent, not even a dry run; the result says what each object would become.
  diff_mode:
    support: full
    details: C(diff) is a list with one before/after entry per object that changes. Secret values are hidden.
  platform:
    platforms: all
options:
  definitions:
    description:
      - The manifests, as a list of dictionaries (for example C("{{ lookup('template', 'x.yaml.j2') | from_yaml_all }}")).
        Items of a C(*List) kind are expanded.
      - Each needs C(apiVersion), C(kind) and C(metadata.name); namespaced objects need C(metadata.namespace) or
        O(namespace).
      - A C(Secret)'s C(stringData) is stored as C(data), as the server would.
    type: list
    elements: raw
    required: true
  state:
    description:
      - V(present) creates or updates the objects; V(absent) deletes them (in reverse order) and waits until they
        are gone.
    type: str
    choices: [present, absent]
    default: present
  namespace:
    description: Namespace for the namespaced objects whose manifest has none.
    type: str
  owner:
    description:
      - Value of the label C(gpuops.cluster/owner) put on every object, naming the role or task that owns it.
      - Needed by O(prune).
    type: str
  prune:
    description:
      - Delete the objects that carry C(app.kubernetes.io/managed-by=gpuops.cluster) and
        C(gpuops.cluster/owner=<owner>), are of a kind in O(definitions) or O(prune_kinds), and are not in
        O(definitions) (anywhere in the cluster). Objects without both labels are never touched.
    type: bool
    default: false
  prune_kinds:
    description: More kinds to prune, for when the list no longer holds any object of that kind.
    type: list
    elements: dict
    default: []
    suboptions:
      kind:
        description: The kind.
        type: str
        required: true
      api_version:
        description: Its group/version.
        type: str
        default: v1
  field_manager:
    description: The field manager of the server-side apply.
    type: str
    default: gpuops.cluster
  fail_on_timeout:
    description:
      - With O(wait), whether a readiness timeout fails the task (the default).
      - With C(false) the task returns RV(ready) C(false), RV(not_ready) and the message instead, so that a role
        explains the timeout (per node, for example) without un-failing the module. Every other error still fails.
    type: bool
    default: true
  wait:
    description:
      - After the writes, wait until every DaemonSet, Deployment and StatefulSet of the list is ready, every Job
        has completed, every Pod is ready and every ResourceQuota is in force (its C(status.hard) counted by the
        quota controller, before which admission enforces nothing), all at the same time, up to O(wait_timeout).
      - MachineConfigs of the list (C(machineconfiguration.openshift.io)) are waited for on every
        MachineConfigPool whose C(machineConfigSelector) selects them, until the pool is C(Updated) on a rendered
        configuration that holds them with their files as given (with O(state=absent), that holds none of them
        any more); RV(progress) gets a line per pool and change, with its machines updated, updating and ready.
        A pool with C(Degraded), C(NodeDegraded) or C(RenderDegraded) True fails the task at once with its reason
        and message.
      - Deletions (O(state=absent), O(prune)) are always waited for.
    type: bool
    default: false
  wait_exclude:
    description:
      - Objects of the list written but not waited for with O(wait), each as C(Kind/name) (for example
        C(DaemonSet/nfd-worker)); each must name an object of O(definitions), checked before any write.
      - For a DaemonSet that runs on every node of the cluster, whose rollout one NotReady node far from the GPUs
        never lets finish (its pod there stays not ready). Wait for what it does on the nodes that matter another
        way (M(gpuops.cluster.nfd_labels) for NFD's worker).
    type: list
    elements: str
    default: []
  operand_pods:
    description:
      - After the writes and the wait (with or without a timeout, see O(fail_on_timeout)), report a DaemonSet's pod
        on each GPU node as M(gpuops.cluster.operand_pods) does, with the same options, in this module run;
        RV(operand_pods) holds its result. A role's verify step reads it instead of starting that module.
      - Only with O(state=present), and not in check mode (nothing was written to report on).
    type: dict
    suboptions:
      namespace:
        description: Namespace of the pods.
        type: str
        required: true
      selector:
        description: Label selector of the DaemonSet's pods (kubectl syntax).
        type: str
        required: true
      node_names:
        description: The nodes to report on, in this order; by default the GPU nodes.
        type: list
        elements: str
      service:
        description: A Service in O(operand_pods.namespace) selecting the pods; its ready endpoints' nodes come back.
        type: str
      log_lines:
        description: For each pod that is not ready, read this many last lines of its log (0 reads none).
        type: int
        default: 0
  driver_container_build:
    description:
      - The options of M(gpuops.cluster.driver_container_build), without its connection options (this module's are
        used). After the writes and the wait (the namespace, service account and RBAC the builds run under), the
        driver images are built (or named) as driver_container_build does, in this module run;
        RV(driver_container_build) holds what it returns, and what it built or pruned makes this task changed.
      - Checked by driver_container_build's own rules (its exclusive options too) before anything is written; a
        bad one fails the task naming C(driver_container_build.<option>). A build that fails, or any other error
        of its own, does not fail this task; RV(driver_container_build) then holds C(failed=true), C(msg) and
        C(param), what a task running driver_container_build registers with C(failed_when=false).
      - Runs under the same conditions as O(gpu_validate), first of the options that follow the writes. In check
        mode it does not run, and the caller runs driver_container_build itself to say what it would build.
    type: dict
  node_taints:
    description:
      - The options of M(gpuops.cluster.node_taints), without its connection options (this module's are used).
        After the writes, the wait and O(operand_pods), the nodes are tainted (or their taints taken back) as
        node_taints does, in this module run; RV(node_taints) holds what node_taints returns, and a node it patched
        makes this task changed.
      - Checked by node_taints' own rules before anything is written (a bad one fails the task naming
        C(node_taints.<option>)); runs under the same conditions as O(gpu_validate), before it. In check mode it
        does not run, and the caller runs node_taints itself to say what it would do.
    type: dict
  driver_rollout:
    description:
      - The options of M(gpuops.cluster.driver_rollout), without its connection options (this module's are used).
        After the writes, the wait, O(operand_pods) and O(node_taints), the outdated driver pods are replaced node
        by node as driver_rollout does, in this module run (its C(verify_checks) too);
        RV(driver_rollout) holds what driver_rollout returns, and a node it rolled makes this task changed.
      - Checked by driver_rollout's own rules before anything is written (a bad one fails the task naming
        C(driver_rollout.<option>)); runs under the same conditions as O(gpu_validate), before it. A rollout that
        stops on a failed node fails this task, as it would driver_rollout's. In check mode, or after a wait that
        did not end ready, it does not run, and the caller runs driver_rollout itself.
    type: dict
  gpu_validate:
    description:
      - The options of M(gpuops.cluster.gpu_validate), without its connection options (this module's are used).
        After the writes, the wait, O(operand_pods) and O(node_taints), those checks run in this module run;
        RV(gpu_validate) holds what gpu_validate returns. A role's verify step reads it instead of starting that
        module.
      - Checked by gpu_validate's own rules before anything is written; a bad one fails the task naming
        C(gpu_validate.<option>).
      - Runs only after a wait that ended ready (see O(fail_on_timeout)) and, with O(operand_pods), with every pod
        ready; otherwise RV(gpu_validate) is absent and the caller runs gpu_validate itself to explain what is not
        ready. With C(fail_on_error=true) (gpu_validate's default), a failed check fails this task, as it would
        gpu_validate's.
      - Only with O(state=present), and not in check mode.
    type: dict
  nfd_labels:
    description:
      - The options of M(gpuops.cluster.nfd_labels), without its connection options. After the writes, the wait
        and O(gpu_validate), the nodes' labels are read (and waited for) as nfd_labels does, in this module run;
        RV(nfd_labels) holds its result.
      - Checked by nfd_labels' own rules before anything is written; runs under the same conditions as
        O(gpu_validate). When its own wait (C(wait_for)) runs out, RV(nfd_labels) holds C(failed=true), C(msg) and
        C(param=wait_timeout), what a task running nfd_labels would register, and this task does not fail.
    type: dict
  k8s_dry_run:
    description:
      - The options of M(gpuops.cluster.k8s_dry_run), without its connection options. Last of all, each definition
        is sent as a server-side dry run, as k8s_dry_run does, in this module run; RV(k8s_dry_run) holds its
        C(results) (a refusal is a result, not a failure).
      - Checked by k8s_dry_run's own rules before anything is written; runs under the same conditions as
        O(gpu_validate).
    type: dict
requirements:
  - python >= 3.9
  - kubernetes >= 24.2.0
notes:
  - Manifests should use the server's canonical forms (for example C(500m), not C(0.5), for CPU). A value the
    server rewrites would look different on every run and be applied again (never wrongly, but not for free).
"""

EXAMPLES = r"""
- name: Converge the driver objects of one role
  gpuops.cluster.k8s_ensure:
    definitions: "{{ lookup('ansible.builtin.template', 'driver.yaml.j2') | ansible.builtin.from_yaml_all | list }}"
    owner: driver
    prune: true
    wait: true
    wait_timeout: 900

- name: Remove them again
  gpuops.cluster.k8s_ensure:
    definitions: "{{ lookup('ansible.builtin.template', 'driver.yaml.j2') | ansible.builtin.from_yaml_all | list }}"
    state: absent

- name: One ConfigMap in a namespace given once
  gpuops.cluster.k8s_ensure:
    namespace: gpu-monitoring
    definitions:
      - apiVersion: v1
        kind: ConfigMap
        metadata:
          name: dashboards
        data:
          gpu.json: "{}"
"""

RETURN = r"""
objects:
  description: Every object of the list and what happened to it (or would, in check mode).
  returned: always
  type: list
  elements: dict
  contains:
    apiVersion:
      description: Its apiVersion.
      type: str
    kind:
      description: Its kind.
      type: str
    namespace:
      description: Its namespace (null for cluster-scoped objects).
      type: str
    name:
      description: Its name.
      type: str
    action:
      description: C(created), C(updated), C(unchanged), C(deleted) or C(absent).
      type: str
  sample:
    - {apiVersion: apps/v1, kind: DaemonSet, namespace: nvidia-gpu-operator, name: nvidia-driver, action: unchanged}
pruned:
  description: Objects deleted by O(prune), in the same form as RV(objects).
  returned: always
  type: list
  elements: dict
diff:
  description: One before/after entry per object that changes (with C(--diff)).
  returned: when diff mode is on
  type: list
  elements: dict
ready:
  description: Whether everything waited for became ready (C(false) only with O(fail_on_timeout=false)).
  returned: when O(wait) is true and something was written or waited for, in a present run
  type: bool
not_ready:
  description: The objects (or MachineConfig pools) still not ready at the timeout, with their state.
  returned: when O(wait) is true, in a present run
  type: list
  elements: str
  sample: ["DaemonSet nvidia-gpu-driver/nvidia-device-plugin-daemonset (1/2 ready)"]
progress:
  description: What happened while writing and waiting, with the time since the start.
  returned: always
  type: list
  elements: str
  sample: ["t+3s DaemonSet gpu/nvidia-driver: 1/2 ready"]
operand_pods:
  description:
    - With O(operand_pods), what M(gpuops.cluster.operand_pods) returns for those options (C(nodes), C(not_ready),
      C(pods), C(summary), and C(endpoint_nodes) with a Service), read after the wait.
  returned: when O(operand_pods) is set, in a present run outside check mode
  type: dict
  sample: {"nodes": [{"node": "gpu-1", "pod": "nvidia-dcgm-exporter-x7k2p", "ready": true, "settling": false,
           "state": "Running, ready", "containers": ["nvidia-dcgm-exporter"]}], "not_ready": [], "pods": 1,
           "summary": "app=nvidia-dcgm-exporter pods in nvidia-gpu, ready on 1 of 1 node(s)"}
driver_container_build:
  description:
    - With O(driver_container_build), what M(gpuops.cluster.driver_container_build) returns for those options
      (C(images) per kernel, C(kernels), C(builds), C(stale), C(pruned)); C(failed), C(msg) and C(param) when it
      failed.
  returned: when O(driver_container_build) is set, in a present run outside check mode whose wait ended ready
  type: dict
  sample: {"changed": false, "strategy": "driver-toolkit", "platform": "openshift",
           "images": {"5.14.0-427.22.1.el9_4.x86_64": "<repository>:550.90.07-5.14.0-427.22.1.el9_4.x86_64-rhel9.4"},
           "stale": [], "pruned": [], "builds": []}
node_taints:
  description: With O(node_taints), what M(gpuops.cluster.node_taints) returns for those options.
  returned: when O(node_taints) is set, in a present run outside check mode whose wait ended ready
  type: dict
  sample: {"changed": false, "changed_nodes": [], "nodes": [{"name": "gpu-1", "action": "unchanged",
           "changed_taints": [], "taints": ["nvidia.com/gpu=:NoSchedule"]}]}
driver_rollout:
  description: With O(driver_rollout), what M(gpuops.cluster.driver_rollout) returns for those options.
  returned: when O(driver_rollout) is set, in a present run outside check mode whose wait ended ready
  type: dict
  sample: {"changed": false, "msg": "nothing to roll: 2 GPU node(s) current", "waves": [], "failed_nodes": [],
           "verify": {"passed": true, "failures": []}}
gpu_validate:
  description: With O(gpu_validate), what M(gpuops.cluster.gpu_validate) returns for those options.
  returned: when O(gpu_validate) is set, in a present run outside check mode whose wait ended ready
  type: dict
  sample: {"passed": true, "nodes": [{"node": "gpu-1", "passed": true}], "failures": []}
nfd_labels:
  description:
    - With O(nfd_labels), what M(gpuops.cluster.nfd_labels) returns for those options (C(nodes) with their GPU,
      kernel, OS and GFD labels, C(kernel_versions), C(os_versions), C(changed_nodes)); C(failed), C(msg) and
      C(param) when its wait ran out.
  returned: when O(nfd_labels) is set, in a present run outside check mode whose wait ended ready
  type: dict
  sample: {"nodes": [{"name": "gpu-1", "gpu": true, "ready": true}], "changed_nodes": []}
k8s_dry_run:
  description: With O(k8s_dry_run), what M(gpuops.cluster.k8s_dry_run) returns for those options (C(results)).
  returned: when O(k8s_dry_run) is set, in a present run outside check mode whose wait ended ready
  type: dict
  sample: {"changed": false, "results": [{"kind": "Pod", "namespace": "team-a", "name": "probe-", "allowed": false,
           "status": 403, "reason": "Forbidden", "message": "exceeded quota: gpu-quota", "object": null}]}
duration:
  description: Seconds the module ran.
  returned: always
  type: float
"""

import copy

from ansible_collections.gpuops.cluster.plugins.module_utils.args import OPERAND_POD_OPTIONS, module_spec, wait_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.common import new_module, run_module
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.task import run


def argument_spec():
    return module_spec(
        wait_spec(with_wait=True, wait_default=False),
        definitions=dict(type="list", elements="raw", required=True),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        namespace=dict(type="str"),
        owner=dict(type="str"),
        prune=dict(type="bool", default=False),
        prune_kinds=dict(
            type="list",
            elements="dict",
            default=[],
            options=dict(kind=dict(type="str", required=True), api_version=dict(type="str", default="v1")),
        ),
        field_manager=dict(type="str", default="gpuops.cluster"),
        fail_on_timeout=dict(type="bool", default=True),
        wait_exclude=dict(type="list", elements="str", default=[]),
        operand_pods=dict(type="dict", options=copy.deepcopy(OPERAND_POD_OPTIONS)),
        driver_container_build=dict(type="dict"),
        node_taints=dict(type="dict"),
        driver_rollout=dict(type="dict"),
        gpu_validate=dict(type="dict"),
        nfd_labels=dict(type="dict"),
        k8s_dry_run=dict(type="dict"),
    )


def main():
    module = new_module(argument_spec(), supports_check_mode=True, required_if=[("prune", True, ("owner",))])
    run_module(module, run)


if __name__ == "__main__":
    main()
