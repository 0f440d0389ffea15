#include "cost/derivationrecorder.h"

#include "base/units.h"

#include <algorithm>
#include <cmath>

namespace meshplan::model {

void DerivationRecorder::record(const std::string &path, double value, std::string expression,
                                std::vector<DerivationValue> values, std::string words, std::string chapter,
                                std::string section)
{
    if (!m_sink)
        return;
    Derivation d;
    d.expression = std::move(expression);
    d.values = std::move(values);
    d.value = value;
    d.words = std::move(words);
    d.chapter = std::move(chapter);
    d.section = std::move(section);
    (*m_sink)[path] = std::move(d);
}

std::string DerivationRecorder::term(const std::string &name, double value, std::string expression,
                                     std::vector<DerivationValue> values, std::string words, std::string chapter,
                                     std::string section)
{
    const std::string path = "terms." + name;
    if (!m_sink)
        return path;
    m_terms[name] = value;
    record(path, value, std::move(expression), std::move(values), std::move(words), std::move(chapter),
           std::move(section));
    return path;
}

std::string DerivationRecorder::sum(const std::vector<DerivationValue> &parts)
{
    if (parts.empty())
        return "0";
    std::string out;
    for (const auto &p : parts)
        out += (out.empty() ? "" : " + ") + p.name;
    return out;
}

namespace {

std::string collectiveWords(CollectiveOp op, bool tpu)
{
    switch (op) {
    case CollectiveOp::AllGather:
        return "An AllGather over n chips has each chip receive the (n − 1)/n of V it lacks: about V / W on a ring "
               "(bidirectional links halve it), plus a latency per hop.";
    case CollectiveOp::ReduceScatter:
        return "A ReduceScatter costs what an AllGather of the same V does: each chip sends the (n − 1)/n of V it "
               "does not keep.";
    case CollectiveOp::AllReduce:
        return std::string("An AllReduce is a ReduceScatter followed by an AllGather: twice the bytes of either.")
               + (tpu ? "" : " NCCL's ring moves 2·(n − 1)/n·V per GPU.");
    case CollectiveOp::AllToAll:
        return "An AllToAll sends each chip's (n − 1)/n of its V to the others; on a ring or torus axis it costs "
               "about a quarter of an AllGather of the same V.";
    case CollectiveOp::SendRecv:
        return "A point-to-point transfer to the next pipeline stage: the message over one link's bandwidth, plus "
               "its latency.";
    }
    return "";
}

} // namespace

void explainOperation(DerivationRecorder &why, std::size_t index, const OperationCost &operation, double flopsRate,
                      const std::string &rateSource, double hbmRate, const std::string &hbmSource)
{
    if (!why.on())
        return;
    why.term("operation_" + std::to_string(index) + "_time_s", operation.timeS, "max(flops / flops_rate, bytes / hbm_rate)",
             {{"flops", operation.flops, "", operation.op + ": FLOPs per chip, one occurrence"},
              {"flops_rate", flopsRate, "", rateSource},
              {"bytes", operation.bytes, "", operation.op + ": HBM bytes per chip (inputs, weights, outputs), one occurrence"},
              {"hbm_rate", hbmRate, "", hbmSource}},
             "The roofline: an operation takes the longer of its FLOPs at the compute rate and its bytes at the HBM "
             "bandwidth. Its arithmetic intensity, FLOPs per byte, against the chip's ridge says which one binds.",
             "1", "Where does the time go?");
}

void explainCapacity(DerivationRecorder &why, const Chip &chip)
{
    if (!why.on())
        return;
    why.record("memory_per_chip.capacity", double(chip.hbmBytes), "hbm_bytes",
               {{"hbm_bytes", double(chip.hbmBytes), "", "catalog: " + chip.id + " HBM capacity"}}, "The chip's HBM.",
               chip.isTpu() ? "2" : "12", chip.isTpu() ? "TPU memory" : "GPU memory");
}

void explainCollective(DerivationRecorder &why, const Topology &topology, std::size_t index, const CollectiveUse &use,
                       const std::vector<AxisSpan> &spans, double count, double timeEach, double exposed,
                       const CollectiveOptions &options, const std::string &overlapRule)
{
    if (!why.on())
        return;
    const std::string path = "collectives[" + std::to_string(index) + "]";
    const CollectiveCost one = collectiveCost(topology, use.op, spans, use.bytes, options);
    const bool ideal = options.mode == CostMode::Ideal;
    const bool tpu = topology.chip().isTpu();
    const std::string chapter = tpu ? "3" : "12";
    const std::string section = tpu ? "A deeper dive into communication primitives" : "Collectives on GPUs";
    std::string axes;
    for (const auto &a : use.axes)
        axes += (axes.empty() ? "" : ",") + a;
    const std::string what = std::string(collectiveName(use.op)) + " of " + formatBytes(use.bytes, true) + " over "
                             + (axes.empty() ? "no axis" : axes);
    const DerivationValue countValue{"count", count, "", "occurrences per step"};
    std::string words = collectiveWords(use.op, tpu);
    if (use.op == CollectiveOp::AllToAll && !tpu && options.forwardedTopK > 0)
        words += " Each token crosses the network once per node that holds one of its top-"
                 + std::to_string(int(options.forwardedTopK))
                 + " experts and is forwarded over NVLink there (DeepEP's normal kernels): over M nodes, "
                   "M(1 − (1 − 1/M)^k)/k of the k(M − 1)/M copies a plain all-to-all would send across. "
                   "Inside a node it reaches each GPU holding one of its experts once: over n GPUs, "
                   "n(1 − (1 − 1/n)^k)/k of the copies.";
    // The link's achievable share, and the chip whose measurements it is (an inline chip may take it
    // from a catalog chip).
    std::string linkFigure(linkName(one.bindingLink));
    std::replace(linkFigure.begin(), linkFigure.end(), '-', '_');
    linkFigure += "_efficiency";
    const std::string efficiency = ideal ? ""
                                         : " (at " + topology.chip().figureOwner(linkFigure) + "'s achievable." + linkFigure + ")";
    const double oneTime = ideal ? std::max(one.bandwidthTime, one.latencyTime) : one.bandwidthTime + one.latencyTime;
    if (one.time == oneTime && timeEach == one.time) {
        why.record(path + ".time_s", use.timeS,
                   ideal ? "count * max(bandwidth_s, latency_s)" : "count * (bandwidth_s + latency_s)",
                   {countValue,
                    {"bandwidth_s", one.bandwidthTime, "",
                     "the " + what + ": bytes each chip moves over the " + std::string(linkName(one.bindingLink))
                         + " bandwidth" + efficiency},
                    {"latency_s", one.latencyTime, "", "per-hop latency summed over the levels it crosses"}},
                   words + (ideal ? " The book takes the larger of the two terms." : " Here the two terms add."),
                   chapter, section);
    } else {
        why.record(path + ".time_s", use.timeS, "count * time_each",
                   {countValue,
                    {"time_each", timeEach, "",
                     "the " + what + ", averaged over the layers it serves (their sizes differ)"}},
                   words, chapter, section);
    }
    why.record(path + ".exposed_s", use.exposedS, "min(time_s, exposed)",
               {{"time_s", use.timeS, path + ".time_s", ""}, {"exposed", exposed, "", overlapRule}},
               "The part of a collective the step waits for: " + overlapRule + ".", tpu ? "5" : "12",
               tpu ? "What do we mean by scaling?" : "Collectives on GPUs");
}

} // namespace meshplan::model
