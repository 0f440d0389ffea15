#include "planfilename.h"

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

namespace meshplan::app {

namespace {

constexpr int kMaxStem = 80;

} // namespace

QString planFileName(const QString &title)
{
    // Decomposed first, so "é" keeps its "e" and drops only the accent.
    const QString plain = title.normalized(QString::NormalizationForm_KD);
    QString stem;
    for (const QChar c : plain) {
        if (c.isLetterOrNumber() && c.unicode() < 128)
            stem += c.toLower();
        else if (!c.isMark() && !stem.endsWith(QLatin1Char('-')))
            stem += QLatin1Char('-');
    }
    while (stem.startsWith(QLatin1Char('-')))
        stem.remove(0, 1);
    if (stem.size() > kMaxStem) {
        // At the last word break that keeps it short; a single long word is cut where it is.
        const int cut = stem.lastIndexOf(QLatin1Char('-'), kMaxStem);
        stem.truncate(cut > kMaxStem / 2 ? cut : kMaxStem);
    }
    // Never end on a joiner: "...-fsdp-1024-x" reads as a cut, not a name.
    while (stem.endsWith(QLatin1Char('-')) || stem.endsWith(QStringLiteral("-x")))
        stem.chop(stem.endsWith(QLatin1Char('-')) ? 1 : 2);
    return (stem.isEmpty() ? QStringLiteral("plan") : stem) + QStringLiteral(".meshplan");
}

QString suggestedPlanPath(const QString &title, const QString &currentPath)
{
    const QString folder = currentPath.isEmpty()
                               ? QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)
                               : QFileInfo(currentPath).absolutePath();
    return QDir(folder).filePath(planFileName(title));
}

} // namespace meshplan::app
