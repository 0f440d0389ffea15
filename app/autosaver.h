#pragma once
// Recovery copies of a modified document, written on a debounced timer, and the copies that a
// session which did not end cleanly left behind.

#include <QDateTime>
#include <QList>
#include <QObject>
#include <QString>

#include <memory>
#include <optional>

class QLockFile;
class QTimer;

namespace meshplan::app {

class PlanDocument;

/// One per document. While the document is modified, every change restarts a single-shot timer
/// whose timeout writes `<session>.meshplan-autosave` next to a `<session>.lock` QLockFile held for
/// the Autosaver's lifetime. When the document turns clean (saved, undone to the saved state, new,
/// opened) the copy is removed at once. Destroying the Autosaver without discard() keeps the copy
/// and releases the lock, as a crash would: the next start offers it as an orphan.
class Autosaver : public QObject
{
    Q_OBJECT

public:
    /// A recovery copy left by a session that is no longer running.
    struct Recovery {
        QString recoveryFile; ///< the copy itself
        QString originalPath; ///< the document it was saved from ("" for an untitled plan)
        QDateTime savedAt;
    };

    /// Watches `document`; recovery copies go to `directory` (created if missing). The default
    /// directory is QStandardPaths::AppDataLocation + "/autosave".
    explicit Autosaver(PlanDocument *document, QString directory = QString(), QObject *parent = nullptr);
    ~Autosaver() override;

    static QString defaultDirectory();
    QString directory() const { return m_directory; }
    /// Delay between the last change and the write (default 2000 ms): continuous edits write once.
    void setDelay(int milliseconds);
    /// Writes the recovery copy now if the document is modified; removes it if it is clean.
    /// Returns false when the copy could not be written (the next change retries).
    bool saveNow();
    /// This session's recovery file (it may not exist yet).
    QString recoveryFile() const;
    /// Removes this session's recovery copy (after a save, or on a clean exit).
    void discard();

    /// Copies in `directory` whose session ended without discarding them (its lock is absent, or
    /// stale: its process is gone; age alone never makes a lock stale), newest first. Unreadable
    /// copies are skipped and kept. Stale locks found on the way are removed.
    static QList<Recovery> orphans(const QString &directory);
    /// Loads `recovery` into `document` (modified, with the original path) and deletes the copy;
    /// a copy that does not load is refused with a message naming the field, and kept.
    static std::optional<QString> recover(const Recovery &recovery, PlanDocument *document);
    /// Deletes a recovery copy the user chose not to restore (not one of a running session).
    static void dismiss(const Recovery &recovery);

private:
    void schedule();

    PlanDocument *m_document = nullptr;
    QString m_directory;
    QString m_sessionId;
    QTimer *m_timer = nullptr;
    std::unique_ptr<QLockFile> m_lock;
};

} // namespace meshplan::app
