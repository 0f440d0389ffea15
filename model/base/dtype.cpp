#include "base/dtype.h"

#include <array>

namespace meshplan::model {

namespace {
struct DTypeInfo {
    DType type;
    std::string_view name;
    double bytes;
};
constexpr std::array<DTypeInfo, kDTypeCount> kDTypes{{
    {DType::Fp32, "fp32", 4.0},
    {DType::Bf16, "bf16", 2.0},
    {DType::Fp16, "fp16", 2.0},
    {DType::Fp8, "fp8", 1.0},
    {DType::Int8, "int8", 1.0},
    {DType::Int4, "int4", 0.5},
    {DType::Fp4, "fp4", 0.5},
}};
} // namespace

double bytesPerElement(DType type)
{
    for (const auto &info : kDTypes)
        if (info.type == type)
            return info.bytes;
    return 0.0;
}

std::string_view dtypeName(DType type)
{
    for (const auto &info : kDTypes)
        if (info.type == type)
            return info.name;
    return "?";
}

std::optional<DType> parseDType(std::string_view name)
{
    for (const auto &info : kDTypes)
        if (info.name == name)
            return info.type;
    return std::nullopt;
}

std::string dtypeList()
{
    std::string out;
    for (const auto &info : kDTypes) {
        if (!out.empty())
            out += ", ";
        out += info.name;
    }
    return out;
}

} // namespace meshplan::model
