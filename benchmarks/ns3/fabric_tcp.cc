// Packet-level run of one fabricplan scenario in ns-3 (mainline modules only), for
// benchmarks/bench_ns3.py. Reads a scenario file written by that script:
//
//   nodes <n_nodes> <n_hosts>
//   link <a> <b> <gbps> <latency_us>          one per cable (full duplex)
//   route <node> <dst_host> <next_hop>        static host route at a switch
//   flow <id> <src> <dst> <bytes> <start_us>
//   hops <node> <dst_host> <next_hop> ...   equal-cost next hops at a switch (--routing spray|adaptive)
//
// Hosts are nodes 0 .. n_hosts-1 (each on one leaf, default route to it), switches store and
// forward (point-to-point devices, IPv4 forwarding). Every flow is a BulkSend TCP connection
// (NewReno, or DCTCP with step ECN marking at K bytes in RED); every egress port has one FIFO
// (drop-tail, or RED/ECN) queue disc of --buffer bytes behind a one-packet device queue (hosts'
// NICs a deep FIFO). --routing: "static" (default) forwards on the route lines (one path per
// flow, the ECMP hash fabricplan drew); "spray" picks one of the hops lines' next hops per packet
// at random (random packet spraying, Dixit et al. INFOCOM 2013); "adaptive" per packet the next hop
// whose egress port holds the fewest bytes (queue disc + device queue), ties at random: per-packet
// adaptive routing on local queue state (DRILL, Ghorbani et al. SIGCOMM 2017; InfiniBand adaptive
// routing and Spectrum-X choose the output port per packet from the switch's own queues). Switches
// only see their own ports: the downlinks at the far end are not known to the choice.
// --maxTimeMs ends the run (speed runs of long flows: bytes received count).
// Prints one line per flow: "fct <id> <us> <bytes_received>", then totals
// ("wall_s", "simulated_us", "drops", "marks").
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <vector>

using namespace ns3;

struct FlowRec {
  uint32_t src, dst;
  uint64_t bytes;
  double start_us;
  uint64_t got = 0;
  double fct_us = -1;
};

static std::vector<FlowRec> g_flows;

// Per-packet multipath forwarding at a switch (see --routing above): the candidates per
// destination address are (interface, gateway) pairs; the choice is made per packet.
class MultipathRouting : public Ipv4RoutingProtocol {
 public:
  struct Hop { uint32_t ifc; Ipv4Address gw; };
  bool adaptive = false;
  std::map<uint32_t, std::vector<Hop>> table;  // destination address -> candidates
  Ptr<UniformRandomVariable> rng = CreateObject<UniformRandomVariable>();

  Ptr<Ipv4Route> RouteOutput(Ptr<Packet>, const Ipv4Header &, Ptr<NetDevice>,
                             Socket::SocketErrno &err) override {
    err = Socket::ERROR_NOROUTETOHOST;  // switches originate nothing; the static protocol answers
    return nullptr;
  }
  uint64_t Backlog(uint32_t ifc) const {
    Ptr<NetDevice> dev = m_ipv4->GetNetDevice(ifc);
    uint64_t bytes = 0;
    Ptr<TrafficControlLayer> tc = m_ipv4->GetObject<Node>()->GetObject<TrafficControlLayer>();
    if (Ptr<QueueDisc> q = tc->GetRootQueueDiscOnDevice(dev)) bytes += q->GetNBytes();
    if (Ptr<PointToPointNetDevice> p2p = DynamicCast<PointToPointNetDevice>(dev)) bytes += p2p->GetQueue()->GetNBytes();
    return bytes;
  }
  bool RouteInput(Ptr<const Packet> p, const Ipv4Header &h, Ptr<const NetDevice>, UnicastForwardCallback ucb,
                  MulticastForwardCallback, LocalDeliverCallback, ErrorCallback) override {
    auto it = table.find(h.GetDestination().Get());
    if (it == table.end()) return false;
    const std::vector<Hop> &hops = it->second;
    size_t pick = 0;
    if (hops.size() > 1) {
      if (!adaptive) {
        pick = rng->GetInteger(0, hops.size() - 1);
      } else {  // fewest queued bytes; ties broken at random (reservoir over the tied ports)
        uint64_t best = UINT64_MAX;
        uint32_t tied = 0;
        for (size_t i = 0; i < hops.size(); ++i) {
          uint64_t b = Backlog(hops[i].ifc);
          if (b < best) { best = b; pick = i; tied = 1; }
          else if (b == best && rng->GetInteger(0, tied++) == 0) pick = i;
        }
      }
    }
    Ptr<Ipv4Route> r = Create<Ipv4Route>();
    r->SetDestination(h.GetDestination());
    r->SetGateway(hops[pick].gw);
    r->SetOutputDevice(m_ipv4->GetNetDevice(hops[pick].ifc));
    r->SetSource(m_ipv4->GetAddress(hops[pick].ifc, 0).GetLocal());
    ucb(r, p, h);
    return true;
  }
  void NotifyInterfaceUp(uint32_t) override {}
  void NotifyInterfaceDown(uint32_t) override {}
  void NotifyAddAddress(uint32_t, Ipv4InterfaceAddress) override {}
  void NotifyRemoveAddress(uint32_t, Ipv4InterfaceAddress) override {}
  void SetIpv4(Ptr<Ipv4> ipv4) override { m_ipv4 = ipv4; }
  void PrintRoutingTable(Ptr<OutputStreamWrapper>, Time::Unit) const override {}

 private:
  Ptr<Ipv4> m_ipv4;
};
static uint32_t g_left = 0;

static void OnRx(uint32_t id, Ptr<const Packet> p, const Address &) {
  FlowRec &f = g_flows[id];
  f.got += p->GetSize();
  if (f.fct_us < 0 && f.got >= f.bytes) {
    f.fct_us = Simulator::Now().GetMicroSeconds() - f.start_us;
    if (--g_left == 0) Simulator::Stop();
  }
}

int main(int argc, char **argv) {
  std::string input, cc = "newreno", routing = "static";
  uint32_t segment = 4096, bufferBytes = 375000, ecnK = 65000, delack = 1, iw = 10;
  uint32_t dupThresh = 3;
  double minRtoMs = 200, maxTimeMs = 2000;
  CommandLine cmd;
  cmd.AddValue("input", "scenario file", input);
  cmd.AddValue("cc", "newreno or dctcp", cc);
  cmd.AddValue("segment", "TCP payload bytes per packet", segment);
  cmd.AddValue("buffer", "bytes of queue per egress port", bufferBytes);
  cmd.AddValue("ecnK", "DCTCP marking threshold, bytes", ecnK);
  cmd.AddValue("minRtoMs", "minimum retransmission timeout, ms", minRtoMs);
  cmd.AddValue("delack", "segments per delayed ACK", delack);
  cmd.AddValue("iw", "initial window, segments", iw);
  cmd.AddValue("routing", "static, spray or adaptive (per packet)", routing);
  cmd.AddValue("dupThresh", "duplicate ACKs before fast retransmit (reordering tolerance)", dupThresh);
  cmd.AddValue("maxTimeMs", "stop after this much simulated time", maxTimeMs);
  cmd.Parse(argc, argv);

  Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                     StringValue(cc == "dctcp" ? "ns3::TcpDctcp" : "ns3::TcpNewReno"));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segment));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(iw));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delack));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 24));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 24));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(minRtoMs)));
  Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
  Config::SetDefault("ns3::TcpSocketBase::ReTxThreshold", UintegerValue(dupThresh));

  std::ifstream in(input);
  if (!in) { std::cerr << "cannot read " << input << "\n"; return 2; }
  uint32_t nNodes = 0, nHosts = 0;
  struct Cable { uint32_t a, b; double gbps, lat; };
  std::vector<Cable> cables;
  std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> routes;
  std::vector<std::tuple<uint32_t, uint32_t, std::vector<uint32_t>>> hops;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string kind;
    s >> kind;
    if (kind == "nodes") s >> nNodes >> nHosts;
    else if (kind == "link") { Cable c; s >> c.a >> c.b >> c.gbps >> c.lat; cables.push_back(c); }
    else if (kind == "route") { uint32_t n, d, h; s >> n >> d >> h; routes.emplace_back(n, d, h); }
    else if (kind == "hops") {
      uint32_t n, d, h; std::vector<uint32_t> nh;
      s >> n >> d;
      while (s >> h) nh.push_back(h);
      hops.emplace_back(n, d, nh);
    }
    else if (kind == "flow") {
      uint32_t id; FlowRec f; s >> id >> f.src >> f.dst >> f.bytes >> f.start_us;
      g_flows.push_back(f);
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  NodeContainer nodes;
  nodes.Create(nNodes);
  InternetStackHelper stack;
  stack.Install(nodes);

  TrafficControlHelper tch;
  std::string maxSize = std::to_string(bufferBytes) + "B";
  if (cc == "dctcp") {
    Config::SetDefault("ns3::RedQueueDisc::UseEcn", BooleanValue(true));
    Config::SetDefault("ns3::RedQueueDisc::UseHardDrop", BooleanValue(false));
    Config::SetDefault("ns3::RedQueueDisc::QW", DoubleValue(1.0));
    Config::SetDefault("ns3::RedQueueDisc::MeanPktSize", UintegerValue(segment + 64));
    tch.SetRootQueueDisc("ns3::RedQueueDisc", "MaxSize", QueueSizeValue(QueueSize(maxSize)),
                         "MinTh", DoubleValue(double(ecnK) / (segment + 64)),
                         "MaxTh", DoubleValue(double(ecnK) / (segment + 64)));
  } else {
    tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize(maxSize)));
  }

  TrafficControlHelper hostTch;
  hostTch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize("100000000B")));
  Ipv4AddressHelper addr("10.0.0.0", "255.255.255.252");
  // per node: neighbour -> (my interface index, neighbour's address)
  std::vector<std::map<uint32_t, std::pair<uint32_t, Ipv4Address>>> adj(nNodes);
  std::vector<Ipv4Address> hostAddr(nHosts);
  QueueDiscContainer qdiscs;
  for (const Cable &c : cables) {
    PointToPointHelper p2p;
    std::ostringstream rate;
    rate << c.gbps << "Gbps";
    p2p.SetDeviceAttribute("DataRate", StringValue(rate.str()));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(segment + 100));
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(int64_t(c.lat * 1000))));
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));
    NetDeviceContainer dev = p2p.Install(nodes.Get(c.a), nodes.Get(c.b));
    // switch egress ports: the scenario's buffer; host NICs: a deep FIFO (a host's stack
    // back-pressures its sockets, TCP small queues, instead of dropping its own packets)
    for (uint32_t side = 0; side < 2; ++side) {
      bool host = (side == 0 ? c.a : c.b) < nHosts;
      QueueDiscContainer q = (host ? hostTch : tch).Install(dev.Get(side));
      if (!host) qdiscs.Add(q);
    }
    Ipv4InterfaceContainer ifc = addr.Assign(dev);
    addr.NewNetwork();
    adj[c.a][c.b] = {ifc.Get(0).second, ifc.GetAddress(1)};
    adj[c.b][c.a] = {ifc.Get(1).second, ifc.GetAddress(0)};
    if (c.a < nHosts) hostAddr[c.a] = ifc.GetAddress(0);
    if (c.b < nHosts) hostAddr[c.b] = ifc.GetAddress(1);
  }
  Ipv4StaticRoutingHelper srh;
  for (uint32_t h = 0; h < nHosts; ++h) {
    auto &[leaf, info] = *adj[h].begin();
    srh.GetStaticRouting(nodes.Get(h)->GetObject<Ipv4>())->SetDefaultRoute(info.second, info.first);
  }
  for (auto &[n, d, nh] : routes) {
    auto &info = adj[n].at(nh);
    srh.GetStaticRouting(nodes.Get(n)->GetObject<Ipv4>())->AddHostRouteTo(hostAddr[d], info.second, info.first);
  }
  if (routing != "static") {
    std::map<uint32_t, Ptr<MultipathRouting>> mp;
    for (auto &[n, d, nh] : hops) {
      if (!mp.count(n)) {
        Ptr<MultipathRouting> r = CreateObject<MultipathRouting>();
        r->adaptive = routing == "adaptive";
        Ptr<Ipv4> ipv4 = nodes.Get(n)->GetObject<Ipv4>();
        DynamicCast<Ipv4ListRouting>(ipv4->GetRoutingProtocol())->AddRoutingProtocol(r, 10);
        mp[n] = r;
      }
      std::vector<MultipathRouting::Hop> &cand = mp[n]->table[hostAddr[d].Get()];
      for (uint32_t h : nh) cand.push_back({adj[n].at(h).first, adj[n].at(h).second});
    }
  }

  g_left = g_flows.size();
  for (uint32_t i = 0; i < g_flows.size(); ++i) {
    FlowRec &f = g_flows[i];
    uint16_t port = 1000 + i % 60000;
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sa = sink.Install(nodes.Get(f.dst));
    sa.Start(Seconds(0));
    sa.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, i));
    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(hostAddr[f.dst], port));
    bulk.SetAttribute("MaxBytes", UintegerValue(f.bytes));
    bulk.SetAttribute("SendSize", UintegerValue(segment));
    ApplicationContainer ba = bulk.Install(nodes.Get(f.src));
    ba.Start(MicroSeconds(f.start_us));
  }
  auto t1 = std::chrono::steady_clock::now();
  Simulator::Stop(MicroSeconds(int64_t(maxTimeMs * 1000)));
  Simulator::Run();
  auto t2 = std::chrono::steady_clock::now();
  double simulated = Simulator::Now().GetMicroSeconds();
  uint64_t drops = 0, marks = 0;
  for (uint32_t i = 0; i < qdiscs.GetN(); ++i) {
    const QueueDisc::Stats &st = qdiscs.Get(i)->GetStats();
    drops += st.nTotalDroppedPackets;
    marks += st.nTotalMarkedPackets;
  }
  for (uint32_t i = 0; i < g_flows.size(); ++i)
    std::cout << "fct " << i << " " << g_flows[i].fct_us << " " << g_flows[i].got << "\n";
  std::cout << "setup_s " << std::chrono::duration<double>(t1 - t0).count() << "\n";
  std::cout << "wall_s " << std::chrono::duration<double>(t2 - t1).count() << "\n";
  std::cout << "simulated_us " << simulated << "\n";
  std::cout << "drops " << drops << "\nmarks " << marks << "\n";
  Simulator::Destroy();
  return 0;
}
