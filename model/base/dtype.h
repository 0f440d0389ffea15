#pragma once
// Numeric formats the book's arithmetic is done in, and their sizes.

#include <optional>
#include <string>
#include <string_view>

namespace meshplan::model {

enum class DType {
    Fp32,
    Bf16,
    Fp16,
    Fp8,
    Int8,
    Int4,
    Fp4,
};

inline constexpr int kDTypeCount = 7;

/// Bytes per element; int4 is half a byte.
double bytesPerElement(DType type);
/// fp8 and int8: the formats 8-bit matmul units run.
constexpr bool isEightBit(DType type) { return type == DType::Fp8 || type == DType::Int8; }
std::string_view dtypeName(DType type);
std::optional<DType> parseDType(std::string_view name);
/// "fp32, bf16, fp16, fp8, int8, int4" — for error messages.
std::string dtypeList();

} // namespace meshplan::model
