// Autosave and crash recovery: the debounced recovery copy, the copies that clean states remove,
// and the orphans of a session that really died (a child process killed with SIGKILL), of one
// destroyed without discard(), and never those of a running session.

#include "autosaver.h"
#include "base/embeddedresources.h"
#include "plandocument.h"

#include <QtTest>
#include <QUndoStack>

#include <algorithm>
#include <csignal>
#include <cstdlib>

using meshplan::app::Autosaver;
using meshplan::app::PlanDocument;
using nlohmann::json;

#define QVERIFY_OK(expression)                                                                    \
    do {                                                                                          \
        const std::optional<QString> error_ = (expression);                                      \
        QVERIFY2(!error_, error_ ? qPrintable(*error_) : "");                                    \
    } while (false)

namespace {

// The test executable runs itself with this variable set to play a session that crashes.
const char *const kCrashDirVariable = "MESHPLAN_TEST_CRASHING_SESSION_DIR";
const char *const kCrashPlanVariable = "MESHPLAN_TEST_CRASHING_SESSION_PLAN";

json embeddedDefault()
{
    return json::parse(meshplan::model::embedded::defaultPlanJson());
}

json withBatch(json plan, int batch)
{
    plan["workload"]["global_batch"] = batch;
    return plan;
}

QByteArray readBytes(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

json readJson(const QString &path)
{
    return json::parse(readBytes(path).toStdString());
}

bool writeBytes(const QString &path, const QByteArray &bytes)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size();
}

QStringList filesIn(const QString &directory, const QString &pattern)
{
    return QDir(directory).entryList({pattern}, QDir::Files | QDir::Hidden, QDir::Name);
}

QString lockOf(const QString &recoveryFile)
{
    QString lock = recoveryFile;
    lock.chop(QStringLiteral(".meshplan-autosave").size());
    return lock + ".lock";
}

/// A recovery copy written by hand, as an older or damaged session might have left it.
bool writeCopy(const QString &path, const json &plan, const QString &originalPath, const QString &savedAt,
               const json &format = "meshplan/autosave", int version = 1)
{
    const json copy = {{"format", format},
                       {"version", version},
                       {"path", originalPath.toStdString()},
                       {"saved_at", savedAt.toStdString()},
                       {"plan", plan}};
    return writeBytes(path, QByteArray::fromStdString(copy.dump(2) + "\n"));
}

/// The crashing session: opens the plan, edits it, writes its recovery copy and dies without
/// running a destructor, leaving its lock file behind with the PID of a dead process.
[[noreturn]] void runCrashingSession(const QString &directory, const QString &planPath)
{
    PlanDocument document;
    Autosaver autosaver(&document, directory);
    if (document.open(planPath) || document.apply(QStringLiteral("batch"), withBatch(document.json(), 2048))
        || !autosaver.saveNow())
        std::_Exit(3);
    std::raise(SIGKILL);
    std::_Exit(4); // not reached
}

} // namespace

class AutosaverTest : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();

    void writesTheCopyAfterTheDelay();
    void continuousEditsWriteOnceWithTheLatestPlan();
    void cleanStatesRemoveTheCopy();
    void defaultDirectoryIsUnderAppData();
    void crashedSessionCopyIsRecovered();
    void destroyedWithoutDiscardIsAnOrphan();
    void untitledPlanRecoversUntitled();
    void cleanDiscardLeavesNoOrphans();
    void runningSessionIsNeverAnOrphan();
    void orphansNewestFirstSkippingUnreadable();
    void recoverRefusesABadCopyAndKeepsIt();
    void recoverRefusesARunningSessionsCopy();
    void dismissDeletesTheCopy();
    void staleLocksWithoutCopiesAreSwept();
};

void AutosaverTest::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("MeshplanTests"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_autosaver"));
}

void AutosaverTest::writesTheCopyAfterTheDelay()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    PlanDocument document;
    const QString original = dir.filePath("plan.meshplan");
    QVERIFY_OK(document.saveAs(original));
    Autosaver autosaver(&document, dir.path());
    autosaver.setDelay(200);
    QCOMPARE(QFileInfo(autosaver.recoveryFile()).absolutePath(), QFileInfo(dir.path()).absoluteFilePath());

    QVERIFY_OK(document.apply("batch", withBatch(document.json(), 2048)));
    QVERIFY(!QFile::exists(autosaver.recoveryFile())); // debounced, not written at once
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(autosaver.recoveryFile()), 5000);

    const json copy = readJson(autosaver.recoveryFile());
    QCOMPARE(copy.at("format").get<std::string>(), std::string("meshplan/autosave"));
    QCOMPARE(copy.at("version").get<int>(), 1);
    QCOMPARE(QString::fromStdString(copy.at("path").get<std::string>()), document.path());
    const QDateTime savedAt = QDateTime::fromString(QString::fromStdString(copy.at("saved_at").get<std::string>()),
                                                    Qt::ISODateWithMs);
    QVERIFY(savedAt.isValid());
    QVERIFY(qAbs(savedAt.secsTo(QDateTime::currentDateTimeUtc())) < 60);
    QVERIFY(copy.at("plan") == document.json());
    QVERIFY(readBytes(autosaver.recoveryFile()).endsWith("}\n"));
    // The user's file is never touched by autosave.
    PlanDocument onDisk;
    QVERIFY_OK(onDisk.open(original));
    QVERIFY(onDisk.json() == embeddedDefault());
    autosaver.discard();
}

void AutosaverTest::continuousEditsWriteOnceWithTheLatestPlan()
{
    QTemporaryDir dir;
    PlanDocument document;
    Autosaver autosaver(&document, dir.path());
    const int delay = 500;
    autosaver.setDelay(delay);
    QElapsedTimer clock;
    qint64 longestGap = 0; // between one edit and the next; only a gap >= delay lets the timer fire
    for (int batch : {1100, 1200, 1300, 1400}) {
        if (clock.isValid())
            longestGap = std::max(longestGap, clock.restart());
        else
            clock.start();
        QVERIFY_OK(document.apply("batch", withBatch(document.json(), batch), 1));
        if (batch != 1400)
            QTest::qWait(150);
    }
    // Every change restarted the timer: nothing was written while the edits kept coming.
    if (longestGap < delay)
        QVERIFY(!QFile::exists(autosaver.recoveryFile()));
    else
        qWarning("machine too busy to check the debounce (%lld ms between edits)", longestGap);
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(autosaver.recoveryFile()), 5000);
    QVERIFY(readJson(autosaver.recoveryFile()).at("plan") == withBatch(embeddedDefault(), 1400));
    autosaver.discard();
}

void AutosaverTest::cleanStatesRemoveTheCopy()
{
    QTemporaryDir dir;
    PlanDocument document;
    Autosaver autosaver(&document, dir.path());
    autosaver.setDelay(50);

    QVERIFY(autosaver.saveNow()); // clean: nothing to keep
    QVERIFY(!QFile::exists(autosaver.recoveryFile()));

    QVERIFY_OK(document.apply("batch", withBatch(document.json(), 2048)));
    QVERIFY(autosaver.saveNow());
    QVERIFY(QFile::exists(autosaver.recoveryFile()));
    document.undoStack()->undo(); // back to the clean state
    QVERIFY(!QFile::exists(autosaver.recoveryFile()));

    document.undoStack()->redo();
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(autosaver.recoveryFile()), 5000);
    QVERIFY_OK(document.saveAs(dir.filePath("saved.meshplan")));
    QVERIFY(!QFile::exists(autosaver.recoveryFile()));
    QTest::qWait(150); // no late write after the save
    QVERIFY(!QFile::exists(autosaver.recoveryFile()));

    QVERIFY_OK(document.apply("batch", withBatch(document.json(), 4096)));
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(autosaver.recoveryFile()), 5000);
    document.newDefault();
    QVERIFY(!QFile::exists(autosaver.recoveryFile()));
    QCOMPARE(filesIn(dir.path(), "*.meshplan-autosave"), QStringList());
}

void AutosaverTest::defaultDirectoryIsUnderAppData()
{
    const QString directory = Autosaver::defaultDirectory();
    QVERIFY(directory.startsWith(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)));
    QVERIFY(directory.contains(".qttest")); // test mode: never the user's own autosaves
    PlanDocument document;
    Autosaver autosaver(&document);
    QCOMPARE(autosaver.directory(), directory);
    QVERIFY(QFileInfo(directory).isDir());
    QVERIFY(autosaver.recoveryFile().startsWith(directory + "/"));
}

void AutosaverTest::crashedSessionCopyIsRecovered()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString autosaveDir = dir.filePath("autosave");
    const QString original = dir.filePath("original.meshplan");
    {
        PlanDocument document;
        QVERIFY_OK(document.saveAs(original));
    }

    // A live session in the same folder, whose copy must never be offered.
    PlanDocument live;
    Autosaver liveSaver(&live, autosaveDir);
    QVERIFY_OK(live.apply("batch", withBatch(live.json(), 512)));
    QVERIFY(liveSaver.saveNow());

    QProcess crashing;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(kCrashDirVariable, autosaveDir);
    environment.insert(kCrashPlanVariable, original);
    crashing.setProcessEnvironment(environment);
    crashing.setProcessChannelMode(QProcess::ForwardedChannels);
    crashing.start(QCoreApplication::applicationFilePath(), {});
    QVERIFY(crashing.waitForFinished(60000));
    QCOMPARE(crashing.exitStatus(), QProcess::CrashExit);

    // The dead session left its copy and its lock file (with a PID no longer running).
    QCOMPARE(filesIn(autosaveDir, "*.meshplan-autosave").size(), 2);
    QCOMPARE(filesIn(autosaveDir, "*.lock").size(), 2);

    const QList<Autosaver::Recovery> orphans = Autosaver::orphans(autosaveDir);
    QCOMPARE(orphans.size(), 1);
    const Autosaver::Recovery &orphan = orphans.first();
    QVERIFY(orphan.recoveryFile != QFileInfo(liveSaver.recoveryFile()).absoluteFilePath());
    QCOMPARE(orphan.originalPath, QFileInfo(original).absoluteFilePath());
    QVERIFY(orphan.savedAt.isValid());
    QVERIFY(qAbs(orphan.savedAt.secsTo(QDateTime::currentDateTimeUtc())) < 120);
    QVERIFY(!QFile::exists(lockOf(orphan.recoveryFile))); // the stale lock is cleared away

    PlanDocument recovered;
    QSignalSpy changed(&recovered, &PlanDocument::changed);
    QVERIFY_OK(Autosaver::recover(orphan, &recovered));
    QVERIFY(recovered.json() == withBatch(embeddedDefault(), 2048));
    QCOMPARE(recovered.path(), QFileInfo(original).absoluteFilePath());
    QVERIFY(recovered.isModified());
    QCOMPARE(recovered.undoStack()->count(), 0);
    QCOMPARE(changed.count(), 1);
    QVERIFY(!QFile::exists(orphan.recoveryFile));
    QVERIFY(Autosaver::orphans(autosaveDir).isEmpty());

    // The running session kept its copy and its lock.
    QVERIFY(QFile::exists(liveSaver.recoveryFile()));
    QVERIFY(readJson(liveSaver.recoveryFile()).at("plan") == live.json());
    QVERIFY(QFile::exists(lockOf(liveSaver.recoveryFile())));
    liveSaver.discard();
}

void AutosaverTest::destroyedWithoutDiscardIsAnOrphan()
{
    QTemporaryDir dir;
    const QString original = dir.filePath("original.meshplan");
    json edited;
    QString copy;
    {
        PlanDocument document;
        QVERIFY_OK(document.saveAs(original));
        Autosaver autosaver(&document, dir.path());
        QVERIFY_OK(document.apply("batch", withBatch(document.json(), 2048)));
        QVERIFY_OK(document.apply("seq", [&] {
            json plan = document.json();
            plan["workload"]["seq_len"] = 8192;
            plan["notes"] = "kept through recovery";
            return plan;
        }()));
        QVERIFY(autosaver.saveNow());
        edited = document.json();
        copy = QFileInfo(autosaver.recoveryFile()).absoluteFilePath();
    } // no discard(): as if the window went away without a clean exit
    QVERIFY(QFile::exists(copy));
    QCOMPARE(filesIn(dir.path(), "*.lock"), QStringList());

    const auto orphans = Autosaver::orphans(dir.path());
    QCOMPARE(orphans.size(), 1);
    QCOMPARE(orphans.first().recoveryFile, copy);
    PlanDocument recovered;
    QVERIFY_OK(Autosaver::recover(orphans.first(), &recovered));
    QVERIFY(recovered.json() == edited);
    QCOMPARE(recovered.path(), QFileInfo(original).absoluteFilePath());
    QVERIFY(recovered.isModified());
    QVERIFY(!QFile::exists(copy));
}

void AutosaverTest::untitledPlanRecoversUntitled()
{
    QTemporaryDir dir;
    {
        PlanDocument document;
        Autosaver autosaver(&document, dir.path());
        QVERIFY_OK(document.apply("batch", withBatch(document.json(), 2048)));
        QVERIFY(autosaver.saveNow());
    }
    const auto orphans = Autosaver::orphans(dir.path());
    QCOMPARE(orphans.size(), 1);
    QCOMPARE(orphans.first().originalPath, QString());
    PlanDocument recovered;
    QVERIFY_OK(Autosaver::recover(orphans.first(), &recovered));
    QCOMPARE(recovered.path(), QString());
    QCOMPARE(recovered.displayName(), QStringLiteral("Untitled"));
    QVERIFY(recovered.isModified());
    QVERIFY(recovered.json() == withBatch(embeddedDefault(), 2048));
}

void AutosaverTest::cleanDiscardLeavesNoOrphans()
{
    QTemporaryDir dir;
    {
        PlanDocument document;
        Autosaver autosaver(&document, dir.path());
        QVERIFY_OK(document.apply("batch", withBatch(document.json(), 2048)));
        QVERIFY(autosaver.saveNow());
        QVERIFY(QFile::exists(autosaver.recoveryFile()));
        autosaver.discard(); // the clean exit
        QVERIFY(!QFile::exists(autosaver.recoveryFile()));
    }
    QVERIFY(Autosaver::orphans(dir.path()).isEmpty());
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot), QStringList());
}

void AutosaverTest::runningSessionIsNeverAnOrphan()
{
    QTemporaryDir dir;
    PlanDocument first;
    PlanDocument second;
    Autosaver firstSaver(&first, dir.path());
    Autosaver secondSaver(&second, dir.path());
    QVERIFY(firstSaver.recoveryFile() != secondSaver.recoveryFile());
    QVERIFY_OK(first.apply("batch", withBatch(first.json(), 2048)));
    QVERIFY_OK(second.apply("batch", withBatch(second.json(), 4096)));
    QVERIFY(firstSaver.saveNow());
    QVERIFY(secondSaver.saveNow());
    QVERIFY(Autosaver::orphans(dir.path()).isEmpty());

    // A session runs for hours: an hour-old lock of a live process is still live (age alone,
    // like QLockFile's default 30 s stale time, never makes it stale).
    QFile lock(lockOf(firstSaver.recoveryFile()));
    QVERIFY(lock.open(QIODevice::ReadOnly | QIODevice::Append));
    QVERIFY(lock.setFileTime(QDateTime::currentDateTime().addSecs(-3600), QFileDevice::FileModificationTime));
    lock.close();
    QVERIFY(QFileInfo(lock.fileName()).lastModified() < QDateTime::currentDateTime().addSecs(-3000));
    QVERIFY(Autosaver::orphans(dir.path()).isEmpty());
    QVERIFY(QFile::exists(firstSaver.recoveryFile()));
    QVERIFY(QFile::exists(lock.fileName()));

    // A third session starting in the same folder sweeps nothing of theirs either.
    PlanDocument third;
    Autosaver thirdSaver(&third, dir.path());
    QCOMPARE(filesIn(dir.path(), "*.lock").size(), 3);
    QVERIFY(Autosaver::orphans(dir.path()).isEmpty());
    firstSaver.discard();
    secondSaver.discard();
}

void AutosaverTest::orphansNewestFirstSkippingUnreadable()
{
    QTemporaryDir dir;
    const json plan = withBatch(embeddedDefault(), 2048);
    QVERIFY(writeCopy(dir.filePath("older.meshplan-autosave"), plan, "/plans/older.meshplan",
                      "2024-01-01T10:00:00.000Z"));
    QVERIFY(writeCopy(dir.filePath("newest.meshplan-autosave"), plan, "/plans/newest.meshplan",
                      "2025-06-01T10:00:00.000Z"));
    QVERIFY(writeCopy(dir.filePath("middle.meshplan-autosave"), plan, "", "2024-06-01T10:00:00.000Z"));
    QVERIFY(writeBytes(dir.filePath("garbage.meshplan-autosave"), "{ not json"));
    QVERIFY(writeCopy(dir.filePath("plan-file.meshplan-autosave"), plan, "", "2025-01-01T00:00:00.000Z",
                      "meshplan/plan"));
    QVERIFY(writeCopy(dir.filePath("future.meshplan-autosave"), plan, "", "2025-01-01T00:00:00.000Z",
                      "meshplan/autosave", 2));
    QVERIFY(writeBytes(dir.filePath("unrelated.meshplan"), "{}"));

    const auto orphans = Autosaver::orphans(dir.path());
    QCOMPARE(orphans.size(), 3);
    QCOMPARE(QFileInfo(orphans[0].recoveryFile).fileName(), QStringLiteral("newest.meshplan-autosave"));
    QCOMPARE(orphans[0].originalPath, QStringLiteral("/plans/newest.meshplan"));
    QCOMPARE(orphans[0].savedAt, QDateTime(QDate(2025, 6, 1), QTime(10, 0), Qt::UTC));
    QCOMPARE(QFileInfo(orphans[1].recoveryFile).fileName(), QStringLiteral("middle.meshplan-autosave"));
    QCOMPARE(QFileInfo(orphans[2].recoveryFile).fileName(), QStringLiteral("older.meshplan-autosave"));
    // Unreadable copies are skipped, not deleted.
    QVERIFY(QFile::exists(dir.filePath("garbage.meshplan-autosave")));
    QVERIFY(QFile::exists(dir.filePath("future.meshplan-autosave")));
}

void AutosaverTest::recoverRefusesABadCopyAndKeepsIt()
{
    QTemporaryDir dir;
    json bad = embeddedDefault();
    bad["parallelism"]["tensor"] = 0;
    const QString copy = dir.filePath("bad.meshplan-autosave");
    QVERIFY(writeCopy(copy, bad, "/plans/bad.meshplan", "2025-01-01T00:00:00.000Z"));
    const auto orphans = Autosaver::orphans(dir.path());
    QCOMPARE(orphans.size(), 1);

    PlanDocument document;
    QVERIFY_OK(document.apply("batch", withBatch(document.json(), 2048)));
    const json before = document.json();
    const auto error = Autosaver::recover(orphans.first(), &document);
    QVERIFY(error);
    QVERIFY2(error->contains("parallelism.tensor") && error->contains("bad.meshplan-autosave"), qPrintable(*error));
    QVERIFY(QFile::exists(copy));
    QVERIFY(document.json() == before);
    QCOMPARE(document.path(), QString());
    QCOMPARE(document.undoStack()->count(), 1);
}

void AutosaverTest::recoverRefusesARunningSessionsCopy()
{
    QTemporaryDir dir;
    PlanDocument document;
    Autosaver autosaver(&document, dir.path());
    QVERIFY_OK(document.apply("batch", withBatch(document.json(), 2048)));
    QVERIFY(autosaver.saveNow());
    const Autosaver::Recovery running{autosaver.recoveryFile(), QString(), QDateTime::currentDateTimeUtc()};
    PlanDocument other;
    QVERIFY(Autosaver::recover(running, &other));
    QVERIFY(other.json() == embeddedDefault());
    QVERIFY(!other.isModified());
    Autosaver::dismiss(running); // refused as well
    QVERIFY(QFile::exists(autosaver.recoveryFile()));
    autosaver.discard();
}

void AutosaverTest::dismissDeletesTheCopy()
{
    QTemporaryDir dir;
    {
        PlanDocument document;
        Autosaver autosaver(&document, dir.path());
        QVERIFY_OK(document.apply("batch", withBatch(document.json(), 2048)));
        QVERIFY(autosaver.saveNow());
    }
    const auto orphans = Autosaver::orphans(dir.path());
    QCOMPARE(orphans.size(), 1);
    Autosaver::dismiss(orphans.first());
    QVERIFY(!QFile::exists(orphans.first().recoveryFile));
    QVERIFY(Autosaver::orphans(dir.path()).isEmpty());
}

void AutosaverTest::staleLocksWithoutCopiesAreSwept()
{
    QTemporaryDir dir;
    // A session killed before its first autosave leaves only its lock.
    QProcess crashing;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(kCrashDirVariable, dir.path());
    environment.insert(kCrashPlanVariable, dir.filePath("missing.meshplan")); // fails to open: exits early
    crashing.setProcessEnvironment(environment);
    crashing.start(QCoreApplication::applicationFilePath(), {});
    QVERIFY(crashing.waitForFinished(60000));
    QCOMPARE(crashing.exitStatus(), QProcess::NormalExit);
    QCOMPARE(crashing.exitCode(), 3);
    // _Exit ran no destructor: the lock of the dead process stays, with no copy.
    QCOMPARE(filesIn(dir.path(), "*.lock").size(), 1);
    QCOMPARE(filesIn(dir.path(), "*.meshplan-autosave").size(), 0);

    PlanDocument document;
    Autosaver autosaver(&document, dir.path());
    const QStringList locks = filesIn(dir.path(), "*.lock");
    QCOMPARE(locks.size(), 1); // only the new session's own
    QCOMPARE(dir.filePath(locks.first()), lockOf(autosaver.recoveryFile()));
}

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    if (const QString directory = qEnvironmentVariable(kCrashDirVariable); !directory.isEmpty())
        runCrashingSession(directory, qEnvironmentVariable(kCrashPlanVariable));
    AutosaverTest test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "tst_autosaver.moc"
