// Collective costs beyond the book's worked problems: the rules the formulas must obey and
// hand-derived cases (no-wraparound lines, strided sub-axes, DCN, GB200, SHARP, achievable mode).
#include "hardware/chipcatalog.h"
#include "hardware/collective.h"

#include <QTest>

#include <cmath>

using namespace meshplan::model;

namespace {

const Chip &chip(const char *id)
{
    return *ChipCatalog::builtin().find(id);
}

Topology tpu(const char *id, std::vector<int> shape, int slices = 1)
{
    return Topology::tpuSlice(chip(id), shape, slices).value();
}

std::vector<AxisSpan> whole(const Topology &t, std::vector<std::string> names)
{
    return wholeAxes(t, names, "axes").value();
}

bool near(double got, double want, double rtol = 1e-9)
{
    return std::fabs(got - want) <= rtol * std::fabs(want);
}

constexpr double kMB = 1 << 20;

} // namespace

class TestCollective : public QObject
{
    Q_OBJECT

private slots:
    void ringIsFasterThanLine()
    {
        // A 16-long v5e axis wraps (V / W_bidi); a 4-long one is a line ((N-1)/N V / W_one-way).
        const auto ring = tpu("tpu-v5e", {16, 16});
        const auto line = tpu("tpu-v5e", {4, 4});
        const double v = 64 * kMB;
        const auto r = collectiveCost(ring, CollectiveOp::AllGather, whole(ring, {"x"}), v);
        const auto l = collectiveCost(line, CollectiveOp::AllGather, whole(line, {"x"}), v);
        QVERIFY(near(r.time, v / 9e10));
        QVERIFY(near(l.time, 0.75 * v / 4.5e10));
        QVERIFY(l.time > r.time);
    }

    void moreAxesMeanMoreBandwidth()
    {
        const auto cube = tpu("tpu-v5p", {4, 4, 4});
        const double v = 256 * kMB;
        const double one = collectiveCost(cube, CollectiveOp::AllGather, whole(cube, {"x"}), v).time;
        const double three = collectiveCost(cube, CollectiveOp::AllGather, whole(cube, {"x", "y", "z"}), v).time;
        QVERIFY(near(one, v / 1.8e11));
        QVERIFY(near(three, v / (3 * 1.8e11)));
    }

    void reduceScatterAllReduceAllToAllRatios()
    {
        const auto t = tpu("tpu-v5e", {16, 16});
        const double v = 128 * kMB;
        const auto axes = whole(t, {"y"});
        const double ag = collectiveCost(t, CollectiveOp::AllGather, axes, v).time;
        QVERIFY(near(collectiveCost(t, CollectiveOp::ReduceScatter, axes, v).time, ag));
        QVERIFY(near(collectiveCost(t, CollectiveOp::AllReduce, axes, v).time, 2 * ag));
        QVERIFY(near(collectiveCost(t, CollectiveOp::AllToAll, axes, v).time, ag / 4)); // book: AG / 4 on a ring
    }

    void smallMessagesAreLatencyBound()
    {
        const auto t = tpu("tpu-v5e", {16, 16});
        const auto c = collectiveCost(t, CollectiveOp::AllGather, whole(t, {"x"}), 4096);
        QVERIFY(c.latencyBound);
        QVERIFY(near(c.time, 8 * 1e-6)); // floor(16/2) hops of 1 us
        const auto big = collectiveCost(t, CollectiveOp::AllGather, whole(t, {"x"}), 1e9);
        QVERIFY(!big.latencyBound);
    }

    void stridedSubAxisSharesLinks()
    {
        // 4 chips taken contiguously from a 16-ring form a line of 4; 4 chips taken every 4th
        // share the ring's links with the 3 other such groups: (W_bidi / 4) per group.
        const auto t = tpu("tpu-v5e", {16, 16});
        const double v = 32 * kMB;
        const auto inner = collectiveCost(t, CollectiveOp::AllGather, {{0, 4, 1}}, v);
        const auto outer = collectiveCost(t, CollectiveOp::AllGather, {{0, 4, 4}}, v);
        QVERIFY(near(inner.time, 0.75 * v / 4.5e10));
        QVERIFY(near(outer.time, v / (9e10 / 4)));
    }

    void dcnAcrossSlices()
    {
        // Hand-derived: 4 slices of v5p 4x4x4; an AllReduce of V per chip over slices alone costs
        // 2V / W_dcn in the book's model (ch. 5: T = 2 * 2DF / (M W_dcn) with V = 2DF / M).
        const auto t = tpu("tpu-v5p", {4, 4, 4}, 4);
        const double v = 100 * kMB;
        const auto c = collectiveCost(t, CollectiveOp::AllReduce, whole(t, {"slice"}), v);
        QVERIFY(near(c.time, 2 * v / 6.25e9));
        QCOMPARE(c.bindingLink, LinkKind::Dcn);
        // Gathering over the slice and all three ICI axes: each chip carries only its 1/64 stripe
        // over DCN, so ICI (V / 3 W_bidi) and DCN (V / 64 / W_dcn) are compared.
        const auto both = collectiveCost(t, CollectiveOp::AllGather, whole(t, {"x", "y", "z", "slice"}), v);
        QVERIFY(near(both.bandwidthTime, std::max(v / (3 * 1.8e11), v / 64 / 6.25e9)));
        // The achievable model drops the book's simplification and keeps (S-1)/S, then derates.
        CollectiveOptions achievable;
        achievable.mode = CostMode::Achievable;
        const auto real = collectiveCost(t, CollectiveOp::AllReduce, whole(t, {"slice"}), v, achievable);
        QVERIFY(near(real.bandwidthTime, 2 * v * 0.75 / (6.25e9 * 0.75)));
    }

    void gpuNodeAndScaleOut()
    {
        const Chip &h100 = chip("h100-sxm");
        const auto node = Topology::gpuCluster(h100, 1, 8).value();
        const double v = 512 * kMB;
        // Inside a node: (N-1)/N V / W_gpu (book ch. 12 quiz 2 Q3: 1.04 ms for 536 MB).
        QVERIFY(near(collectiveCost(node, CollectiveOp::AllGather, whole(node, {"gpu"}), v).time, v * 7 / (8 * 4.5e11)));
        // SuperPod of 128 nodes: the leaf level (32 nodes at 400 GB/s) binds, 413 GB/s effective.
        const auto pod = Topology::gpuCluster(h100, 128, 8).value();
        const auto all = collectiveCost(pod, CollectiveOp::AllGather, whole(pod, {"gpu", "node"}), v);
        QVERIFY(near(all.time, v * 31 / (32 * 4e11)));
        QCOMPARE(all.bindingLink, LinkKind::ScaleOut);
        // One GPU per node (the inner axis used by tensor parallelism): each gets 1/8 of the NICs.
        const auto outer = collectiveCost(pod, CollectiveOp::AllGather, whole(pod, {"node"}), v);
        QVERIFY(near(outer.time, v * 31 / (32 * 4e11 / 8)));
    }

    // A pipeline stage sends its activations to the next over one link, one way. Between nodes
    // every GPU of the node sends to its peer at once, so each has an eighth of the node's 400 GB/s
    // of NICs, at the scale-out efficiency (0.8) in the achievable model. The achievable model adds
    // the link's latency (6 us between nodes, 3 us on NVLink) to the transfer; the book's ideal
    // model takes the larger of the two.
    void sendRecvTakesOneLink()
    {
        const auto pod = Topology::gpuCluster(chip("h100-sxm"), 4, 8).value();
        CollectiveOptions achievable;
        achievable.mode = CostMode::Achievable;
        const double v = 32 * kMB;
        const auto across = collectiveCost(pod, CollectiveOp::SendRecv, whole(pod, {"node"}), v, achievable);
        QVERIFY(near(across.time, v / (4e11 / 8 * 0.8) + 6e-6));
        QCOMPARE(across.bindingLink, LinkKind::ScaleOut);
        QVERIFY(near(collectiveCost(pod, CollectiveOp::SendRecv, whole(pod, {"node"}), v).time, v / (4e11 / 8)));
        const auto inside = collectiveCost(pod, CollectiveOp::SendRecv, whole(pod, {"gpu"}), v, achievable);
        QVERIFY(near(inside.time, v / (4.5e11 * 0.82) + 3e-6));
        QCOMPARE(inside.bindingLink, LinkKind::Nvlink);
        // A small message is latency-bound: the ideal model waits the latency alone.
        const auto tiny = collectiveCost(pod, CollectiveOp::SendRecv, whole(pod, {"node"}), 1024.0);
        QVERIFY(near(tiny.time, 6e-6));
        QVERIFY(tiny.latencyBound);
    }

    void achievableAllGatherWaitsOnEveryRingStep()
    {
        // NCCL runs all-gather and reduce-scatter as rings (src/graph/tuning.cc): 511 steps over 512
        // GPUs, of which 63 cross the network. Hand-derived: 64 x 7 x 3 us + 63 x 6 us = 1.722 ms;
        // the ideal mode keeps the book's log-depth latency, 3 x 3 us + 6 x 6 us = 45 us.
        const auto cluster = Topology::gpuCluster(chip("h100-sxm"), 64, 8).value();
        CollectiveOptions achievable;
        achievable.mode = CostMode::Achievable;
        const double v = 64 * kMB;
        for (auto op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter}) {
            const auto ring = collectiveCost(cluster, op, whole(cluster, {"gpu", "node"}), v, achievable);
            QVERIFY(near(ring.latencyTime, 64 * 7 * 3e-6 + 63 * 6e-6));
        }
        const auto book = collectiveCost(cluster, CollectiveOp::AllGather, whole(cluster, {"gpu", "node"}), v);
        QVERIFY(near(book.latencyTime, 3 * 3e-6 + 6 * 6e-6));
        // One GPU per node (data parallelism beside tensor parallelism): the 63 network steps only.
        const auto outer = collectiveCost(cluster, CollectiveOp::AllGather, whole(cluster, {"node"}), v, achievable);
        QVERIFY(near(outer.latencyTime, 63 * 6e-6));
        // All-reduce keeps its tree (NCCL picks the tree at scale): 2 x (3 x 3 us + 6 x 6 us).
        const auto reduce = collectiveCost(cluster, CollectiveOp::AllReduce, whole(cluster, {"gpu", "node"}), v, achievable);
        QVERIFY(near(reduce.latencyTime, 2 * (3 * 3e-6 + 6 * 6e-6)));
    }

    void forwardedAllToAllCrossesTheNetworkOncePerNode()
    {
        // DeepEP's normal kernels (DeepSeek-V3 report sec. 3.2.2) send a token over InfiniBand once
        // per node that holds one of its experts, then forward it over NVLink. EP32 on 4 H100 nodes,
        // top-8: a node is missed with probability (3/4)^8, so each token crosses to
        // 3 x (1 - 0.75^8) = 2.6997 other nodes, not 8 x 3/4 = 6 copies: a share of 0.44994.
        // Hand-derived: V x 0.44994 x 3/16 of it leaves each node, over 400 GB/s x 0.8.
        const auto cluster = Topology::gpuCluster(chip("h100-sxm"), 4, 8).value();
        CollectiveOptions plain;
        plain.mode = CostMode::Achievable;
        CollectiveOptions forwarded = plain;
        forwarded.forwardedTopK = 8;
        const double v = 1e10;
        const auto group = whole(cluster, {"gpu", "node"});
        const double share = 4.0 * (1.0 - std::pow(0.75, 8)) / 8.0;
        QVERIFY(near(share, 0.449944, 1e-5));
        const auto every = collectiveCost(cluster, CollectiveOp::AllToAll, group, v, plain);
        const auto once = collectiveCost(cluster, CollectiveOp::AllToAll, group, v, forwarded);
        QVERIFY(near(every.bandwidthTime, v * 3.0 / 16.0 / (4e11 * 0.8)));
        QVERIFY(near(once.bandwidthTime, v * share * 3.0 / 16.0 / (4e11 * 0.8)));
        // Forwarded inside the destination node, a token reaches 32 x (1 - (31/32)^8) = 7.1776
        // GPUs, each copy but a GPU's own crossing NVLink once: V / 32 x 7.1776 / 8 x 7/8 over
        // 450 GB/s x 0.82 per GPU, 0.66 ms against the network's 2.64 ms. With the network made
        // fast (an inline chip with 100x the node egress), that NVLink leg binds.
        Chip fastNetwork = chip("h100-sxm");
        fastNetwork.scaleOut->nodeEgressBandwidth *= 100.0;
        const auto fast = Topology::gpuCluster(fastNetwork, 4, 8).value();
        const double gpuShare = 32.0 * (1.0 - std::pow(31.0 / 32.0, 8)) / 8.0;
        QVERIFY(near(gpuShare, 0.897200, 1e-5));
        QVERIFY(near(collectiveCost(fast, CollectiveOp::AllToAll, group, v, forwarded).bandwidthTime,
                     v / 32.0 * gpuShare * 7.0 / 8.0 / (4.5e11 * 0.82)));
        // Every copy sent, only the node's own share stays on NVLink: V x 7/32 / 32.
        QVERIFY(near(collectiveCost(fast, CollectiveOp::AllToAll, group, v, plain).bandwidthTime,
                     v * 7.0 / (32.0 * 32.0) / (4.5e11 * 0.82)));
        // Top-1 has nothing to share.
        forwarded.forwardedTopK = 1;
        QVERIFY(near(collectiveCost(cluster, CollectiveOp::AllToAll, group, v, forwarded).time, every.time));
    }

    void forwardedAllToAllSendsATokenOncePerGpu()
    {
        // The same kernels send a token once to each GPU that holds one of its experts (DeepEP's
        // dispatch takes is_token_in_rank [tokens, ranks], and its intranode test counts the bytes
        // received as one row per token and rank). EP8 in one H100 node, top-8: a GPU is missed
        // with probability (7/8)^8, so a token reaches 8 x (1 - 0.875^8) = 5.2511 GPUs, a share
        // of 0.65639 of its 8 copies. Hand-derived: V / 8 x 0.65639 x 7/8 over 450 GB/s x 0.82.
        const auto node = Topology::gpuCluster(chip("h100-sxm"), 1, 8).value();
        CollectiveOptions plain;
        plain.mode = CostMode::Achievable;
        CollectiveOptions forwarded = plain;
        forwarded.forwardedTopK = 8;
        const double v = 1e10;
        const double share = 8.0 * (1.0 - std::pow(0.875, 8)) / 8.0;
        QVERIFY(near(share, 0.656391, 1e-5));
        const auto every = collectiveCost(node, CollectiveOp::AllToAll, whole(node, {"gpu"}), v, plain);
        const auto once = collectiveCost(node, CollectiveOp::AllToAll, whole(node, {"gpu"}), v, forwarded);
        QVERIFY(near(every.bandwidthTime, v / 8.0 * 7.0 / 8.0 / (4.5e11 * 0.82)));
        QVERIFY(near(once.bandwidthTime, v / 8.0 * share * 7.0 / 8.0 / (4.5e11 * 0.82)));
        // A GB200 rack, EP 64 of its 72 GPUs, top-8: 64 x (1 - (63/64)^8) / 8 = 0.94699.
        const auto rack = Topology::gpuCluster(chip("gb200"), 1, 72).value();
        const auto group = std::vector<AxisSpan>{{0, 64, 1}};
        const double rackShare = 64.0 * (1.0 - std::pow(63.0 / 64.0, 8)) / 8.0;
        QVERIFY(near(collectiveCost(rack, CollectiveOp::AllToAll, group, v, forwarded).bandwidthTime,
                     rackShare * collectiveCost(rack, CollectiveOp::AllToAll, group, v, plain).bandwidthTime));
    }

    void sharpHalvesAnAllReduce()
    {
        const auto node = Topology::gpuCluster(chip("h100-sxm"), 1, 8).value();
        const double v = 1e9;
        CollectiveOptions sharp;
        sharp.sharp = true;
        const double plain = collectiveCost(node, CollectiveOp::AllReduce, whole(node, {"gpu"}), v).time;
        const double reduced = collectiveCost(node, CollectiveOp::AllReduce, whole(node, {"gpu"}), v, sharp).time;
        QVERIFY(near(plain, 2 * v * 7 / 8 / 4.5e11));
        QVERIFY(near(reduced, v / 4.5e11)); // book ch. 12: "exact, not off by 1/N"
    }

    void gb200DomainOf72()
    {
        // Hand-derived: 72 GPUs at 900 GB/s; AllGather (71/72) V / 9e11; AllToAll 71 V / (72^2 9e11)
        // (10 GB, so that the 7 tree steps of 3 us latency stay below the bandwidth term).
        const auto rack = Topology::gpuCluster(chip("gb200"), 1, 72).value();
        const double v = 1e10;
        QVERIFY(near(collectiveCost(rack, CollectiveOp::AllGather, whole(rack, {"gpu"}), v).time, v * 71 / 72 / 9e11));
        QVERIFY(near(collectiveCost(rack, CollectiveOp::AllToAll, whole(rack, {"gpu"}), v).time,
                     v * 71 / (72.0 * 72.0) / 9e11));
    }

    void raggedAllToAllScalesWithActiveFraction()
    {
        const auto node = Topology::gpuCluster(chip("h100-sxm"), 1, 8).value();
        CollectiveOptions half;
        half.activeFraction = 0.5;
        const double dense = collectiveCost(node, CollectiveOp::AllToAll, whole(node, {"gpu"}), 1e9).time;
        const double sparse = collectiveCost(node, CollectiveOp::AllToAll, whole(node, {"gpu"}), 1e9, half).time;
        QVERIFY(near(sparse, dense / 2)); // book ch. 12 pop quiz 2: about half
    }

    void achievableIsNeverFasterThanIdeal()
    {
        CollectiveOptions achievable;
        achievable.mode = CostMode::Achievable;
        for (const auto &c : ChipCatalog::builtin().chips()) {
            // One slice: across DCN the book prices V / W_dcn where the achievable model keeps the
            // ring's (S-1)/S, so for few slices the book's figure is the pessimistic one.
            const auto t = c.isTpu() ? Topology::tpuSlice(c, {4, 4}, 1).value() : Topology::gpuCluster(c, 4, 8).value();
            std::vector<AxisSpan> all;
            for (std::size_t i = 0; i < t.axes().size(); ++i)
                all.push_back({static_cast<int>(i), t.axes()[i].size, 1});
            for (auto op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter, CollectiveOp::AllReduce,
                            CollectiveOp::AllToAll})
                for (double v : {1e3, 1e6, 1e9}) {
                    const double ideal = collectiveCost(t, op, all, v).time;
                    const double real = collectiveCost(t, op, all, v, achievable).time;
                    QVERIFY2(ideal > 0 && real >= ideal, qPrintable(QString::fromStdString(c.id)));
                }
        }
    }

    void degenerateGroupsCostNothing()
    {
        const auto t = tpu("tpu-v5e", {1, 16});
        QCOMPARE(collectiveCost(t, CollectiveOp::AllReduce, whole(t, {"x"}), 1e9).time, 0.0);
        QCOMPARE(collectiveCost(t, CollectiveOp::AllReduce, {}, 1e9).time, 0.0);
        QCOMPARE(collectiveCost(t, CollectiveOp::AllReduce, whole(t, {"y"}), 0).time, 0.0);
    }

    void unknownAxisIsAnError()
    {
        const auto t = tpu("tpu-v5e", {4, 4});
        const auto spans = wholeAxes(t, {"z"}, "axes");
        QVERIFY(!spans.hasValue());
        QCOMPARE(QString::fromStdString(spans.error().path), QStringLiteral("axes"));
        QVERIFY(!wholeAxes(t, {"x", "x"}, "axes").hasValue());
    }
};

QTEST_APPLESS_MAIN(TestCollective)
#include "tst_collective.moc"
