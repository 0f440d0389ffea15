#include "autosaver.h"

#include "plandocument.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLockFile>
#include <QStandardPaths>
#include <QTimer>
#include <QUuid>

#include <algorithm>

namespace meshplan::app {

namespace m = meshplan::model;
using nlohmann::json;

namespace {

// A session "S" writes S.meshplan-autosave and holds S.lock while it runs.
const QString kCopySuffix = QStringLiteral(".meshplan-autosave");
const QString kLockSuffix = QStringLiteral(".lock");
constexpr const char *kFormat = "meshplan/autosave";
constexpr int kVersion = 1;

QString lockFileFor(const QString &recoveryFile)
{
    QString lock = recoveryFile;
    lock.chop(kCopySuffix.size());
    return lock + kLockSuffix;
}

enum class Session {
    Running,
    Ended,   ///< no lock, or a stale one (removed now)
    Unknown, ///< the lock cannot be examined (permissions); treated as running
};

/// Whether the session owning `lockPath` still runs. A lock whose process is gone is stale; its
/// age never is (staleLockTime 0), since a session lasts for hours. Removes a stale lock.
Session sessionOf(const QString &lockPath)
{
    if (!QFileInfo::exists(lockPath))
        return Session::Ended;
    QLockFile probe(lockPath);
    probe.setStaleLockTime(0);
    if (probe.tryLock(0)) {
        probe.unlock(); // deletes the lock file
        return Session::Ended;
    }
    return probe.error() == QLockFile::LockFailedError ? Session::Running : Session::Unknown;
}

/// The content of a recovery copy, or why it cannot be used (the error's path is the field).
struct CopyContent {
    QString originalPath;
    QDateTime savedAt;
    json plan;
};

m::Expected<CopyContent> readCopy(const QString &file)
{
    const auto document = PlanDocument::readJsonFile(file);
    if (!document)
        return document.error();
    const json &d = document.value();
    if (!d.is_object() || d.value("format", json()) != kFormat)
        return m::Error{"format", "is not \"meshplan/autosave\""};
    const json &version = d.value("version", json());
    if (!version.is_number_integer() || version.get<std::int64_t>() < 1 || version.get<std::int64_t>() > kVersion)
        return m::Error{"version", "must be 1 (a newer Meshplan may have written this copy)"};
    if (!d.contains("plan") || !d.at("plan").is_object())
        return m::Error{"plan", "must be a plan object"};
    CopyContent content;
    const json &path = d.value("path", json(""));
    if (!path.is_string())
        return m::Error{"path", "must be a string"};
    content.originalPath = QString::fromStdString(path.get<std::string>());
    const json &savedAt = d.value("saved_at", json());
    if (savedAt.is_string())
        content.savedAt = QDateTime::fromString(QString::fromStdString(savedAt.get<std::string>()), Qt::ISODateWithMs);
    if (!content.savedAt.isValid())
        content.savedAt = QFileInfo(file).lastModified();
    content.plan = d.at("plan");
    return content;
}

} // namespace

Autosaver::Autosaver(PlanDocument *document, QString directory, QObject *parent)
    : QObject(parent)
    , m_document(document)
    , m_directory(directory.isEmpty() ? defaultDirectory() : QDir(directory).absolutePath())
    , m_sessionId(QUuid::createUuid().toString(QUuid::WithoutBraces))
    , m_timer(new QTimer(this))
{
    Q_ASSERT(m_document);
    QDir().mkpath(m_directory);
    // Locks of crashed sessions that never wrote a copy would pile up: sweep the stale ones.
    const QDir dir(m_directory);
    for (const QString &name : dir.entryList({QStringLiteral("*") + kLockSuffix}, QDir::Files | QDir::Hidden)) {
        const QString lock = dir.filePath(name);
        QString copy = lock;
        copy.chop(kLockSuffix.size());
        if (!QFileInfo::exists(copy + kCopySuffix))
            sessionOf(lock);
    }
    m_lock = std::make_unique<QLockFile>(QDir(m_directory).filePath(m_sessionId + kLockSuffix));
    m_lock->setStaleLockTime(0);
    if (!m_lock->tryLock(0))
        qWarning("Autosaver: cannot lock %s; autosave is off for this session", qPrintable(m_directory));

    m_timer->setSingleShot(true);
    m_timer->setInterval(2000);
    connect(m_timer, &QTimer::timeout, this, [this] { saveNow(); });
    connect(m_document, &PlanDocument::changed, this, &Autosaver::schedule);
    // Saved, or undone back to the saved state: the copy would only offer stale work.
    connect(m_document, &PlanDocument::modifiedChanged, this, [this](bool modified) {
        if (!modified)
            discard();
    });
    connect(m_document, &QObject::destroyed, this, [this] {
        m_timer->stop();
        m_document = nullptr;
    });
}

Autosaver::~Autosaver()
{
    // The copy stays, as after a crash; releasing the lock lets the next start offer it.
    m_timer->stop();
}

QString Autosaver::defaultDirectory()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/autosave");
}

void Autosaver::setDelay(int milliseconds)
{
    m_timer->setInterval(std::max(0, milliseconds));
}

bool Autosaver::saveNow()
{
    m_timer->stop();
    if (m_document == nullptr || !m_lock->isLocked())
        return false;
    if (!m_document->isModified()) {
        discard();
        return true;
    }
    const json copy = {{"format", kFormat},
                       {"version", kVersion},
                       {"path", m_document->path().toStdString()},
                       {"saved_at", QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs).toStdString()},
                       {"plan", m_document->json()}};
    if (const auto error = PlanDocument::writeJsonFile(recoveryFile(), copy)) {
        qWarning("Autosaver: %s", qPrintable(*error));
        return false;
    }
    return true;
}

QString Autosaver::recoveryFile() const
{
    return QDir(m_directory).filePath(m_sessionId + kCopySuffix);
}

void Autosaver::discard()
{
    m_timer->stop();
    QFile::remove(recoveryFile());
}

QList<Autosaver::Recovery> Autosaver::orphans(const QString &directory)
{
    QList<Recovery> found;
    const QDir dir(directory);
    const QFileInfoList copies =
        dir.entryInfoList({QStringLiteral("*") + kCopySuffix}, QDir::Files | QDir::Hidden, QDir::Name);
    for (const QFileInfo &info : copies) {
        const QString file = info.absoluteFilePath();
        if (sessionOf(lockFileFor(file)) != Session::Ended)
            continue;
        const auto content = readCopy(file);
        if (!content)
            continue;
        found.append({file, content->originalPath, content->savedAt});
    }
    std::stable_sort(found.begin(), found.end(),
                     [](const Recovery &a, const Recovery &b) { return a.savedAt > b.savedAt; });
    return found;
}

std::optional<QString> Autosaver::recover(const Recovery &recovery, PlanDocument *document)
{
    const QString shown = QDir::toNativeSeparators(recovery.recoveryFile);
    if (sessionOf(lockFileFor(recovery.recoveryFile)) != Session::Ended)
        return tr("%1 belongs to a Meshplan that is still running").arg(shown);
    const auto content = readCopy(recovery.recoveryFile);
    if (!content) {
        const m::Error &error = content.error();
        // readJsonFile already names the file in the error's path.
        if (error.path == shown.toStdString())
            return QString::fromStdString(error.toString());
        return shown + QStringLiteral(": ") + QString::fromStdString(error.toString());
    }
    if (auto error = document->restore(content->plan, content->originalPath))
        return shown + QStringLiteral(": ") + *error;
    QFile::remove(recovery.recoveryFile);
    return std::nullopt;
}

void Autosaver::dismiss(const Recovery &recovery)
{
    if (sessionOf(lockFileFor(recovery.recoveryFile)) == Session::Ended)
        QFile::remove(recovery.recoveryFile);
}

void Autosaver::schedule()
{
    if (m_document != nullptr)
        m_timer->start();
}

} // namespace meshplan::app
