#include "base/units.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace meshplan::model {

namespace {

// Writes `value` to three significant digits (as printf's %.Nf rounds, which std::to_chars matches
// several times faster), then " " and `unit`, into one string: a warning that a plan does not fit
// formats six sizes, and an evaluation's cost should not be its words.
std::string threeDigits(double value, std::string_view suffix = {})
{
    char buffer[400]; // %.0f of the largest double has 309 digits
    const double magnitude = std::fabs(value);
    const int decimals = magnitude >= 100 || magnitude == 0 ? 0 : magnitude >= 10 ? 1 : 2;
    char *end = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, decimals).ptr;
    std::string out;
    out.reserve(static_cast<std::size_t>(end - buffer) + suffix.size());
    out.append(buffer, end).append(suffix);
    return out;
}

std::string withPrefix(double value, std::string_view unit, double base)
{
    static constexpr std::array<const char *, 7> kPrefixes{"", "k", "M", "G", "T", "P", "E"};
    static constexpr std::array<const char *, 7> kBinaryPrefixes{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    if (!std::isfinite(value))
        return "n/a";
    std::size_t i = 0;
    double v = value;
    while (std::fabs(v) >= base * 0.9995 && i + 1 < kPrefixes.size()) {
        v /= base;
        ++i;
    }
    char suffix[24] = " ";
    const char *prefix = base == 1024.0 ? kBinaryPrefixes[i] : kPrefixes[i];
    std::size_t n = 1;
    for (const char *c = prefix; *c && n < sizeof suffix; ++c)
        suffix[n++] = *c;
    for (char c : unit)
        if (n < sizeof suffix)
            suffix[n++] = c;
    return threeDigits(v, std::string_view(suffix, n));
}

} // namespace

std::string formatSeconds(double s)
{
    if (!std::isfinite(s))
        return "n/a";
    const double a = std::fabs(s);
    if (a == 0)
        return "0 s";
    if (a < 1e-6)
        return threeDigits(s * 1e9, " ns");
    if (a < 1e-3)
        return threeDigits(s * 1e6, " us");
    if (a < 1)
        return threeDigits(s * 1e3, " ms");
    if (a < 3600)
        return threeDigits(s, " s");
    if (a < 86400 * 2)
        return threeDigits(s / 3600, " h");
    return threeDigits(s / 86400, " days");
}

std::string formatBytes(double bytes, bool binary)
{
    return withPrefix(bytes, "B", binary ? 1024.0 : 1000.0);
}

std::string formatFlops(double flops)
{
    return withPrefix(flops, "FLOP", 1000.0);
}

std::string formatFlopsPerSecond(double rate)
{
    return withPrefix(rate, "FLOP/s", 1000.0);
}

std::string formatBytesPerSecond(double rate)
{
    return withPrefix(rate, "B/s", 1000.0);
}

std::string formatShare(double share)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.3f", share);
    return buffer;
}

std::string formatNumber(double value)
{
    if (!std::isfinite(value))
        return "n/a";
    char buffer[32];
    const double a = std::fabs(value);
    if (a != 0 && (a >= 1e7 || a < 1e-3))
        std::snprintf(buffer, sizeof buffer, "%.3g", value);
    else if (a >= 1000)
        std::snprintf(buffer, sizeof buffer, "%.0f", value);
    else
        return threeDigits(value);
    return buffer;
}

std::string formatCount(double value)
{
    if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e15)
        return std::to_string(static_cast<long long>(value));
    return formatNumber(value);
}

} // namespace meshplan::model
