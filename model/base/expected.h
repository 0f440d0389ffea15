#pragma once
// Error values for the model's boundaries: a user-presentable message and the JSON path it names.

#include <string>
#include <utility>
#include <variant>

namespace meshplan::model {

/// Why an input was refused: `path` is the JSON path (or flag) of the offending field,
/// `message` says what was expected, in words a user can act on.
struct Error {
    std::string path;
    std::string message;

    std::string toString() const { return path.empty() ? message : path + ": " + message; }
};

/// A value or the Error that prevented it (std::expected is C++23; this is the small subset we need).
template<typename T>
class Expected
{
public:
    Expected(T value) : m_v(std::move(value)) {}
    Expected(Error error) : m_v(std::move(error)) {}

    bool hasValue() const { return std::holds_alternative<T>(m_v); }
    explicit operator bool() const { return hasValue(); }

    const T &value() const & { return std::get<T>(m_v); }
    T &value() & { return std::get<T>(m_v); }
    T &&value() && { return std::get<T>(std::move(m_v)); }
    const T &operator*() const & { return value(); }
    const T *operator->() const { return &value(); }

    const Error &error() const { return std::get<Error>(m_v); }

private:
    std::variant<T, Error> m_v;
};

} // namespace meshplan::model
