#include "base/valueunit.h"

#include "base/units.h"

namespace meshplan::model {

ValueUnit unitForName(std::string_view name)
{
    // Memory per chip is bytes whatever its key says (params, kv_cache, total).
    if (name.starts_with("memory_per_chip."))
        return ValueUnit::Bytes;
    const auto cut = name.find_last_of(".]");
    const std::string_view key = cut == std::string_view::npos ? name : name.substr(cut + 1);
    const auto has = [&](std::string_view part) { return key.find(part) != std::string_view::npos; };
    // Factors: flops_fraction, hbm_efficiency, the elementwise share of bytes. Whole words only:
    // operation_4_time_s holds "ratio" and is a time.
    const auto hasWord = [&](std::string_view word) {
        for (auto at = key.find(word); at != std::string_view::npos; at = key.find(word, at + 1)) {
            const auto after = at + word.size();
            if ((at == 0 || key[at - 1] == '_') && (after == key.size() || key[after] == '_'))
                return true;
        }
        return false;
    };
    for (const std::string_view factor : {"fraction", "efficiency", "share", "ratio", "factor"})
        if (hasWord(factor))
            return ValueUnit::Plain;
    // An HBM rate (hbm_rate, decode_hbm) streams bytes; every other _rate is a matmul or kernel rate.
    if (key.ends_with("bytes_per_s") || (has("bandwidth") && !key.ends_with("_s")) || key == "decode_hbm"
        || (key.ends_with("_rate") && (has("hbm") || has("bytes"))))
        return ValueUnit::BytesPerSecond;
    if (key.ends_with("flops_per_s") || key == "peak_flops" || key.ends_with("_rate"))
        return ValueUnit::FlopsPerSecond;
    if (key.ends_with("_per_s"))
        return ValueUnit::Plain;
    if (key == "s" || key == "t" || key == "time" || key.ends_with("_s") || key.starts_with("t_"))
        return ValueUnit::Seconds;
    if (has("bytes"))
        return ValueUnit::Bytes;
    if (has("flops"))
        return ValueUnit::Flops;
    return ValueUnit::Plain;
}

std::string formatInUnit(ValueUnit unit, double value, bool binaryBytes)
{
    switch (unit) {
    case ValueUnit::Plain: return formatNumber(value);
    case ValueUnit::Seconds: return formatSeconds(value);
    case ValueUnit::Bytes: return formatBytes(value, binaryBytes);
    case ValueUnit::Flops: return formatFlops(value);
    case ValueUnit::FlopsPerSecond: return formatFlopsPerSecond(value);
    case ValueUnit::BytesPerSecond: return formatBytesPerSecond(value);
    }
    return formatNumber(value);
}

} // namespace meshplan::model
