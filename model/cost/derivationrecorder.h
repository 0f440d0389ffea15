#pragma once
// Records how a cost's numbers came to be while it is computed; a branch, and nothing else, when off.

#include "base/derivation.h"
#include "cost/evaluation.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace meshplan::model {

/// The cost models call record() right where they compute a result number, with the formula the
/// code evaluates and the very values it used, so a derivation cannot drift from the arithmetic
/// (tst_derivations re-evaluates every one). Callers test on() first: building the strings costs
/// more than an evaluation.
class DerivationRecorder
{
public:
    DerivationRecorder(Derivations *sink, std::map<std::string, double> &terms) : m_sink(sink), m_terms(terms) {}

    bool on() const { return m_sink != nullptr; }

    /// The derivation of the result number at `path`.
    void record(const std::string &path, double value, std::string expression, std::vector<DerivationValue> values,
                std::string words, std::string chapter, std::string section);

    /// An intermediate quantity: carried in the result as terms.<name>, derived at "terms.<name>".
    /// Returns the path, for the `from` of the values that use it.
    std::string term(const std::string &name, double value, std::string expression,
                     std::vector<DerivationValue> values, std::string words, std::string chapter,
                     std::string section);

    /// "a + b + c" over `parts` (their names), or "0" for none: sums whose parts vary by plan.
    static std::string sum(const std::vector<DerivationValue> &parts);

private:
    Derivations *m_sink;
    std::map<std::string, double> &m_terms;
};

/// The derivation of terms.operation_<index>_time_s, the roofline's point for
/// Evaluation::operations[index]: the longer of its FLOPs at `flopsRate` and its bytes at `hbmRate`.
void explainOperation(DerivationRecorder &why, std::size_t index, const OperationCost &operation, double flopsRate,
                      const std::string &rateSource, double hbmRate, const std::string &hbmSource);

/// The derivation of memory_per_chip.capacity: the chip's HBM.
void explainCapacity(DerivationRecorder &why, const Chip &chip);

/// The derivations of collectives[index].time_s (count × one occurrence, from the book's
/// bandwidth and per-hop latency terms) and .exposed_s (min(time_s, what the step waits for),
/// `overlapRule` saying why), for a collective the cost model has just added.
void explainCollective(DerivationRecorder &why, const Topology &topology, std::size_t index, const CollectiveUse &use,
                       const std::vector<AxisSpan> &spans, double count, double timeEach, double exposed,
                       const CollectiveOptions &options, const std::string &overlapRule);

} // namespace meshplan::model
