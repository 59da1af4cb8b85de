#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_validate
short_description: Validate that every GPU node advertises, runs and reports its NVIDIA GPUs
version_added: 0.1.0
author:
  - gpuops.cluster maintainers (!UNKNOWN)
description:
  - Runs the validation steps of the manual OpenShift GPU procedure and of the GPU Operator state machine on
    every selected GPU node at once and returns a per-node report.
  - 'Fails with a message naming every failing node and why, for example
    C(ip-10-0-138-78: allocatable nvidia.com/gpu 0, expected 1; device-plugin pod CrashLoopBackOff).'
  - C(allocatable) - the node's C(status.allocatable) has what GPU Feature Discovery's labels promise, or
    O(expected_gpus), or at least one. Without MIG C(nvidia.com/gpu) = C(nvidia.com/gpu.count) times
    C(nvidia.com/gpu.replicas) (time-slicing); with time-slicing and C(renameByDefault=true) the resource read
    is C(nvidia.com/gpu.shared). MIG C(single) (label C(nvidia.com/mig.strategy)) - C(nvidia.com/gpu) counts
    the MIG devices (GFD's C(nvidia.com/gpu.count)). MIG C(mixed) - every C(nvidia.com/mig-<profile>) must
    match GFD's C(nvidia.com/mig-<profile>.count), and C(nvidia.com/gpu) (the GPUs without MIG) may be at
    most C(nvidia.com/gpu.count). The message names each resource compared. On failure the state of the
    node's device plugin pod (O(device_plugin_selector)) is added.
  - C(driver) - a driver pod (O(driver_selector) in O(driver_namespace)) on the node is Ready; otherwise its
    state (C(CrashLoopBackOff), C(ImagePullBackOff), ...) and the last lines of its (previous) log.
  - C(vectoradd) - a pod pinned to the node requesting one C(nvidia.com/gpu) runs the CUDA vectorAdd sample;
    it must Succeed with C(Test PASSED) in its log. C(nvidia_smi) - the same with C(nvidia-smi), which must
    print its table (and O(driver_version) when given).
  - C(metrics) - the node's DCGM exporter serves C(DCGM_FI_DEV_GPU_TEMP) for each physical GPU (one series
    per GPU UUID, whatever time-slicing replicas or MIG devices it is shared into; under MIG C(single), whose
    C(nvidia.com/gpu.count) counts MIG devices, at least the GPUs that hold them - C(nvidia.com/gpu.count) divided
    by the devices of C(nvidia.com/gpu.slices.gi) compute slices one GPU fits (7 // slices), rounded up). The endpoint is read
    through the API server proxy, so the machine running Ansible needs no pod network -
    C(/api/v1/namespaces/<ns>/pods/<exporter pod>:<port>/proxy/metrics) per node (O(metrics_via=pod)), or
    through C(/api/v1/namespaces/<ns>/services/<svc>:<port>/proxy/metrics) (O(metrics_via=service); each
    request reaches one ready endpoint, so it is repeated, at most 8 times per node, until every node answered),
    series being attributed to nodes by their C(Hostname) (or, in newer exporters, C(hostname)) label; series
    without it (an exporter run with C(--no-hostname)) are credited to no node, and the check fails telling
    to use O(metrics_via=pod). When the API server cannot reach the
    exporter the check is reported C(unreachable) with the proxy's error; it never passes unread.
  - C(burnin) - a burn-in. A pod requesting every C(nvidia.com/gpu) of the node runs DCGM's diagnostics,
    C(dcgmi diag -r <burnin_level> -j) (O(burnin_image); dcgmi starts an embedded host engine), with each stress
    test's duration O(burnin_duration) from level 3 on. The verdict is read per GPU from DCGM's JSON (3.x and 4.x
    shapes), also when dcgmi exits 226 or 205 with a failed test; a failed GPU is named with the test and DCGM's
    message, the per-GPU results are in the result and the JSON report (C(gpus)), and a GPU on which every test
    was skipped is not a pass. Not run (C(skipped), with the reason) on nodes whose GPUs are MIG-partitioned or
    shared, which DCGM cannot test whole. Not in the default checks; O(wait_timeout) must leave the level its time.
  - The workload pods request one unit of the resource the node advertises - C(nvidia.com/gpu), else
    C(nvidia.com/gpu.shared), else a MIG device C(nvidia.com/mig-<profile>) (the burn-in, every C(nvidia.com/gpu)).
  - A check that cannot run because an earlier one already failed (node C(NotReady) or cordoned, no
    allocatable GPU) is reported C(skipped) with the reason (a JUnit C(skipped) test case), not as a second
    failure.
  - 'Pod selectors: the defaults find the pods of the NVIDIA GPU Operator, and the roles of this collection
    label their pods the same way - C(app=nvidia-device-plugin-daemonset), C(app=nvidia-dcgm-exporter) and, for
    the driver, the pods of either C(app.kubernetes.io/component=nvidia-driver) (which the operator also sets on its
    precompiled, per-kernel driver DaemonSets, whose C(app) label varies) or C(app=nvidia-driver-daemonset).'
  - All pods are created first (in parallel), then followed together with one watch (one list per
    O(wait_sleep) where watches are not available); logs are read in parallel as pods finish, so the duration
    hardly depends on the number of nodes.
  - The pods run with a restricted security context (runAsNonRoot, no privilege escalation, all capabilities
    dropped, RuntimeDefault seccomp; the root filesystem stays writable because the CDI hooks of the NVIDIA runtime
    write C(/etc/ld.so.cache) into it), tolerate O(tolerations) and
    are deleted as soon as they finished and their log was read; whatever is left is deleted at the end, also
    after failures and timeouts.
  - Before it creates its pods the module deletes every validation pod an interrupted run left (the label
    C(gpuops.cluster/validation-run)), whatever its phase, so that none holds a GPU or outlives the run; run one
    validation at a time per O(namespace).
  - The validation pods leave nothing behind; the module reports C(changed) only when it wrote the record
    (O(record_definition)). In check mode no pod is created (the workload checks are reported C(skipped)) and no
    request that writes is sent.
  - Reports can be written as JSON (O(report_json)), JUnit XML (O(report_junit), one test case per node and
    check) and Markdown (O(report_markdown)), also when the validation fails.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - gpuops.cluster.wait
  - gpuops.cluster.node_selection
options:
  checks:
    description: The checks to run.
    type: list
    elements: str
    choices: [allocatable, driver, vectoradd, nvidia_smi, metrics, burnin]
    default: [allocatable, driver, vectoradd]
  node_names:
    description:
      - Validate only these nodes (by name). Without O(node_selector) they need no NFD label.
      - A name that is not among the selected nodes is an error.
    type: list
    elements: str
    aliases: [nodes]
  namespace:
    description: Namespace the validation pods run in. It must exist.
    type: str
    default: nvidia-gpu-operator
  driver_namespace:
    description: Namespace of the driver and device plugin pods (default O(namespace)).
    type: str
  driver_selector:
    description:
      - Label selector of the driver pods.
      - Unset (or empty) - the pods of either C(app.kubernetes.io/component=nvidia-driver) (the collection's driver
        role, GPU Operator v23.9 and later) or C(app=nvidia-driver-daemonset) (every GPU Operator driver DaemonSet).
    type: str
  device_plugin_selector:
    description: Label selector of the device plugin pods (their state explains a missing allocatable).
    type: str
    default: app=nvidia-device-plugin-daemonset
  expected_gpus:
    description:
      - GPUs every node must advertise of C(nvidia.com/gpu) (C(nvidia.com/gpu.shared) when time-slicing renames it;
        under MIG C(mixed) the GPUs without MIG).
      - Default from the GFD labels of each node (see C(allocatable) above), else at least 1.
    type: int
  driver_version:
    description: With C(nvidia_smi), the driver version (or branch) nvidia-smi must report.
    type: str
  vectoradd_image:
    description: Image of the vectoradd check (the CUDA vectorAdd sample; prints C(Test PASSED)).
    type: str
    default: nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubi8
  nvidia_smi_image:
    description: Image of the nvidia_smi check (runs C(nvidia-smi)).
    type: str
    default: nvcr.io/nvidia/cuda:12.5.0-base-ubi8
  burnin_image:
    description: Image of the burnin check, one with C(dcgmi) (DCGM's, as the GPU Operator v26.7.0 deploys it).
    type: str
    default: nvcr.io/nvidia/cloud-native/dcgm:4.6.0-1-ubuntu24.04
  burnin_level:
    description:
      - DCGM's diagnostic level of the burnin check - V(1) seconds (deployment checks), V(2) about two minutes
        (adds PCIe and memory), V(3) about 15 minutes (adds the diagnostic, targeted stress and power tests and
        memory bandwidth), V(4) an hour or more (adds memtest and pulse test).
    type: int
    choices: [1, 2, 3, 4]
    default: 2
  burnin_duration:
    description:
      - Seconds each of DCGM's stress tests runs at O(burnin_level) 3 and 4 (C(-p diagnostic.test_duration=...;
        targeted_stress.test_duration=...; targeted_power.test_duration=...)); 10 to 86400.
    type: int
    default: 60
  tolerations:
    description:
      - Tolerations of the validation pods (default tolerates the C(nvidia.com/gpu) NoSchedule taint).
      - An entry with O(tolerations[].operator=Exists) takes no O(tolerations[].value); an empty key needs C(Exists).
    type: list
    elements: dict
    suboptions:
      key:
        description: Taint key (empty with C(Exists) tolerates every taint).
        type: str
      operator:
        description: C(Equal) compares the value, C(Exists) only the key.
        type: str
        choices: [Equal, Exists]
        default: Equal
      value:
        description: Taint value (with C(Equal)).
        type: str
      effect:
        description: Taint effect to tolerate (all when unset).
        type: str
        choices: [NoSchedule, PreferNoSchedule, NoExecute]
      tolerationSeconds:
        description: With C(NoExecute), how long the pod stays after the taint appears.
        type: int
  pin:
    description:
      - How a pod is tied to its node. C(affinity) (a required node affinity on C(metadata.name), as DaemonSets
        do) keeps the scheduler's check of the free C(nvidia.com/gpu); C(nodeName) bypasses the scheduler.
    type: str
    choices: [affinity, nodeName]
    default: affinity
  run_as_user:
    description:
      - UID of the validation containers. Leave unset on OpenShift (the restricted SCC assigns one); on
        Kubernetes images that run as root need it because the pods set runAsNonRoot.
    type: int
  service_account:
    description: Service account of the validation pods (default the namespace's default account).
    type: str
  priority_class_name:
    description: PriorityClass of the validation pods.
    type: str
  runtime_class_name:
    description:
      - RuntimeClass of the validation pods - the toolkit's (C(nvidia)) where it is not the default runtime, as the GPU
        Operator's validator sets C(VALIDATOR_RUNTIME_CLASS); its runtime injects libcuda and nvidia-smi.
      - Unset - the node's default runtime (enough only with a CDI device list strategy of the plugin, C(cdi-cri)).
      - The gpu_validation and device_plugin roles pass the toolkit's RuntimeClass.
    type: str
  image_pull_secrets:
    description: Pull secrets of the validation pods.
    type: list
    elements: str
  wait_timeout:
    description:
      - Seconds to wait for all validation pods together (at least 10). Default 300.
    type: int
    aliases: [timeout]
  wait_sleep:
    description: Seconds between two progress lines, and between two polls where the pods cannot be watched.
    type: int
    default: 5
    aliases: [poll_interval]
  parallel:
    description: Requests sent at the same time (pod creation, log and metrics reads).
    type: int
    default: 16
  metrics_namespace:
    description: Namespace of the DCGM exporter (default O(namespace)).
    type: str
  metrics_selector:
    description: Label selector of the DCGM exporter pods (O(metrics_via=pod)).
    type: str
    default: app=nvidia-dcgm-exporter
  metrics_via:
    description:
      - C(pod) reads every node's exporter pod through the pod proxy (per node); C(service) reads the
        Service once through the service proxy (reaches one exporter per request).
    type: str
    choices: [pod, service]
    default: pod
  metrics_service:
    description: Service of the DCGM exporter for O(metrics_via=service).
    type: str
    default: nvidia-dcgm-exporter
  metrics_port:
    description: Port of the DCGM exporter.
    type: int
    default: 9400
  metrics_path:
    description: Path of the metrics endpoint.
    type: str
    default: /metrics
  report_json:
    description: Write the report as JSON to this file (a missing folder is made; the nearest existing one must be writable).
    type: path
  report_junit:
    description: Write the report as JUnit XML to this file (for AWX / CI test views; a missing folder is made).
    type: path
  report_markdown:
    description: Write the report as a Markdown table to this file (a missing folder is made).
    type: path
  settle_timeout:
    description:
      - With only the read-only checks (C(allocatable), C(driver)), read again every O(wait_sleep) seconds until every
        node passes or this many seconds have passed; the result is the last reading. C(0) reads once.
      - For the moment after a rollout, when a device plugin turns Ready just before it registers its GPUs with the kubelet.
      - Whatever this is, a failing node that its node lifecycle controller marked (Ready C(Unknown), or a Ready node
        whose driver pod runs ready but is marked not ready, as after an API server restart) is read again every 2
        seconds for up to 30 seconds, as its kubelet sets both back within seconds of reaching the API again.
    type: int
    default: 0
  fail_on_error:
    description: Fail when a node fails a check. With C(false) the result carries RV(passed) and RV(failures) instead.
    type: bool
    default: true
  previous_record:
    description:
      - The validation record of an earlier run (RV(record), or RV(record_data) as stored in a ConfigMap's data),
        which turns on incremental validation. An empty dictionary means that no node was validated yet.
      - The read-only checks (allocatable, driver, metrics) run on every node; the workload checks (vectoradd,
        nvidia_smi) run only on the nodes whose fingerprint - kernel, driver and device plugin pod images, content
        of the ConfigMaps the device plugin pods reference and the node's C(nvidia.com/device-plugin.config) label,
        GPU resources in C(status.allocatable) - differs from the record, that the record does not hold, or whose
        record lacks a requested workload check. The others are reported C(skipped) as unchanged, with the time
        they last passed.
      - The module does not store this record; the caller keeps RV(record_data) (or gives O(record_config_map)
        and O(record_definition), as the gpu_validation role does, for a record kept in a ConfigMap).
    type: dict
  record_config_map:
    description:
      - The name of a ConfigMap in O(namespace) whose data is the record of an earlier run (RV(record_data), as the
        gpuops.cluster.gpu_validation role stores it); the module reads it and validates incrementally as with
        O(previous_record). A missing ConfigMap means that no node was validated yet.
      - Saves the caller a read of its own. Mutually exclusive with O(previous_record).
    type: str
  record_definition:
    description:
      - The record's ConfigMap (O(record_config_map) in O(namespace)) without C(data), with the labels and annotations
        it should carry. The module writes RV(record_data) into it in the same module run, as
        M(gpuops.cluster.k8s_ensure) would (its C(gpuops.cluster/owner) label as the owner; nothing sent when it is
        as stored; nothing written in check mode), and reports RV(record_written).
    type: dict
  force:
    description: With O(previous_record) or O(record_config_map), run the workload checks on every node whatever the record says.
    type: bool
    default: false
requirements:
  - kubernetes >= 24.2.0
  - PyYAML >= 3.11
attributes:
  check_mode:
    support: partial
    description: Can run in check mode without writing anything.
    details: The read-only checks (allocatable, driver, metrics) run; the workload checks are reported skipped because they create pods.
  diff_mode:
    support: partial
    description: The validation pods do not stay.
    details: With O(record_definition), the record ConfigMap's diff, as M(gpuops.cluster.k8s_ensure) gives it.
notes:
  - Needs list/get on nodes, namespaces and pods, get on pods/log and pods/proxy (or services/proxy), and
    create/delete/deletecollection and watch on pods in O(namespace); with O(record_config_map), get on
    configmaps in O(namespace) (and create, patch with O(record_definition)).
  - In an audit log a normal run shows one create and one delete per validation pod (each pod is deleted as soon
    as its log is read; a deletecollection by the label C(gpuops.cluster/validation-run) follows only if pods of
    the run are still listed at the end); check mode shows none.
seealso:
  - module: gpuops.cluster.driver_container_build
  - module: gpuops.cluster.nfd_labels
"""

EXAMPLES = r"""
- name: Driver state validation (after the driver DaemonSets)
  gpuops.cluster.gpu_validate:
    checks: [driver]

- name: End-to-end validation with reports for AWX / CI
  gpuops.cluster.gpu_validate:
    checks: [allocatable, driver, vectoradd, nvidia_smi, metrics]
    driver_version: 550.90.07
    wait_timeout: 600
    report_json: "{{ playbook_dir }}/reports/gpu-validate.json"
    report_junit: "{{ playbook_dir }}/reports/gpu-validate.xml"
    report_markdown: "{{ playbook_dir }}/reports/gpu-validate.md"

- name: Burn in new GPU nodes with DCGM's level 3 diagnostics, 2 minutes per stress test
  gpuops.cluster.gpu_validate:
    checks: [allocatable, driver, burnin]
    burnin_level: 3
    burnin_duration: 120
    wait_timeout: 1800
    report_json: "{{ playbook_dir }}/reports/burn-in.json"

- name: Validate the training nodes, tainted nodetype=gpu, without failing the play
  gpuops.cluster.gpu_validate:
    node_selector:
      node-role.kubernetes.io/training: ""
    tolerations:
      - key: nodetype
        operator: Equal
        value: gpu
        effect: NoSchedule
    fail_on_error: false
  register: gpu_report

- name: Show the failing nodes
  ansible.builtin.debug:
    var: gpu_report.failures
"""

RETURN = r"""
passed:
  description: Every selected node passed every check.
  returned: always
  type: bool
  sample: false
summary:
  description:
    - Counts and run facts.
    - C(timings) gives the seconds after the start at which the validation pods began to be created, were all
      created and had all finished (absent without workload checks).
    - With O(previous_record) or O(record_config_map), C(revalidated) and C(unchanged) list the nodes whose workload checks ran again and
      those skipped as unchanged, and C(forced) tells whether O(force) was set.
  returned: always
  type: dict
  sample:
    result: failed
    nodes: 3
    passed: 2
    failed: 1
    checks: [allocatable, driver, vectoradd]
    duration: 14.2
    started: "2026-01-10T10:00:00Z"
    namespace: nvidia-gpu-operator
    run: k3x9qa
    check_mode: false
    timings: {pods_start: 0.1, pods_created: 0.4, pods_finished: 13.9}
    revalidated: [ip-10-0-138-78]
    unchanged: [ip-10-0-140-12, ip-10-0-141-9]
    forced: false
nodes:
  description: One entry per node.
  returned: always
  type: list
  elements: dict
  contains:
    node:
      description: Node name.
      type: str
    passed:
      description: The node passed every check.
      type: bool
    product:
      description: GFD C(nvidia.com/gpu.product) label.
      type: str
    allocatable_gpus:
      description: C(nvidia.com/gpu) (or C(nvidia.com/gpu.shared)) in C(status.allocatable); under MIG C(mixed) all GPU and MIG devices.
      type: int
    expected_gpus:
      description: Expected GPUs (null means at least one).
      type: int
    checks:
      description: Check name (and C(node_ready)) -> C(status) (pass, fail, skipped, unreachable), C(message) and details (C(pod), C(duration)).
      type: dict
    failures:
      description: The failure messages of this node.
      type: list
      elements: str
    validation:
      description:
        - With O(previous_record) or O(record_config_map) - C(revalidated) (the workload checks ran again), C(reason) (what changed, C(never
          validated), C(forced) or C(unchanged)) and C(last_validated) (when they last passed, per the record).
      type: dict
  sample:
    - node: ip-10-0-138-78
      passed: false
      allocatable_gpus: 0
      expected_gpus: 1
      checks:
        node_ready: {status: pass, message: Ready}
        allocatable: {status: fail, message: "allocatable nvidia.com/gpu 0, expected 1 (nvidia.com/gpu.count); device-plugin pod CrashLoopBackOff"}
      failures: ["allocatable nvidia.com/gpu 0, expected 1 (nvidia.com/gpu.count); device-plugin pod CrashLoopBackOff"]
failures:
  description: 'One line per failing node, C(<node>: <reason>; <reason>).'
  returned: always
  type: list
  elements: str
reports:
  description: Format -> path of the reports written.
  returned: always
  type: dict
  sample: {json: /tmp/gpu-validate.json}
leftover_pods:
  description: Validation pods that could not be deleted (normally absent).
  returned: when cleanup left pods behind
  type: list
  elements: str
table:
  description: The report as lines of a plain-text table (one row per node, then the failures) to print.
  returned: always
  type: list
  elements: str
  sample:
    - "GPU validation: PASSED (1/1 nodes passed; checks: allocatable, driver, vectoradd)"
    - "node  | product  | gpus | node_ready | allocatable | driver | vectoradd | result"
    - "------+----------+------+------------+-------------+--------+-----------+-------"
    - "gpu-0 | Tesla-T4 | 1/1  | pass       | pass        | pass   | pass      | PASS"
record:
  description:
    - With O(previous_record) or O(record_config_map), the record after this run - per current node C(fingerprint), C(validated) (start of
      the run in which its workload checks passed) and C(checks). A node whose workload checks ran and did not all
      pass has no entry (it is validated again next time); nodes gone from the cluster are dropped.
  returned: with previous_record or record_config_map
  type: dict
record_data:
  description: RV(record) as ConfigMap data - per node a compact JSON text with sorted keys (the same record gives the same text).
  returned: with previous_record or record_config_map
  type: dict
record_written:
  description: What became of the record's ConfigMap (C(created), C(updated), C(unchanged)), as M(gpuops.cluster.k8s_ensure) reports it.
  returned: with record_definition
  type: str
  sample: unchanged
progress:
  description: 'Timeline of the run (deduplicated), for example C(t+4s validation pods: 2 Running, 1 Succeeded).'
  returned: always
  type: list
  elements: str
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.common import new_module, run_module
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.params import argument_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.runner import run


def main():
    module = new_module(argument_spec(), supports_check_mode=True)
    run_module(module, run)


if __name__ == "__main__":
    main()
