#pragma once
// The most recently opened or saved plan files, kept in QSettings.

#include <QString>
#include <QStringList>

namespace meshplan::app {

class RecentFiles
{
public:
    static constexpr int kMaxFiles = 10;

    /// Paths newest first; files that no longer exist are left out.
    static QStringList list();
    /// Puts `path` (made absolute) at the top, removing older duplicates, keeping kMaxFiles.
    static void add(const QString &path);
    static void clear();
};

} // namespace meshplan::app
