#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: machineset_clone
short_description: Clone OpenShift worker MachineSets into GPU MachineSets
version_added: 0.1.0
author:
  - gpuops.cluster maintainers (!UNKNOWN)
description:
  - Turns an existing OpenShift worker MachineSet into a GPU MachineSet, the way the OpenShift GPU guide does by hand
    with C(oc get machineset -o json), an editor and C(oc create).
  - The clone gets the new name everywhere the name appears (C(metadata.name) and the
    C(machine.openshift.io/cluster-api-machineset) label in C(spec.selector) and C(spec.template.metadata.labels)),
    the GPU instance type in the provider's field (AWS C(instanceType), Azure C(vmSize), GCP C(machineType)),
    O(replicas), node labels, taints, labels and annotations. C(status), server-set metadata (uid, resourceVersion,
    creationTimestamp, selfLink, managedFields, generation) and the annotations machine-api derives from the source
    instance type (C(machine.openshift.io/vCPU), C(memoryMb), C(GPU), autoscaler annotations) are dropped.
  - The cluster autoscaler's scale-from-zero annotations C(machine.openshift.io/vCPU), C(memoryMb) and C(GPU) are
    set for the GPU instance type instead (see O(capacity_annotations)), never the source's C(GPU=0).
  - One source by name (O(source)), or every worker MachineSet (O(all_workers), one GPU MachineSet per zone), named
    by O(name) or O(name_pattern).
  - The MachineSets it creates carry the label C(app.kubernetes.io/managed-by=gpuops.cluster) and the annotation
    C(gpuops.cluster/source-machineset). O(state=absent) deletes only MachineSets with that label; an existing
    MachineSet without it is never changed or deleted.
  - An existing GPU MachineSet whose spec differs (for example a new O(instance_type) or O(replicas)) is updated with
    a JSON merge patch, never duplicated. Nothing is written when nothing differs.
  - The instance type must have an NVIDIA GPU. Known types come from a catalog of AWS, Azure and GCP GPU instance
    types built into the collection; a known type without GPU is always refused. An unknown type is refused unless
    O(validate_instance_type) confirms it through the AWS API or O(allow_unknown_instance_type=true).
  - Every input is checked (sources exist, provider supported, names valid, instance type has GPUs, and with
    O(validate_instance_type) that it is offered in each zone) before the first write.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - gpuops.cluster.wait
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Nothing is sent to the API server except reads; the result tells what would be created, updated or deleted.
  diff_mode:
    support: full
  platform:
    platforms: all
options:
  state:
    description:
      - V(present) creates or updates the GPU MachineSets, V(absent) deletes those this module created.
    type: str
    default: present
    choices: [present, absent]
  namespace:
    description:
      - Namespace of the MachineSets.
    type: str
    default: openshift-machine-api
  source:
    description:
      - Name of the worker MachineSet to clone.
      - Mutually exclusive with O(all_workers). One of them is required with O(state=present).
      - Each source gets its own GPU MachineSet. A GPU MachineSet that exists under the target name but was cloned from
        another source (annotation C(gpuops.cluster/source-machineset)) is never changed or deleted; the task fails
        and asks for a O(name_pattern) that tells the sources apart (for example with C({role}) or C({source})).
    type: str
  all_workers:
    description:
      - Clone every worker MachineSet (template label C(machine.openshift.io/cluster-api-machine-role=worker)) that this
        module did not create and that does not already run a known GPU instance type (a GPU MachineSet made by hand),
        giving one GPU MachineSet per source (so one per zone on installer-made clusters).
    type: bool
    default: false
  zones:
    description:
      - Only clone sources whose providerSpec zone is in this list (AWS C(us-east-2a), Azure C(1), GCP C(us-central1-a)).
    type: list
    elements: str
  name:
    description:
      - Name of the GPU MachineSet. Only with a single source; takes precedence over O(name_pattern).
      - With O(state=absent) and neither O(source) nor O(all_workers), the MachineSet of that name is deleted if this
        module created it.
    type: str
  name_pattern:
    description:
      - Python format string for the GPU MachineSet names.
      - Placeholders C({source}) (source name), C({infra}) (infrastructure name, label
        C(machine.openshift.io/cluster-api-cluster)), C({role}), C({zone}), C({region}), C({instance_type}) (dots and
        underscores as dashes) and C({suffix}), the source name without its leading C(<infra>-<role>-) (the zone part
        of installer-made names such as C(us-east-2a), C(eastus1) or C(c)).
      - The default turns C(mycluster-x7k2p-worker-us-east-2a) into C(mycluster-x7k2p-gpu-us-east-2a), as in the
        OpenShift GPU guide.
      - Names must be valid label values (at most 63 lowercase letters, digits and dashes).
      - The default uses the zone part only, so a worker and an infra MachineSet of the same zone get the same name;
        the second one is refused (see O(source)). Use for example V({infra}-gpu-{role}-{suffix}) to clone both.
    type: str
    default: "{infra}-gpu-{suffix}"
  instance_type:
    description:
      - GPU instance type (AWS instance type, Azure VM size, GCP machine type). Required with O(state=present).
    type: str
  replicas:
    description:
      - Number of machines of each GPU MachineSet.
    type: int
    default: 1
  node_labels:
    description:
      - Labels for the Nodes, set in C(spec.template.spec.metadata.labels), on top of those of the source.
      - A V(null) value removes a label inherited from the source.
      - Booleans and numbers are written as Kubernetes strings (V(true) becomes C("true")).
    type: dict
    default: {"node-role.kubernetes.io/gpu": ""}
  taints:
    description:
      - Taints for the Nodes, set in C(spec.template.spec.taints). When omitted, the source's taints are kept.
      - V([]) removes all taints.
    type: list
    elements: dict
    suboptions:
      key:
        description: Taint key, for example C(nvidia.com/gpu).
        type: str
        required: true
      value:
        description: Taint value.
        type: str
      effect:
        description: Taint effect.
        type: str
        default: NoSchedule
        choices: [NoSchedule, PreferNoSchedule, NoExecute]
  labels:
    description:
      - Extra labels on the MachineSet objects themselves (the source's labels are kept).
    type: dict
  annotations:
    description:
      - Extra annotations on the MachineSet objects, for example the cluster-autoscaler capacity annotations.
    type: dict
  provider_spec:
    description:
      - Merged (JSON merge patch) into C(spec.template.spec.providerSpec.value) of the clone, for example a larger
        root volume, or on GCP N1 types C(gpus) (a list of C({count, type}), types C(nvidia-tesla-k80),
        C(nvidia-tesla-p100), C(nvidia-tesla-v100), C(nvidia-tesla-p4), C(nvidia-tesla-t4)) to attach GPUs. The GCP
        API's name C(guestAccelerators) is refused with a pointer to C(gpus).
      - The instance type field itself is set from O(instance_type) only.
      - GCP VMs with GPUs (A2, A3 and G2 types, or N1 with C(gpus)) cannot be live-migrated and the machine-api
        webhook rejects C(onHostMaintenance=Migrate) for them. The module sets C(onHostMaintenance=Terminate) when the
        source has C(Migrate) or nothing, and says so in RV(machinesets[].notes); C(onHostMaintenance=Migrate) given
        here is refused.
    type: dict
  capacity_annotations:
    description:
      - Set the scale-from-zero annotations C(machine.openshift.io/vCPU), C(machine.openshift.io/memoryMb) and
        C(machine.openshift.io/GPU) on each GPU MachineSet from the GPU instance type (the collection's catalog, or
        the EC2 answer with O(validate_instance_type)), so that a cluster autoscaler scaling the set up from 0
        replicas knows its machines bring GPUs.
      - The AWS machine-api controller rewrites these annotations from the instance type on each reconcile; other
        providers may not, and before the controller runs the set would otherwise look like a machine without GPU.
      - On an existing GPU MachineSet the values are rewritten when the instance type changes and filled in when
        missing; values the machine-api controller already set for an unchanged type are left alone.
      - Not set for an instance type the catalog does not know (O(allow_unknown_instance_type)); RV(machinesets[].notes)
        says so. Annotations given in O(annotations) win.
    type: bool
    default: true
  allow_unknown_instance_type:
    description:
      - Accept an instance type the catalog does not know without checking it has GPUs. A warning is issued.
    type: bool
    default: false
  validate_instance_type:
    description:
      - Ask the AWS EC2 API (boto3, C(DescribeInstanceTypes) and C(DescribeInstanceTypeOfferings)) that the instance
        type exists, has NVIDIA GPUs and is offered in the availability zone of every GPU MachineSet. AWS only.
      - Credentials come from the usual boto3 chain (environment, O(aws_profile), instance profile).
    type: bool
    default: false
  aws_profile:
    description:
      - boto3 profile for O(validate_instance_type).
    type: str
  aws_endpoint_url:
    description:
      - EC2 endpoint URL for O(validate_instance_type) (VPC endpoints, test servers).
    type: str
  wait:
    description:
      - Wait until every GPU MachineSet has O(replicas) Machines in phase C(Running) whose Nodes are C(Ready); with
        O(state=absent) until their Machines are gone. Skipped in check mode.
      - A Machine in phase C(Failed) ends the wait with its C(errorReason) and C(errorMessage).
      - O(wait_timeout) defaults to 900 seconds here and must be at least 10 and at least O(wait_sleep).
    type: bool
    default: false
  k8s_read:
    description:
      - The options of M(gpuops.cluster.k8s_read) (C(reads)), without its connection options. After this module's own
        work (in check mode too, as they only read), those reads are made as k8s_read makes them, in this module run;
        RV(k8s_read) holds what k8s_read returns. One module start fewer for a role that plans and reads (the
        gpu_machineset role reads the GPU MachineSets it made before and the ClusterAutoscaler with its plan).
      - Checked by k8s_read's own rules before anything is read or written (a bad one fails the task naming
        C(k8s_read.<option>)). Not made when this module fails.
    type: dict
requirements:
  - python >= 3.9
  - kubernetes >= 24.2.0
  - boto3 (only for O(validate_instance_type))
notes:
  - Needs the OpenShift Machine API (C(machine.openshift.io/v1beta1)); the module fails with a clear message on clusters
    without it.
seealso:
  - module: gpuops.cluster.nfd_labels
  - module: gpuops.cluster.k8s_read
"""

EXAMPLES = r"""
- name: Clone one worker MachineSet into a GPU MachineSet (as in the OpenShift GPU guide)
  gpuops.cluster.machineset_clone:
    source: mycluster-x7k2p-worker-us-east-2a
    instance_type: p3.2xlarge

- name: One tainted g4dn GPU MachineSet per zone, wait until the nodes are Ready
  gpuops.cluster.machineset_clone:
    all_workers: true
    instance_type: g4dn.xlarge
    replicas: 2
    node_labels:
      node-role.kubernetes.io/gpu: ""
      gpuops.io/pool: inference
    taints:
      - key: nvidia.com/gpu
        effect: NoSchedule
    wait: true
    wait_timeout: 1200
  register: gpu_machinesets

- name: Check with the AWS API that the type is offered in each zone, and preview the change
  gpuops.cluster.machineset_clone:
    all_workers: true
    zones: [us-east-2a, us-east-2b]
    instance_type: g6.xlarge
    validate_instance_type: true
  check_mode: true
  diff: true

- name: Remove the GPU MachineSets created from the workers
  gpuops.cluster.machineset_clone:
    state: absent
    all_workers: true
    wait: true
"""

RETURN = r"""
machinesets:
  description: One entry per GPU MachineSet the task handled.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: GPU MachineSet name.
      type: str
      sample: mycluster-x7k2p-gpu-us-east-2a
    source:
      description: Name of the source MachineSet.
      type: str
      sample: mycluster-x7k2p-worker-us-east-2a
    provider:
      description: Cloud provider (aws, azure or gcp).
      type: str
      sample: aws
    zone:
      description: Availability zone from the providerSpec.
      type: str
      sample: us-east-2a
    region:
      description: Region from the providerSpec.
      type: str
      sample: us-east-2
    instance_type:
      description: Instance type of the GPU MachineSet.
      type: str
      sample: p3.2xlarge
    replicas:
      description: Replicas of the GPU MachineSet.
      type: int
      sample: 1
    action:
      description: What was done (or would be in check mode).
      type: str
      sample: created
      choices: [created, updated, unchanged, deleted, absent, skipped]
    changed:
      description: Whether this MachineSet was (or would be) created, updated or deleted.
      type: bool
    notes:
      description: What the module changed beyond the parameters, and why (for example C(onHostMaintenance) on GCP).
      type: list
      elements: str
      sample: ["onHostMaintenance set to Terminate (the source has Migrate): GCP VMs with GPUs cannot be live-migrated
               and the machine-api webhook rejects Migrate for them"]
    gpu:
      description:
        - What is known about the GPUs of the instance type (empty with O(state=absent)).
        - C(source) tells where it comes from (catalog, aws, gcp-attached, unchecked).
      type: dict
      sample: {"gpu_count": 1, "gpu_model": "Tesla-V100-SXM2-16GB", "gpu_memory_mib": 16384, "source": "catalog"}
    scale_from_zero:
      description:
        - The scale-from-zero annotations (C(machine.openshift.io/vCPU), C(memoryMb), C(GPU)) the GPU MachineSet
          carries (or would carry in check mode); empty when unknown.
      type: dict
      sample: {"machine.openshift.io/vCPU": "4", "machine.openshift.io/memoryMb": "16384",
               "machine.openshift.io/GPU": "1"}
namespace:
  description: Namespace of the MachineSets.
  returned: always
  type: str
  sample: openshift-machine-api
diff:
  description:
    - One before/after entry per MachineSet that is (or would be) created, updated or deleted; for an update only the
      fields that change.
  returned: in diff mode
  type: list
  elements: dict
  sample: [{"before_header": "MachineSet openshift-machine-api/mycluster-x7k2p-gpu-us-east-2a",
            "after_header": "MachineSet openshift-machine-api/mycluster-x7k2p-gpu-us-east-2a",
            "before": {"spec": {"replicas": 1}}, "after": {"spec": {"replicas": 2}}}]
progress:
  description: Timeline of the wait (deduplicated status lines with the elapsed time).
  returned: when O(wait=true) and not in check mode
  type: list
  elements: str
  sample: ["t+0s mycluster-x7k2p-gpu-us-east-2a: 0/1 Machines Running, 0/1 Nodes Ready"]
observed:
  description:
    - The GPU MachineSets of RV(machinesets) as the cluster has them at the end of the task (after the writes and the
      wait), their Machines and the Nodes of those Machines, read in three list requests. What a caller judges
      readiness on, without a read of its own.
    - In check mode, what exists now.
  returned: when O(state=present)
  type: dict
  contains:
    machinesets:
      description: The MachineSet objects (those not created yet are missing).
      type: list
      elements: dict
    machines:
      description: The Machine objects of those MachineSets.
      type: list
      elements: dict
    nodes:
      description: The Node objects the Machines name in C(status.nodeRef).
      type: list
      elements: dict
  sample: {"machinesets": [], "machines": [], "nodes": []}
duration:
  description: Seconds the task took.
  returned: always
  type: float
  sample: 3.2
k8s_read:
  description: With O(k8s_read), what M(gpuops.cluster.k8s_read) returns for those reads (C(answers), C(found)).
  returned: when O(k8s_read) is given
  type: dict
  sample: {"answers": [{"item": {"key": "ClusterAutoscaler", "kind": "ClusterAutoscaler", "name": "default"},
            "api_found": true, "resources": []}], "found": {"ClusterAutoscaler": []}}
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.args import module_spec, wait_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.common import new_module, run_module
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset.model import DEFAULT_NAMESPACE, TAINT_EFFECTS
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset.names import DEFAULT_NAME_PATTERN
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset.runner import run


def argument_spec():
    return module_spec(
        wait_spec(with_wait=True, wait_default=False),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        namespace=dict(type="str", default=DEFAULT_NAMESPACE),
        source=dict(type="str"),
        all_workers=dict(type="bool", default=False),
        zones=dict(type="list", elements="str"),
        name=dict(type="str"),
        name_pattern=dict(type="str", default=DEFAULT_NAME_PATTERN),
        instance_type=dict(type="str"),
        replicas=dict(type="int", default=1),
        node_labels=dict(type="dict", default={"node-role.kubernetes.io/gpu": ""}),
        taints=dict(
            type="list",
            elements="dict",
            options=dict(
                key=dict(type="str", required=True, no_log=False),
                value=dict(type="str"),
                effect=dict(type="str", default="NoSchedule", choices=list(TAINT_EFFECTS)),
            ),
        ),
        labels=dict(type="dict"),
        annotations=dict(type="dict"),
        provider_spec=dict(type="dict"),
        capacity_annotations=dict(type="bool", default=True),
        allow_unknown_instance_type=dict(type="bool", default=False),
        validate_instance_type=dict(type="bool", default=False),
        aws_profile=dict(type="str"),
        aws_endpoint_url=dict(type="str"),
        k8s_read=dict(type="dict"),
    )


def main():
    module = new_module(
        argument_spec(),
        mutually_exclusive=[("source", "all_workers")],
        required_if=[("state", "present", ("instance_type",))],
        supports_check_mode=True,
    )
    run_module(module, run)


if __name__ == "__main__":
    main()
