#include "base/jsonfields.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace meshplan::model::json_fields {

std::string join(const std::string &path, const std::string &key)
{
    return path.empty() ? key : path + "." + key;
}

std::string describe(const json &value)
{
    if (value.is_null())
        return "null";
    if (value.is_string()) {
        std::string s = value.get<std::string>();
        if (s.size() > 40)
            s = s.substr(0, 40) + "...";
        return "\"" + s + "\"";
    }
    if (value.is_object())
        return "an object";
    if (value.is_array())
        return "an array";
    return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool has(const json &object, const std::string &key)
{
    return object.is_object() && object.contains(key) && !object.at(key).is_null();
}

const json &require(const json &object, const std::string &key, const std::string &path)
{
    if (!object.is_object())
        throw FieldError(path, "must be an object, got " + describe(object));
    auto it = object.find(key);
    if (it == object.end() || it->is_null())
        throw FieldError(join(path, key), "is required");
    return *it;
}

double positiveNumber(const json &object, const std::string &key, const std::string &path,
                      bool allowZero)
{
    const json &v = require(object, key, path);
    const std::string p = join(path, key);
    if (!v.is_number())
        throw FieldError(p, std::string("must be a ") + (allowZero ? "non-negative" : "positive")
                                + " number, got " + describe(v));
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < 0.0 || (!allowZero && d == 0.0))
        throw FieldError(p, std::string("must be a ") + (allowZero ? "non-negative" : "positive")
                                + " number, got " + describe(v));
    return d;
}

double positiveNumberOr(const json &object, const std::string &key, const std::string &path,
                        double fallback, bool allowZero)
{
    return has(object, key) ? positiveNumber(object, key, path, allowZero) : fallback;
}

std::int64_t integerValue(const json &v, const std::string &path, std::int64_t minimum,
                          std::int64_t maximum)
{
    const auto fail = [&] {
        return FieldError(path, "must be an integer from " + std::to_string(minimum) + " to "
                                    + std::to_string(maximum) + ", got " + describe(v));
    };
    if (v.is_number_integer()) {
        if (v.is_number_unsigned()) {
            const auto u = v.get<std::uint64_t>();
            // nlohmann stores every non-negative literal (0 included) as unsigned.
            if (u > static_cast<std::uint64_t>(maximum) || (minimum > 0 && u < static_cast<std::uint64_t>(minimum)))
                throw fail();
            return static_cast<std::int64_t>(u);
        }
        const auto i = v.get<std::int64_t>();
        if (i < minimum || i > maximum)
            throw fail();
        return i;
    }
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (!std::isfinite(d) || std::floor(d) != d || d < static_cast<double>(minimum)
            || d > static_cast<double>(maximum))
            throw fail();
        return static_cast<std::int64_t>(d);
    }
    throw fail();
}

std::int64_t integer(const json &object, const std::string &key, const std::string &path,
                     std::int64_t minimum, std::int64_t maximum)
{
    return integerValue(require(object, key, path), join(path, key), minimum, maximum);
}

std::int64_t integerOr(const json &object, const std::string &key, const std::string &path,
                       std::int64_t minimum, std::int64_t maximum, std::int64_t fallback)
{
    return has(object, key) ? integer(object, key, path, minimum, maximum) : fallback;
}

std::string string(const json &object, const std::string &key, const std::string &path)
{
    const json &v = require(object, key, path);
    if (!v.is_string())
        throw FieldError(join(path, key), "must be a string, got " + describe(v));
    return v.get<std::string>();
}

std::string stringOr(const json &object, const std::string &key, const std::string &path,
                     const std::string &fallback)
{
    return has(object, key) ? string(object, key, path) : fallback;
}

bool boolean(const json &object, const std::string &key, const std::string &path, bool fallback)
{
    if (!has(object, key))
        return fallback;
    const json &v = object.at(key);
    if (!v.is_boolean())
        throw FieldError(join(path, key), "must be true or false, got " + describe(v));
    return v.get<bool>();
}

namespace {

/// "line 3, column 14" of byte `at` of `text`.
std::string lineColumnAt(const std::string &text, std::size_t at)
{
    const auto lineStart = at == 0 ? std::string::npos : text.rfind('\n', at - 1);
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    const auto column = at - (lineStart == std::string::npos ? 0 : lineStart + 1) + 1;
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

/// "line 3, column 14" of the first `token` in `text`, or "" when it is not there.
std::string whereIs(const std::string &text, const std::string &token)
{
    const auto at = token.empty() ? std::string::npos : text.find(token);
    return at == std::string::npos ? "" : lineColumnAt(text, at);
}

} // namespace

std::size_t firstInvalidUtf8(std::string_view text)
{
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const auto continuation = [&](std::size_t i) { return i < text.size() && (byte(i) & 0xC0) == 0x80; };
    std::size_t i = 0;
    while (i < text.size()) {
        const unsigned char c = byte(i);
        std::size_t length = 0;
        std::uint32_t code = 0;
        if (c < 0x80) {
            ++i;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            length = 2;
            code = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            length = 3;
            code = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            length = 4;
            code = c & 0x07;
        } else {
            return i;
        }
        for (std::size_t k = 1; k < length; ++k) {
            if (!continuation(i + k))
                return i;
            code = (code << 6) | (byte(i + k) & 0x3F);
        }
        // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8 either.
        static constexpr std::uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
        if (code < kSmallest[length] || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF)
            return i;
        i += length;
    }
    return std::string_view::npos;
}

json parse(const std::string &text, const std::string &what, int maxDepth, DuplicateKeys duplicates)
{
    // Before the parser: its messages quote the bad bytes, and JSON cannot carry them onwards.
    if (text.size() >= 2
        && ((text[0] == '\xFF' && text[1] == '\xFE') || (text[0] == '\xFE' && text[1] == '\xFF')))
        throw FieldError(what, "is UTF-16 text; save it as UTF-8");
    if (const std::size_t bad = firstInvalidUtf8(text); bad != std::string_view::npos)
        throw FieldError(what, "is not UTF-8 at byte " + std::to_string(bad) + " (" + lineColumnAt(text, bad)
                                   + "); save it as UTF-8");
    if (const std::size_t nul = text.find('\0'); nul != std::string::npos)
        throw FieldError(what, "holds a NUL byte at byte " + std::to_string(nul) + "; a JSON file is text");
    bool tooDeep = false;
    std::string duplicate; // "workload.seq_len"
    // Each object or array being read, innermost last: its path and, for objects, the keys so far.
    struct Frame {
        bool object = false;
        std::string path;
        std::vector<std::string> keys;
    };
    std::vector<Frame> frames;
    json::parser_callback_t limit = [&](int depth, json::parse_event_t event, json &parsed) {
        if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start)
            && depth >= maxDepth) {
            tooDeep = true;
            return false;
        }
        if (duplicates == DuplicateKeys::Refuse) {
            if (event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) {
                std::string path;
                if (!frames.empty())
                    path = frames.back().object && !frames.back().keys.empty()
                               ? join(frames.back().path, frames.back().keys.back())
                               : frames.back().path + "[]";
                frames.push_back({event == json::parse_event_t::object_start, path, {}});
            } else if ((event == json::parse_event_t::object_end || event == json::parse_event_t::array_end)
                       && !frames.empty()) {
                frames.pop_back();
            } else if (event == json::parse_event_t::key && !frames.empty() && parsed.is_string()) {
                auto &seen = frames.back().keys;
                const std::string key = parsed.get<std::string>();
                if (duplicate.empty() && std::find(seen.begin(), seen.end(), key) != seen.end())
                    duplicate = join(frames.back().path, key);
                seen.push_back(key);
            }
        }
        return true;
    };
    json result;
    try {
        result = json::parse(text, limit, true, false);
    } catch (const json::parse_error &e) {
        throw FieldError(what, std::string("is not valid JSON (") + e.what() + ")");
    } catch (const json::out_of_range &e) {
        // "number overflow parsing '1e400'": say where, as a syntax error would.
        const std::string message = e.what();
        const auto open = message.find('\'');
        const auto close = open == std::string::npos ? open : message.find('\'', open + 1);
        const std::string where =
            close == std::string::npos ? "" : whereIs(text, message.substr(open + 1, close - open - 1));
        throw FieldError(what, "holds a number too large for a double" + (where.empty() ? "" : " at " + where) + " ("
                                   + message + ")");
    } catch (const json::exception &e) {
        throw FieldError(what, std::string("cannot be read as JSON (") + e.what() + ")");
    }
    if (tooDeep)
        throw FieldError(what, "nests deeper than " + std::to_string(maxDepth) + " levels");
    if (!duplicate.empty())
        throw FieldError(duplicate, "appears twice in its object; keep one (JSON readers differ on which one wins)");
    return result;
}

} // namespace meshplan::model::json_fields
