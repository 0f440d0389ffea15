#pragma once
// Checked reads of JSON fields that name the offending path when a value is missing or wrong.

#include "base/expected.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string_view>
#include <stdexcept>
#include <string>

namespace meshplan::model {

/// Thrown by the readers below and caught at the model's boundary, where it becomes an Error.
class FieldError : public std::runtime_error
{
public:
    FieldError(std::string path, std::string message)
        : std::runtime_error(message), error{std::move(path), std::move(message)}
    {}
    Error error;
};

namespace json_fields {

using nlohmann::json;

std::string join(const std::string &path, const std::string &key);
std::string describe(const json &value);

const json &require(const json &object, const std::string &key, const std::string &path);
bool has(const json &object, const std::string &key);

/// A finite number > 0 (or >= 0 when allowZero).
double positiveNumber(const json &object, const std::string &key, const std::string &path,
                      bool allowZero = false);
double positiveNumberOr(const json &object, const std::string &key, const std::string &path,
                        double fallback, bool allowZero = false);
/// An integral value in [minimum, maximum]; a float with no fraction (1e9) is accepted.
std::int64_t integer(const json &object, const std::string &key, const std::string &path,
                     std::int64_t minimum, std::int64_t maximum);
std::int64_t integerOr(const json &object, const std::string &key, const std::string &path,
                       std::int64_t minimum, std::int64_t maximum, std::int64_t fallback);
std::int64_t integerValue(const json &value, const std::string &path, std::int64_t minimum,
                          std::int64_t maximum);
std::string string(const json &object, const std::string &key, const std::string &path);
std::string stringOr(const json &object, const std::string &key, const std::string &path,
                     const std::string &fallback);
bool boolean(const json &object, const std::string &key, const std::string &path, bool fallback);

/// What parse() does with a key an object already has.
enum class DuplicateKeys {
    Refuse,   ///< an error naming the key: a hand-edited plan must not lose a field silently
    LastWins, ///< as nlohmann does: Hugging Face configs in the wild repeat keys
};

/// The offset of the first byte of `text` that is not well-formed UTF-8 (overlong forms and
/// surrogates included), or npos.
std::size_t firstInvalidUtf8(std::string_view text);

/// Parses text as JSON with a nesting limit, turning every nlohmann failure into a FieldError
/// (with the line and column of a number too large for a double). Text that is not UTF-8 (UTF-16
/// included) or holds a NUL byte is refused before parsing, naming the byte.
json parse(const std::string &text, const std::string &what, int maxDepth = 64,
           DuplicateKeys duplicates = DuplicateKeys::Refuse);

} // namespace json_fields
} // namespace meshplan::model
