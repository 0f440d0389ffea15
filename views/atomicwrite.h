#pragma once
// Writing a file so that it ends up wholly the new bytes or untouched, never half-written.

#include <QByteArray>
#include <QImage>
#include <QString>

#include <optional>

namespace meshplan::views {

/// Writes `bytes` to `path` through an unbuffered QSaveFile, checking every write and the commit
/// (Qt 6.4's buffered QSaveFile commits after its flush failed on a full disk and leaves 0 bytes).
/// On failure the file that was there is byte-identical and the message names `shown` (the path
/// when empty) and the cause, e.g. "No space left on device".
std::optional<QString> writeFileAtomically(const QString &path, const QByteArray &bytes, const QString &shown = {});

/// Encodes `image` as PNG in memory, then writes it as writeFileAtomically does.
std::optional<QString> writePngAtomically(const QString &path, const QImage &image, const QString &shown = {});

} // namespace meshplan::views
