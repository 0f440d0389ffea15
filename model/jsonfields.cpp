#include "jsonfields.h"

#include <cmath>
#include <limits>

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

json parse(const std::string &text, const std::string &what, int maxDepth)
{
    bool tooDeep = false;
    json::parser_callback_t limit = [&](int depth, json::parse_event_t event, json &) {
        if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start)
            && depth >= maxDepth) {
            tooDeep = true;
            return false;
        }
        return true;
    };
    json result;
    try {
        result = json::parse(text, limit, true, false);
    } catch (const json::parse_error &e) {
        throw FieldError(what, std::string("is not valid JSON (") + e.what() + ")");
    } catch (const json::exception &e) {
        throw FieldError(what, std::string("cannot be read as JSON (") + e.what() + ")");
    }
    if (tooDeep)
        throw FieldError(what, "nests deeper than " + std::to_string(maxDepth) + " levels");
    return result;
}

} // namespace meshplan::model::json_fields
