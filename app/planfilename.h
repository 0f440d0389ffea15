#pragma once
// The file name Save As offers for a plan: its title made safe for any file system.

#include <QString>

namespace meshplan::app {

/// `title` as a file name: lower case, every run of other characters than letters and digits
/// one '-', cut at a word near 60 characters, ending ".meshplan" ("plan.meshplan" for a title
/// with no letters or digits).
QString planFileName(const QString &title);
/// planFileName(title) in the folder of `currentPath`, or in the documents folder when the
/// plan has no file yet.
QString suggestedPlanPath(const QString &title, const QString &currentPath);

} // namespace meshplan::app
