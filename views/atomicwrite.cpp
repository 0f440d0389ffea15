#include "atomicwrite.h"

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

} // namespace meshplan::views
