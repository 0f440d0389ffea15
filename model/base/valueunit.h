#pragma once
// The unit a result's number is in, as its name says: "step.time_s" is seconds, "hbm_bandwidth" bytes/s.

#include <string>
#include <string_view>

namespace meshplan::model {

enum class ValueUnit { Plain, Seconds, Bytes, Flops, FlopsPerSecond, BytesPerSecond };

/// The unit of a derivation value's name ("peak_flops", "t_min") or of a result path
/// ("memory_per_chip.total", "collectives[3].time_s"). A factor (fraction, efficiency, share,
/// ratio, factor) and a count, rate of tokens included ("tokens_per_s"), are Plain. A guess from
/// the name only, so every place that shows derivations reads a name the same way.
ValueUnit unitForName(std::string_view name);

/// `value` with the unit's prefix ("1.54 ms", "459 TFLOP/s"); Plain as formatNumber. Bytes are
/// decimal unless `binaryBytes` (as formatBytes).
std::string formatInUnit(ValueUnit unit, double value, bool binaryBytes = false);

} // namespace meshplan::model
