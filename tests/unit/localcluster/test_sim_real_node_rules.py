# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The simulator refuses what a real node refuses: one test per rule, each breaking it on purpose.

Rules: image contents (images.py), the driver container on the node (gpustack.driver_run) and what the
container runtime gives GPU pods (runtime.py). The upstream source of each rule is in those modules.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from simopenshift import catalog, gpustack, images, manifests, runtime

BUILD = catalog.cluster_build()
KERNEL = BUILD.kernel
DRIVER_IMAGE = "nvcr.io/nvidia/driver:595.91.07-rhcos4.16"


def spec(ds):
    return {"spec": copy.deepcopy(ds["spec"]["template"]["spec"])}


def main(pod):
    return pod["spec"]["containers"][0]


def built(module_type="open", kernel=KERNEL, dockerfile="RUN nvidia-installer\nCOPY --from=modules /opt/modules/ "
          "/lib/modules/${KERNEL_VERSION}/\n", base=DRIVER_IMAGE):  # fmt: skip
    return images.built(
        {
            "spec": {
                "source": {"dockerfile": dockerfile},
                "strategy": {
                    "dockerStrategy": {
                        "from": {"kind": "DockerImage", "name": base},
                        "buildArgs": [
                            {"name": "KERNEL_VERSION", "value": kernel},
                            {"name": "KERNEL_MODULE_TYPE", "value": module_type},
                        ],
                    }
                },
            }
        }
    )


def run(pod, contents, family="turing", entitled=False):
    return gpustack.driver_run(pod, main(pod), contents, KERNEL, family, lambda: entitled)


# ------------------------------------------------------------------ images
def test_image_contents():
    dtk = images.public(catalog.dtk_image(BUILD.build))
    assert dtk.kind == "driver-toolkit" and "nvidia-driver" not in dtk.executables and not dtk.userspace
    drv = images.public(DRIVER_IMAGE)
    assert drv.executables == {"nvidia-driver", "ocp_dtk_entrypoint"} and drv.compiles and drv.driver == "595.91.07"
    pre = images.public("nvcr.io/nvidia/driver:550-5.15.0-119-generic-ubuntu22.04")
    assert pre.modules == {"5.15.0-119-generic": "auto"} and not pre.compiles
    assert images.public("mirror.example.com:5000/nvidia/driver:595.91.07-rhel9.6").os_tag == "rhel9.6"
    assert images.public("quay.io/acme/something:1") is None  # unknown: not judged
    assert images.dtk_kernel(catalog.dtk_image(BUILD.build)) == KERNEL


def test_built_image_is_its_final_base_plus_the_modules_it_compiled():
    image = built("open")
    assert "nvidia-driver" in image.executables and image.userspace and image.modules == {KERNEL: "open"}
    # the review's D9: a single-stage build FROM the Driver Toolkit holds modules, not the driver container
    bare = images.built(
        {
            "spec": {
                "source": {"dockerfile": "FROM dtk\nRUN nvidia-installer --kernel-module-only\n"},
                "strategy": {
                    "dockerStrategy": {
                        "from": {"kind": "ImageStreamTag", "name": "driver-toolkit:latest", "namespace": "openshift"},
                        "buildArgs": [{"name": "KERNEL_VERSION", "value": KERNEL}],
                    }
                },
            }
        }
    )
    assert "nvidia-driver" not in bare.executables and bare.modules == {KERNEL: "proprietary"}


# ------------------------------------------------------------------ the driver container
def test_driver_without_the_script_does_not_start():
    pod = spec(manifests.driver("ns", image="registry/x:1", args=["init"]))
    verdict = run(pod, images.public(catalog.dtk_image(BUILD.build)))
    assert not verdict.ok and 'exec: "nvidia-driver": executable file not found in $PATH' in verdict.exec_error


def test_built_image_loads_only_on_its_kernel():
    pod = spec(manifests.driver("ns", image="internal/x:1", args=["load"]))
    assert run(pod, built("open")).ok
    other = run(pod, built("open", kernel="5.14.0-1.el9_4.x86_64"))
    assert not other.ok and "Module nvidia not found in directory /lib/modules/%s" % KERNEL in other.log[0]


def test_module_type_must_suit_the_gpu():
    pod = spec(manifests.driver("ns", image="internal/x:1", args=["load"]))
    volta = run(pod, built("open"), family="volta")
    assert not volta.ok and "not supported by open nvidia.ko" in volta.log[0]
    blackwell = run(pod, built("proprietary"), family="blackwell")
    assert not blackwell.ok and "requires use of the NVIDIA open kernel modules" in blackwell.log[0]
    assert run(pod, built("proprietary"), family="volta").ok


def test_open_modules_need_the_firmware_mounts():
    with_mounts = spec(manifests.driver("ns", image="internal/x:1", args=["load"]))
    without = spec(manifests.driver("ns", image="internal/x:1", args=["load"], firmware=False))
    assert run(with_mounts, built("open")).ok
    verdict = run(without, built("open"))
    assert not verdict.ok and "RmFetchGspRmImages: No firmware image found" in "\n".join(verdict.log)
    # proprietary modules on a GPU that does not need GSP load without them; Hopper needs GSP in any mode
    assert run(without, built("proprietary")).ok
    assert not run(without, built("proprietary"), family="hopper").ok


def test_runtime_compile_on_rhcos_needs_the_driver_toolkit_or_an_entitlement():
    init = spec(manifests.driver("ns", image=DRIVER_IMAGE, args=["init"]))
    verdict = run(init, images.public(DRIVER_IMAGE))
    assert not verdict.ok and "RHEL entitlement may be improperly deployed" in "\n".join(verdict.log)
    assert run(init, images.public(DRIVER_IMAGE), entitled=True).ok
    dtk = spec(manifests.driver("ns", image=DRIVER_IMAGE))  # ocp_dtk_entrypoint + the sidecar
    assert run(dtk, images.public(DRIVER_IMAGE)).ok
    dtk["spec"]["containers"] = dtk["spec"]["containers"][:1]
    stuck = run(dtk, images.public(DRIVER_IMAGE))
    assert not stuck.ok and stuck.stuck


def test_ubuntu_runtime_compile_needs_no_entitlement():
    image = "nvcr.io/nvidia/driver:595.91.07-ubuntu22.04"
    pod = spec(manifests.driver("ns", image=image, args=["init"]))
    assert gpustack.driver_run(pod, main(pod), images.public(image), "5.15.0-119-generic", "turing", lambda: False).ok


# ------------------------------------------------------------------ the runtime
def node(version):
    return {"status": {"nodeInfo": {"containerRuntimeVersion": version}}}


def toolkit_env(**changes):
    env = dict((e["name"], e["value"]) for e in main(spec(manifests.toolkit("ns")))["env"])
    env.update(changes)
    return {"env": [{"name": k, "value": v} for k, v in env.items() if v is not None]}


HANDLERS = {"nvidia": "nvidia"}


def test_containerd_loads_the_handler_only_through_the_host_path_import():
    ok = runtime.from_toolkit(node("containerd://1.7.27"), toolkit_env())
    assert ok.handler
    broken = runtime.from_toolkit(node("containerd://1.7.27"), toolkit_env(RUNTIME_DROP_IN_CONFIG_HOST_PATH=None))
    assert not broken.handler and "container path" in broken.why
    assert runtime.from_toolkit(node("containerd://2.2.0"), toolkit_env(RUNTIME_DROP_IN_CONFIG_HOST_PATH=None)).handler
    assert runtime.from_toolkit(node("cri-o://1.29.5"), toolkit_env(RUNTIME_DROP_IN_CONFIG_HOST_PATH=None)).handler
    plugin = spec(manifests.device_plugin("ns"))
    block = runtime.operand_block(plugin, broken, HANDLERS, "nvidia-device-plugin")
    assert block.kind == "sandbox" and 'no runtime for "nvidia" is configured' in block.message


def test_cdi_default_kind():
    state = runtime.from_toolkit(node("containerd://1.7.27"), toolkit_env())
    exporter = spec(manifests.dcgm_exporter("ns"))
    assert runtime.operand_block(exporter, state, HANDLERS, "dcgm-exporter") is None
    no_kind = runtime.from_toolkit(
        node("containerd://1.7.27"), toolkit_env(NVIDIA_CONTAINER_RUNTIME_MODES_CDI_DEFAULT_KIND=None)
    )
    block = runtime.operand_block(exporter, no_kind, HANDLERS, "dcgm-exporter")
    assert block.kind == "create" and "unresolvable CDI devices nvidia.com/gpu=all" in block.message


def test_operands_without_the_nvidia_runtime_find_no_nvml():
    state = runtime.from_toolkit(node("cri-o://1.29.5"), toolkit_env())
    # each in its own words (GFD: NVIDIA/gpu-feature-discovery#25; dcgm-exporter: DCGM's NVML load)
    for make, component, words in (
        (
            manifests.gpu_feature_discovery,
            "gpu-feature-discovery",
            "error creating NVML labeler: failed to initialize NVML",
        ),
        (manifests.dcgm_exporter, "dcgm-exporter", "Cannot init NVML library; err: ERROR_LIBRARY_NOT_FOUND"),
    ):
        pod = spec(make("ns"))
        del pod["spec"]["runtimeClassName"]
        block = runtime.operand_block(pod, state, HANDLERS, component)
        assert block.kind == "crash" and words in block.log
    plugin = spec(manifests.device_plugin("ns"))
    del plugin["spec"]["runtimeClassName"]
    # the plugin alone also looks for NVML under /driver-root (k8s-device-plugin main.go)
    assert runtime.operand_block(plugin, state, HANDLERS, "nvidia-device-plugin") is None
    plugin["spec"]["containers"][0]["volumeMounts"] = [
        m for m in plugin["spec"]["containers"][0]["volumeMounts"] if m["mountPath"] != "/driver-root"
    ]
    assert runtime.operand_block(plugin, state, HANDLERS, "nvidia-device-plugin").kind == "crash"


def test_workloads_get_the_gpu_the_way_the_plugin_and_toolkit_agree():
    state = runtime.from_toolkit(node("containerd://1.7.27"), toolkit_env())
    plugin = manifests.device_plugin("ns")
    plugin_pod = {"spec": plugin["spec"]["template"]["spec"]}
    vectoradd = manifests.validation_pod("ns", "v")
    assert runtime.workload_block(vectoradd, state, HANDLERS, plugin_pod, 1) is None
    # envvar strategy with the toolkit in cdi mode: the UUID resolves against the management kind (review P6)
    envvar = copy.deepcopy(plugin_pod)
    envvar["spec"]["containers"][0]["env"] = [{"name": "DEVICE_LIST_STRATEGY", "value": "envvar"}]
    block = runtime.workload_block(vectoradd, state, HANDLERS, envvar, 1)
    assert block.kind == "create" and "unresolvable CDI devices management.nvidia.com/gpu=GPU-0" in block.message
    # no runtime class and envvar: device nodes only, no libraries (review V4)
    bare = copy.deepcopy(vectoradd)
    del bare["spec"]["runtimeClassName"]
    assert runtime.workload_block(bare, state, HANDLERS, envvar, 1).kind == "crash"
    # CDI hooks write ld.so.cache: a read-only root filesystem fails the container (review V5)
    ro = copy.deepcopy(vectoradd)
    ro["spec"]["containers"][0]["securityContext"] = {"readOnlyRootFilesystem": True}
    block = runtime.workload_block(ro, state, HANDLERS, plugin_pod, 1)
    assert block.kind == "create" and "read-only file system" in block.message


def test_init_container_wait_is_recognised():
    assert runtime.waits_for_dependency(spec(manifests.device_plugin("ns")))
    pod = spec(manifests.device_plugin("ns"))
    del pod["spec"]["initContainers"]
    assert not runtime.waits_for_dependency(pod)
