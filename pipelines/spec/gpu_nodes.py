"""Which Kubernetes nodes a GPU component lands on: node labels and tolerations per platform.

The spec names the GPU with Vertex AI's accelerator names (`NVIDIA_TESLA_T4`,
`NVIDIA_L4`, ...), which Vertex AI takes as they are. On Kubernetes the node
label that carries the GPU model depends on who set it:

- `gke`: GKE labels GPU nodes `cloud.google.com/gke-accelerator` with
  `nvidia-tesla-t4`, `nvidia-l4`, ... and taints them `nvidia.com/gpu`.
- `nvidia-gfd`: NVIDIA's GPU feature discovery (part of the GPU operator)
  labels nodes `nvidia.com/gpu.product` with the product name the driver
  reports, spaces as dashes (`Tesla-T4`, `NVIDIA-A100-SXM4-40GB`). One Vertex
  name can match several products (A100 40GB as SXM4 or PCIe), so the match
  is a node affinity over all of them. An accelerator that is not a Vertex
  name is taken as the exact product label.
- `none`: only the `nvidia.com/gpu` resource request; any GPU node fits.

Example:
    >>> gpu_placement("gke", "NVIDIA_TESLA_T4").node_selector
    {'cloud.google.com/gke-accelerator': 'nvidia-tesla-t4'}
"""

from __future__ import annotations

import dataclasses

__all__ = ["GpuPlacement", "gpu_placement", "GKE_LABEL", "GFD_LABEL", "GPU_TOLERATION"]
GKE_LABEL = "cloud.google.com/gke-accelerator"
GFD_LABEL = "nvidia.com/gpu.product"
# GKE taints GPU nodes `nvidia.com/gpu=present:NoSchedule`; the GPU operator's docs use the same key.
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}

# Vertex AI accelerator name -> (GKE label value, GPU feature discovery product names).
_ACCELERATORS: dict[str, tuple[str, tuple[str, ...]]] = {
    "NVIDIA_TESLA_K80": ("nvidia-tesla-k80", ("Tesla-K80",)),
    "NVIDIA_TESLA_P4": ("nvidia-tesla-p4", ("Tesla-P4",)),
    "NVIDIA_TESLA_P100": ("nvidia-tesla-p100", ("Tesla-P100-PCIE-16GB", "Tesla-P100-SXM2-16GB")),
    "NVIDIA_TESLA_V100": (
        "nvidia-tesla-v100",
        ("Tesla-V100-SXM2-16GB", "Tesla-V100-SXM2-32GB", "Tesla-V100-PCIE-16GB", "Tesla-V100-PCIE-32GB"),
    ),
    "NVIDIA_TESLA_T4": ("nvidia-tesla-t4", ("Tesla-T4",)),
    "NVIDIA_TESLA_A100": ("nvidia-tesla-a100", ("NVIDIA-A100-SXM4-40GB", "NVIDIA-A100-PCIE-40GB")),
    "NVIDIA_A100_80GB": ("nvidia-a100-80gb", ("NVIDIA-A100-SXM4-80GB", "NVIDIA-A100-80GB-PCIe")),
    "NVIDIA_L4": ("nvidia-l4", ("NVIDIA-L4",)),
    "NVIDIA_H100_80GB": ("nvidia-h100-80gb", ("NVIDIA-H100-80GB-HBM3", "NVIDIA-H100-PCIe")),
    "NVIDIA_H100_MEGA_80GB": ("nvidia-h100-mega-80gb", ("NVIDIA-H100-80GB-HBM3",)),
    "NVIDIA_H200_141GB": ("nvidia-h200-141gb", ("NVIDIA-H200",)),
}


@dataclasses.dataclass(frozen=True)
class GpuPlacement:
    """Node labels to require and taints to tolerate for one GPU component.

    `node_selector` is an exact label match; `node_affinity_values` (one label,
    any of several values) is used where one GPU model has several product names.
    """

    node_selector: dict[str, str] = dataclasses.field(default_factory=dict)
    node_affinity_label: str | None = None
    node_affinity_values: tuple[str, ...] = ()
    tolerations: tuple[dict, ...] = ()

    def kubernetes_affinity(self) -> dict | None:
        """The pod's `affinity` (Kubernetes API field names), or None."""
        if not self.node_affinity_values:
            return None
        term = {"key": self.node_affinity_label, "operator": "In", "values": list(self.node_affinity_values)}
        return {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [term]}]}
            }
        }


def gpu_placement(platform: str, accelerator: str | None) -> GpuPlacement:
    """Where a component asking for GPUs of type `accelerator` may run on `platform`.

    Raises:
        ValueError: `platform` is `gke` and `accelerator` is not a Vertex AI / GKE GPU name.
    """
    if platform == "none":
        return GpuPlacement()
    tolerations = (dict(GPU_TOLERATION),)
    if not accelerator:
        return GpuPlacement(tolerations=tolerations)
    known = _ACCELERATORS.get(accelerator.upper())
    if platform == "gke":
        if known is None:
            gke_values = sorted(value for value, _ in _ACCELERATORS.values())
            if accelerator.lower() not in gke_values:
                raise ValueError(
                    f"unknown GPU for GKE. Expected a Vertex AI accelerator name ({', '.join(sorted(_ACCELERATORS))}) "
                    f"or a GKE accelerator label ({', '.join(gke_values)}). Received: accelerator={accelerator!r}."
                )
            return GpuPlacement(node_selector={GKE_LABEL: accelerator.lower()}, tolerations=tolerations)
        return GpuPlacement(node_selector={GKE_LABEL: known[0]}, tolerations=tolerations)
    products = known[1] if known else (accelerator,)
    if len(products) == 1:
        return GpuPlacement(node_selector={GFD_LABEL: products[0]}, tolerations=tolerations)
    return GpuPlacement(node_affinity_label=GFD_LABEL, node_affinity_values=products, tolerations=tolerations)
