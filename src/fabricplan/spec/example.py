"""The commented example that `fabricplan init` writes (kept valid by a test)."""

EXAMPLE_SPEC_YAML = """\
# fabricplan cluster spec. Every field is optional unless marked "required".
# `fabricplan schema` prints the full JSON Schema; `fabricplan catalog list` shows the ids.
name: my-cluster

cluster:
  gpu: h100-sxm            # required: catalog GPU id, or inline {peak_dense_tflops: {bf16: ..}, ...}
  gpus: 128                # required: total GPUs (a multiple of gpus_per_node)
  gpus_per_node: 8
  scale_up_domain: 8       # GPUs in one NVLink island (default: gpus_per_node)
  nics_per_node: 8         # backend (scale-out) NICs per node, one rail each
  # nic_speed_gbps: 400    # default: each fabric's own link rate
  include_servers: true    # price servers too, to report the network share of cluster capex
  # grow_to_gpus: 1024     # planned growth: design for this size (its switch tiers), cost the first phase (gpus)

topology:
  # style: rail_optimized  # rail_optimized | leaf_spine (ToR, in-rack DAC) | fat_tree | rail_only | multi_plane;
                           # left out, compare tries
                           # every style (and every catalog switch a fabric entry does not fix), cheapest wins
  tiers: auto              # auto | 1 | 2 | 3 | 4
  oversubscription: [1.0, 1.0]   # down:up per tier [leaf, spine]; 1.0 = non-blocking
  reserved_leaf_ports: 0
  # planes: 2              # multi_plane: each NIC a port on each plane, at 1/planes of its speed

# Fabric profiles to compare (catalog ids); an entry may override hardware:
#   - {profile: roce-v2, switch: sw_eth_sn5600, nic: nic_bf3_supernic_400}
fabrics: [ethernet-tcp, roce-v2, infiniband-ndr]

economics:
  horizon_years: 4
  price_point: default     # low | default | high catalog prices
  # energy_usd_per_kwh: 0.08   # default from the catalog (parameters)
  # pue: 1.3
  include_colocation: true

operations:
  maturity: basic          # none | basic | experienced | expert (lossless-Ethernet / RDMA skill)
  existing_ethernet: false # an Ethernet estate and team already exist
  topology_aware_scheduling: false

constraints:
  # latency_sla_us: 5.0

# Switches the team owns; the design search prices reusing them (no capex, their speed and ports):
# estate:
#   switches:
#     - {model: sw_eth_th3, count: 24, speed_gbps: 100}

# Periods of the horizon with their own jobs (a job then names its phase):
# phases:
#   - {name: train-2027, hours_share: 0.6}
#   - {name: serve-2028, hours_share: 0.4}

jobs:
  - name: llama3-70b-pretrain
    model: llama3-70b      # a model preset, or inline dimensions {layers, hidden, heads, vocab, ...}
    tp: 8
    pp: 4
    global_batch_sequences: 512
    micro_batch_sequences: 1
    seq_len_tokens: 8192
    share: 1.0             # share of the cluster's time (within its phase, with phases)
    # phase: train-2027
"""
