#include "atomicwrite.h"

#include <QBuffer>
#include <QCoreApplication>
#include <QFileInfo>
#include <QSaveFile>

namespace meshplan::views {

std::optional<QString> writeFileAtomically(const QString &path, const QByteArray &bytes, const QString &shown)
{
    const QString name = shown.isEmpty() ? path : shown;
    const auto tr = [](const char *text) { return QCoreApplication::translate("meshplan::views::AtomicWrite", text); };
    if (QFileInfo(path).isDir())
        return tr("%1: is a folder; nothing was written").arg(name);
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Unbuffered))
        return tr("%1: cannot be written (%2)").arg(name, file.errorString());
    qint64 done = 0;
    while (done < bytes.size()) {
        const qint64 n = file.write(bytes.constData() + done, bytes.size() - done);
        if (n <= 0) {
            const QString reason = file.errorString();
            file.cancelWriting();
            return tr("%1: could not be written (%2); the file on disk is unchanged").arg(name, reason);
        }
        done += n;
    }
    if (!file.commit())
        return tr("%1: could not be written (%2); the file on disk is unchanged").arg(name, file.errorString());
    return std::nullopt;
}

std::optional<QString> writePngAtomically(const QString &path, const QImage &image, const QString &shown)
{
    QByteArray bytes;
    QBuffer buffer(&bytes);
    if (image.isNull() || !buffer.open(QIODevice::WriteOnly) || !image.save(&buffer, "PNG"))
        return QCoreApplication::translate("meshplan::views::AtomicWrite", "%1: the picture could not be drawn; nothing was written")
            .arg(shown.isEmpty() ? path : shown);
    return writeFileAtomically(path, bytes, shown);
}

} // namespace meshplan::views
