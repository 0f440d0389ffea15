#pragma once
// Human-readable numbers: seconds, bytes, FLOPs and rates with SI prefixes ("1.04 ms", "16.8 MB").

#include <string>

namespace meshplan::model {

std::string formatSeconds(double seconds);
/// Decimal prefixes as the book uses them (1 GB = 1e9 B); `binary` gives KiB/MiB/GiB.
std::string formatBytes(double bytes, bool binary = false);
std::string formatFlops(double flops);          ///< "2.4 PFLOP"
std::string formatFlopsPerSecond(double rate);  ///< "197 TFLOP/s"
std::string formatBytesPerSecond(double rate);  ///< "450 GB/s"
/// Three significant digits, no prefix: "2550", "0.123", "1.2e+20".
std::string formatNumber(double value);
std::string formatShare(double share); ///< "0.709": a share of a peak or benchmark, three decimals
/// A count: whole numbers without decimals ("8", "1024"), anything else as formatNumber.
std::string formatCount(double value);

} // namespace meshplan::model
