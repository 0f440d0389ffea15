#include "recentfiles.h"

#include <QFileInfo>
#include <QSettings>

namespace meshplan::app {

namespace {

const QString kKey = QStringLiteral("recentFiles");

QStringList existing(const QStringList &paths)
{
    QStringList kept;
    for (const QString &path : paths)
        if (!path.isEmpty() && QFileInfo(path).isFile() && !kept.contains(path))
            kept.append(path);
    return kept;
}

} // namespace

QStringList RecentFiles::list()
{
    return existing(QSettings().value(kKey).toStringList()).mid(0, kMaxFiles);
}

void RecentFiles::add(const QString &path)
{
    if (path.isEmpty())
        return;
    const QString absolute = QFileInfo(path).absoluteFilePath();
    QSettings settings;
    QStringList paths = settings.value(kKey).toStringList();
    paths.removeAll(absolute);
    paths.prepend(absolute);
    settings.setValue(kKey, existing(paths).mid(0, kMaxFiles));
}

void RecentFiles::clear()
{
    QSettings().remove(kKey);
}

} // namespace meshplan::app
