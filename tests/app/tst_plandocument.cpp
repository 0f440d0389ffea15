// The plan document: new, open, save, undo/redo with merging, refusals that leave the open
// document exactly as it was, the saved file format (golden), and the recent-files list.

#include "base/embeddedresources.h"
#include "fulldisk.h"
#include "plandocument.h"
#include "recentfiles.h"

#include <QProcess>
#include <QtTest>

#include <sys/stat.h>
#include <QUndoStack>

#include <cmath>
#include <limits>

using meshplan::app::PlanDocument;
using meshplan::app::RecentFiles;
using nlohmann::json;

/// Checks that an operation returning std::optional<QString> succeeded, showing its message if not.
#define QVERIFY_OK(expression)                                                                    \
    do {                                                                                          \
        const std::optional<QString> error_ = (expression);                                      \
        QVERIFY2(!error_, error_ ? qPrintable(*error_) : "");                                    \
    } while (false)

namespace {

json embeddedDefault()
{
    return json::parse(meshplan::model::embedded::defaultPlanJson());
}

QByteArray readBytes(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return file.readAll();
}

bool writeBytes(const QString &path, const QByteArray &bytes)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size();
}

json withField(json plan, const char *pointer, const json &value)
{
    plan[json::json_pointer(pointer)] = value;
    return plan;
}

/// `levels` arrays nested inside one another: "[[...]]".
std::string nestedArrays(int levels)
{
    return std::string(static_cast<std::size_t>(levels), '[') + std::string(static_cast<std::size_t>(levels), ']');
}

/// Everything a refused operation must leave alone.
struct State {
    json plan;
    QString path;
    int count = 0;
    int index = 0;
    bool modified = false;
    bool clean = false;

    static State of(const PlanDocument &document)
    {
        return {document.json(), document.path(), document.undoStack()->count(), document.undoStack()->index(),
                document.isModified(), document.undoStack()->isClean()};
    }
    bool operator==(const State &other) const
    {
        return plan == other.plan && path == other.path && count == other.count && index == other.index
            && modified == other.modified && clean == other.clean;
    }
};

double stepTokens(const PlanDocument &document)
{
    return document.evaluation() ? document.evaluation()->step.tokens : -1.0;
}

} // namespace

class PlanDocumentTest : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();

    void newDocumentIsTheEmbeddedDefault();
    void newDefaultClearsHistoryAndPath();
    void applyUndoRedo();
    void identicalApplyRecordsNothing();
    void sameMergeKeyIsOneStep();
    void differentMergeKeysAreSeparateSteps();
    void mergeBackToTheStartDropsTheStep();
    void editAfterSaveIsNotMergedIntoTheSavedStep();
    void refusedEditChangesNothing_data();
    void refusedEditChangesNothing();
    void deepestStorableJsonRoundTrips();
    void evaluationErrorKeepsThePlanEditable();
    void saveAndOpenRoundTrip();
    void unknownKeysSurviveASave();
    void savedDefaultMatchesGolden();
    void openRefusesAndLeavesTheDocument_data();
    void openRefusesAndLeavesTheDocument();
    void saveWithoutPathFails();
    void saveToUnwritablePathFails();
    void saveIntoReadOnlyFolderKeepsOldFile();
    void saveRefusesNonFiniteNumbersAndKeepsOldFile();
    void saveOnAFullDiskKeepsTheOldFile();
    void saveOnATinyTmpfsKeepsTheOldFile();
    void restoreMarksModified();
    void restoreRefusesBadPlan();

    void recentFilesNewestFirstWithoutDuplicates();
    void recentFilesCappedAtTen();
    void recentFilesDropMissingAndStoreAbsolutePaths();

private:
    QTemporaryDir m_dir;
    QString m_validFile; ///< a saved copy of the default plan
};

void PlanDocumentTest::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("MeshplanTests"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_plandocument"));
    QVERIFY(m_dir.isValid());
    m_validFile = m_dir.filePath("valid.meshplan");
    const std::string_view plan = meshplan::model::embedded::defaultPlanJson();
    QVERIFY(writeBytes(m_validFile, QByteArray(plan.data(), qsizetype(plan.size()))));
}

void PlanDocumentTest::newDocumentIsTheEmbeddedDefault()
{
    PlanDocument document;
    QVERIFY(document.json() == embeddedDefault());
    QCOMPARE(document.path(), QString());
    QCOMPARE(document.displayName(), QStringLiteral("Untitled"));
    QVERIFY(!document.isModified());
    QCOMPARE(document.undoStack()->count(), 0);
    QVERIFY(document.evaluation().hasValue());
    QCOMPARE(document.plan().model.id, std::string("llama-3-70b"));
    QVERIFY(stepTokens(document) == 1024.0 * 4096.0);
}

void PlanDocumentTest::newDefaultClearsHistoryAndPath()
{
    PlanDocument document;
    QVERIFY_OK(document.open(m_validFile));
    QVERIFY_OK(document.apply("batch", withField(document.json(), "/workload/global_batch", 2048)));
    QVERIFY(document.isModified());

    QSignalSpy changed(&document, &PlanDocument::changed);
    QSignalSpy pathChanged(&document, &PlanDocument::pathChanged);
    QSignalSpy modifiedChanged(&document, &PlanDocument::modifiedChanged);
    document.newDefault();
    QVERIFY(document.json() == embeddedDefault());
    QCOMPARE(document.path(), QString());
    QCOMPARE(document.undoStack()->count(), 0);
    QVERIFY(!document.isModified());
    QCOMPARE(changed.count(), 1);
    QCOMPARE(pathChanged.count(), 1);
    QCOMPARE(pathChanged.at(0).at(0).toString(), QString());
    QCOMPARE(modifiedChanged.count(), 1);
    QCOMPARE(modifiedChanged.at(0).at(0).toBool(), false);
}

void PlanDocumentTest::applyUndoRedo()
{
    PlanDocument document;
    const json before = document.json();
    const json after = withField(before, "/workload/global_batch", 2048);
    QSignalSpy changed(&document, &PlanDocument::changed);
    QSignalSpy modifiedChanged(&document, &PlanDocument::modifiedChanged);

    QVERIFY_OK(document.apply("Global batch", after));
    QCOMPARE(changed.count(), 1);
    QVERIFY(document.json() == after);
    QCOMPARE(document.plan().training.globalBatch, std::int64_t(2048));
    QVERIFY(stepTokens(document) == 2048.0 * 4096.0);
    QVERIFY(document.isModified());
    QCOMPARE(modifiedChanged.count(), 1);
    QCOMPARE(modifiedChanged.at(0).at(0).toBool(), true);
    QCOMPARE(document.undoStack()->count(), 1);
    QCOMPARE(document.undoStack()->undoText(), QStringLiteral("Global batch"));

    document.undoStack()->undo();
    QCOMPARE(changed.count(), 2);
    QVERIFY(document.json() == before);
    QVERIFY(stepTokens(document) == 1024.0 * 4096.0);
    QVERIFY(!document.isModified());
    QCOMPARE(modifiedChanged.count(), 2);
    QCOMPARE(modifiedChanged.at(1).at(0).toBool(), false);

    document.undoStack()->redo();
    QCOMPARE(changed.count(), 3);
    QVERIFY(document.json() == after);
    QVERIFY(stepTokens(document) == 2048.0 * 4096.0);
    QVERIFY(document.isModified());
    QCOMPARE(modifiedChanged.count(), 3);
}

void PlanDocumentTest::identicalApplyRecordsNothing()
{
    PlanDocument document;
    QSignalSpy changed(&document, &PlanDocument::changed);
    QVERIFY_OK(document.apply("nothing", document.json()));
    QCOMPARE(document.undoStack()->count(), 0);
    QCOMPARE(changed.count(), 0);
    QVERIFY(!document.isModified());
}

void PlanDocumentTest::sameMergeKeyIsOneStep()
{
    PlanDocument document;
    const json before = document.json();
    for (int batch : {1100, 1200, 1300})
        QVERIFY_OK(document.apply("Global batch", withField(document.json(), "/workload/global_batch", batch), 7));
    QCOMPARE(document.undoStack()->count(), 1);
    QCOMPARE(document.plan().training.globalBatch, std::int64_t(1300));

    document.undoStack()->undo();
    QVERIFY(document.json() == before);
    QVERIFY(!document.isModified());
    QVERIFY(!document.undoStack()->canUndo());
    document.undoStack()->redo();
    QVERIFY(document.json() == withField(before, "/workload/global_batch", 1300));
}

void PlanDocumentTest::differentMergeKeysAreSeparateSteps()
{
    PlanDocument document;
    const json start = document.json();
    QVERIFY_OK(document.apply("batch", withField(document.json(), "/workload/global_batch", 1100), 1));
    const json afterFirst = document.json();
    QVERIFY_OK(document.apply("sequence", withField(document.json(), "/workload/seq_len", 8192), 2));
    const json afterSecond = document.json();
    QVERIFY_OK(document.apply("batch", withField(document.json(), "/workload/global_batch", 1200), 1));
    // No merge key (-1): never merged, even with itself.
    QVERIFY_OK(document.apply("zero", withField(document.json(), "/parallelism/zero_stage", 2)));
    QVERIFY_OK(document.apply("zero", withField(document.json(), "/parallelism/zero_stage", 1)));
    QCOMPARE(document.undoStack()->count(), 5);

    document.undoStack()->setIndex(2);
    QVERIFY(document.json() == afterSecond);
    document.undoStack()->setIndex(1);
    QVERIFY(document.json() == afterFirst);
    document.undoStack()->setIndex(0);
    QVERIFY(document.json() == start);
}

void PlanDocumentTest::mergeBackToTheStartDropsTheStep()
{
    PlanDocument document;
    const json start = document.json();
    QVERIFY_OK(document.apply("batch", withField(start, "/workload/global_batch", 2048), 3));
    QVERIFY(document.isModified());
    QVERIFY_OK(document.apply("batch", withField(start, "/workload/global_batch", 1024), 3));
    QVERIFY(document.json() == start);
    QCOMPARE(document.undoStack()->count(), 0);
    QVERIFY(!document.isModified());
}

void PlanDocumentTest::editAfterSaveIsNotMergedIntoTheSavedStep()
{
    PlanDocument document;
    QVERIFY_OK(document.apply("batch", withField(document.json(), "/workload/global_batch", 1100), 4));
    QVERIFY_OK(document.saveAs(m_dir.filePath("merge-after-save.meshplan")));
    const json saved = document.json();
    QVERIFY_OK(document.apply("batch", withField(document.json(), "/workload/global_batch", 1200), 4));
    QCOMPARE(document.undoStack()->count(), 2);
    document.undoStack()->undo();
    QVERIFY(document.json() == saved);
    QVERIFY(!document.isModified());
}

void PlanDocumentTest::refusedEditChangesNothing_data()
{
    QTest::addColumn<QString>("pointer");
    QTest::addColumn<QString>("value"); // JSON text
    QTest::addColumn<QString>("named");

    QTest::newRow("tensor 0") << "/parallelism/tensor" << "0" << "parallelism.tensor";
    QTest::newRow("unknown model") << "/model" << "\"no-such-model\"" << "model";
    QTest::newRow("newer version") << "/version" << "99" << "version";
    QTest::newRow("too deep") << "/notes" << QString::fromStdString(nestedArrays(PlanDocument::kMaxJsonDepth))
                              << "nests deeper than 64";
    QTest::newRow("not finite") << "/notes" << "NaN" << "notes";
}

void PlanDocumentTest::refusedEditChangesNothing()
{
    QFETCH(QString, pointer);
    QFETCH(QString, value);
    QFETCH(QString, named);

    PlanDocument document;
    QVERIFY_OK(document.apply("batch", withField(document.json(), "/workload/global_batch", 2048), 1));
    const State before = State::of(document);
    QSignalSpy changed(&document, &PlanDocument::changed);

    const json parsedValue = value == "NaN" ? json(std::numeric_limits<double>::quiet_NaN())
                                            : json::parse(value.toStdString());
    const auto error = document.apply("bad", withField(document.json(), pointer.toUtf8().constData(), parsedValue), 1);
    QVERIFY(error);
    QVERIFY2(error->contains(named), qPrintable(*error));
    QVERIFY(State::of(document) == before);
    QCOMPARE(changed.count(), 0);
}

void PlanDocumentTest::deepestStorableJsonRoundTrips()
{
    // The limit applied to edits is the limit applied to files: what an edit accepts can be
    // saved and opened again. Root object is level 1, "notes" holds levels 2..64.
    PlanDocument document;
    const json deepest = withField(document.json(), "/notes",
                                   json::parse(nestedArrays(PlanDocument::kMaxJsonDepth - 1)));
    QVERIFY_OK(document.apply("notes", deepest));
    const QString path = m_dir.filePath("deepest.meshplan");
    QVERIFY_OK(document.saveAs(path));
    PlanDocument reopened;
    QVERIFY_OK(reopened.open(path));
    QVERIFY(reopened.json() == deepest);
}

void PlanDocumentTest::evaluationErrorKeepsThePlanEditable()
{
    PlanDocument document;
    const json start = document.json();
    // 512 x 4 x 2 = 4096 chips on an 8192-chip pod: the plan loads but cannot be evaluated.
    QVERIFY_OK(document.apply("fsdp", withField(start, "/parallelism/fsdp", 512)));
    QVERIFY(!document.evaluation().hasValue());
    QVERIFY(!document.evaluation().error().message.empty());
    QVERIFY_OK(document.apply("fsdp", withField(document.json(), "/parallelism/fsdp", 1024)));
    QVERIFY(document.evaluation().hasValue());
    QVERIFY(document.json() == start);
}

void PlanDocumentTest::saveAndOpenRoundTrip()
{
    PlanDocument document;
    QVERIFY_OK(document.apply("batch", withField(document.json(), "/workload/global_batch", 2048)));
    const QString path = m_dir.filePath("round-trip.meshplan");
    QSignalSpy pathChanged(&document, &PlanDocument::pathChanged);
    QVERIFY_OK(document.saveAs(path));
    QVERIFY(!document.isModified());
    QVERIFY(document.undoStack()->isClean());
    QCOMPARE(document.undoStack()->count(), 1); // saving keeps the history
    QCOMPARE(document.path(), QFileInfo(path).absoluteFilePath());
    QCOMPARE(document.displayName(), QStringLiteral("round-trip.meshplan"));
    QCOMPARE(pathChanged.count(), 1);

    PlanDocument reopened;
    QSignalSpy changed(&reopened, &PlanDocument::changed);
    QVERIFY_OK(reopened.open(path));
    QCOMPARE(changed.count(), 1);
    QVERIFY(reopened.json() == document.json());
    QCOMPARE(reopened.path(), document.path());
    QVERIFY(!reopened.isModified());
    QCOMPARE(reopened.undoStack()->count(), 0);
    QVERIFY(stepTokens(reopened) == 2048.0 * 4096.0);

    // Undo past the save point: modified again; save() writes to the same file.
    document.undoStack()->undo();
    QVERIFY(document.isModified());
    QVERIFY_OK(document.save());
    QVERIFY(!document.isModified());
    QVERIFY_OK(reopened.open(path));
    QVERIFY(reopened.json() == embeddedDefault());
}

void PlanDocumentTest::unknownKeysSurviveASave()
{
    PlanDocument document;
    json plan = document.json();
    plan["notes"] = {{"author", "me"}, {"ratios", {0.5, 1.5}}};
    plan["parallelism"]["future_option"] = true;
    QVERIFY_OK(document.apply("notes", plan));
    const QString path = m_dir.filePath("unknown-keys.meshplan");
    QVERIFY_OK(document.saveAs(path));
    PlanDocument reopened;
    QVERIFY_OK(reopened.open(path));
    QVERIFY(reopened.json() == plan);
}

void PlanDocumentTest::savedDefaultMatchesGolden()
{
    PlanDocument document;
    const QString path = m_dir.filePath("saved-default.meshplan");
    QVERIFY_OK(document.saveAs(path));
    const QByteArray saved = readBytes(path);
    const QByteArray golden = readBytes(QStringLiteral(MESHPLAN_TEST_DATA "/golden/saved-default.meshplan"));
    QVERIFY(!golden.isEmpty());
    QCOMPARE(saved, golden);
    QVERIFY(saved.endsWith("}\n"));
    QVERIFY(saved.contains("\n  \"format\": \"meshplan/plan\",\n"));
}

void PlanDocumentTest::openRefusesAndLeavesTheDocument_data()
{
    QTest::addColumn<QString>("fileName");
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QStringList>("named"); // each must appear in the message

    const std::string plan(meshplan::model::embedded::defaultPlanJson());
    const auto edited = [&](const char *pointer, const json &value) {
        return QByteArray::fromStdString(withField(json::parse(plan), pointer, value).dump(2));
    };

    QTest::newRow("not JSON") << "not-json.meshplan"
                              << QByteArray("{\n  \"format\": \"meshplan/plan\",\n  oops\n}\n")
                              << QStringList{"not-json.meshplan", "line 3", "not valid JSON"};
    QTest::newRow("newer version") << "newer.meshplan" << edited("/version", 99)
                                   << QStringList{"newer.meshplan", "version", "99"};
    QTest::newRow("bad field") << "tensor-0.meshplan" << edited("/parallelism/tensor", 0)
                               << QStringList{"tensor-0.meshplan", "parallelism.tensor"};
    QTest::newRow("other format") << "autosave.meshplan" << edited("/format", "meshplan/autosave")
                                  << QStringList{"autosave.meshplan", "format"};
    QTest::newRow("not an object") << "array.meshplan" << QByteArray("[1, 2, 3]\n")
                                   << QStringList{"array.meshplan", "object"};
    QByteArray huge(17 * 1024 * 1024, ' ');
    huge.prepend(QByteArray::fromStdString(plan));
    QTest::newRow("17 MiB") << "huge.meshplan" << huge << QStringList{"huge.meshplan", "16 MiB"};
    QTest::newRow("65 levels") << "deep.meshplan"
                               << edited("/notes", json::parse(nestedArrays(PlanDocument::kMaxJsonDepth)))
                               << QStringList{"deep.meshplan", "deeper than 64"};
    QByteArray veryDeep = QByteArray::fromStdString(plan);
    veryDeep.chop(veryDeep.size() - veryDeep.lastIndexOf('}'));
    veryDeep += ", \"notes\": " + QByteArray::fromStdString(nestedArrays(200000)) + "}\n";
    QTest::newRow("200000 levels") << "very-deep.meshplan" << veryDeep
                                   << QStringList{"very-deep.meshplan", "deeper than 64"};
    QTest::newRow("missing") << "" << QByteArray() << QStringList{"missing.meshplan", "does not exist"};
    QByteArray twice = QByteArray::fromStdString(plan);
    twice.replace("\"kind\": \"training\",", "\"kind\": \"training\", \"kind\": \"inference\",");
    QTest::newRow("repeated key") << "twice.meshplan" << twice
                                  << QStringList{"twice.meshplan", "workload.kind", "appears twice"};
    QByteArray overflow = QByteArray::fromStdString(plan);
    overflow.replace("\"seq_len\": 4096", "\"seq_len\": 1e400");
    QTest::newRow("1e400") << "overflow.meshplan" << overflow
                           << QStringList{"overflow.meshplan", "too large for a double", "line "};
    // Issue 15: hostile files the reliability pass found mishandled.
    QTest::newRow("one byte 0xEF") << "ef.meshplan" << QByteArray("\xEF")
                                   << QStringList{"ef.meshplan", "not UTF-8 at byte 0"};
    QByteArray utf16("\xFF\xFE");
    for (char c : plan) {
        utf16 += c;
        utf16 += '\0';
    }
    QTest::newRow("UTF-16 plan") << "utf16.meshplan" << utf16 << QStringList{"utf16.meshplan", "UTF-16"};
    QByteArray badTitle = QByteArray::fromStdString(plan);
    const qsizetype titleAt = badTitle.indexOf("\"title\": \"") + 10;
    badTitle.insert(titleAt, "\xC3\x28");
    QTest::newRow("invalid UTF-8 in the title")
        << "bad-title.meshplan" << badTitle
        << QStringList{"bad-title.meshplan", QStringLiteral("not UTF-8 at byte %1").arg(titleAt), "line 4"};
    QTest::newRow("NUL after the document") << "nul.meshplan" << QByteArray::fromStdString(plan) + QByteArray(1, '\0')
                                            << QStringList{"nul.meshplan", "NUL byte"};
    QTest::newRow("a FIFO") << "fifo:pipe.meshplan" << QByteArray() << QStringList{"pipe.meshplan", "not a regular file"};
    QTest::newRow("a folder") << "dir:folder.meshplan" << QByteArray() << QStringList{"folder.meshplan", "is a folder"};
    QTest::newRow("an axis placed twice") << "twice-axis.meshplan" << edited("/parallelism/placement", json{{"tensor", {"x", "x"}}})
                                          << QStringList{"twice-axis.meshplan", "parallelism.placement.tensor", "twice"};
}

void PlanDocumentTest::openRefusesAndLeavesTheDocument()
{
    QFETCH(QString, fileName);
    QFETCH(QByteArray, content);
    QFETCH(QStringList, named);

    QString path = m_dir.filePath(QStringLiteral("missing.meshplan"));
    if (fileName.startsWith(QStringLiteral("fifo:"))) {
        path = m_dir.filePath(fileName.mid(5));
        QFile::remove(path);
        QCOMPARE(::mkfifo(QFile::encodeName(path).constData(), 0600), 0);
    } else if (fileName.startsWith(QStringLiteral("dir:"))) {
        path = m_dir.filePath(fileName.mid(4));
        QVERIFY(QDir().mkpath(path));
    } else if (!fileName.isEmpty()) {
        path = m_dir.filePath(fileName);
        QVERIFY(writeBytes(path, content));
    }

    // An open, edited document: a path, one undo step, modified.
    PlanDocument document;
    QVERIFY_OK(document.open(m_validFile));
    QVERIFY_OK(document.apply("batch", withField(document.json(), "/workload/global_batch", 2048)));
    const State before = State::of(document);
    QVERIFY(before.modified);
    QSignalSpy changed(&document, &PlanDocument::changed);
    QSignalSpy pathChanged(&document, &PlanDocument::pathChanged);
    QSignalSpy modifiedChanged(&document, &PlanDocument::modifiedChanged);

    const auto error = document.open(path);
    QVERIFY(error);
    for (const QString &word : named)
        QVERIFY2(error->contains(word), qPrintable(QStringLiteral("\"%1\" not in: %2").arg(word, *error)));
    QVERIFY(State::of(document) == before);
    QCOMPARE(changed.count(), 0);
    QCOMPARE(pathChanged.count(), 0);
    QCOMPARE(modifiedChanged.count(), 0);
    document.undoStack()->undo(); // the history still works
    QVERIFY(document.json() == embeddedDefault());
}

void PlanDocumentTest::saveWithoutPathFails()
{
    PlanDocument document;
    QVERIFY_OK(document.apply("batch", withField(document.json(), "/workload/global_batch", 2048)));
    const auto error = document.save();
    QVERIFY(error);
    QVERIFY(document.isModified());
    QCOMPARE(document.path(), QString());
}

void PlanDocumentTest::saveToUnwritablePathFails()
{
    // A regular file in the way of the folder: no one, root included, can write below it.
    const QString blocker = m_dir.filePath("blocker");
    QVERIFY(writeBytes(blocker, "not a folder\n"));
    PlanDocument document;
    QVERIFY_OK(document.open(m_validFile));
    QVERIFY_OK(document.apply("batch", withField(document.json(), "/workload/global_batch", 2048)));
    const State before = State::of(document);

    const auto error = document.saveAs(blocker + "/plan.meshplan");
    QVERIFY(error);
    QVERIFY2(error->contains("plan.meshplan"), qPrintable(*error));
    QVERIFY(State::of(document) == before);
    QCOMPARE(readBytes(blocker), QByteArray("not a folder\n"));
}

void PlanDocumentTest::saveIntoReadOnlyFolderKeepsOldFile()
{
    QTemporaryDir folder;
    QVERIFY(folder.isValid());
    const QString path = folder.filePath("old.meshplan");
    QVERIFY(writeBytes(path, "old content\n"));
    QVERIFY(QFile::setPermissions(folder.path(), QFileDevice::ReadOwner | QFileDevice::ExeOwner));
    const auto restorePermissions = qScopeGuard([&] {
        QFile::setPermissions(folder.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    });
    {
        QFile probe(folder.filePath("probe"));
        if (probe.open(QIODevice::WriteOnly)) {
            probe.remove();
            QSKIP("permissions do not bind this user (root): covered by saveToUnwritablePathFails");
        }
    }
    PlanDocument document;
    QVERIFY_OK(document.apply("batch", withField(document.json(), "/workload/global_batch", 2048)));
    const State before = State::of(document);
    const auto error = document.saveAs(path);
    QVERIFY(error);
    QVERIFY2(error->contains("old.meshplan"), qPrintable(*error));
    QCOMPARE(readBytes(path), QByteArray("old content\n"));
    QVERIFY(State::of(document) == before);
}

// Issue 15.2: Qt 6.4's buffered QSaveFile committed after its flush failed, leaving 0 bytes.
void PlanDocumentTest::saveOnAFullDiskKeepsTheOldFile()
{
    const QString path = m_dir.filePath("full.meshplan");
    const QByteArray old = readBytes(m_validFile);
    QVERIFY(writeBytes(path, old));
    PlanDocument document;
    QVERIFY_OK(document.open(path));
    QVERIFY_OK(document.apply("batch", withField(document.json(), "/workload/global_batch", 2048)));
    std::optional<QString> error;
    {
        const meshplan::testing::FullDisk full(256); // a plan is about 700 bytes
        QVERIFY(full.isActive());
        error = document.saveAs(path);
    }
    QVERIFY(error);
    QVERIFY2(error->contains("full.meshplan") && error->contains("unchanged"), qPrintable(*error));
    QCOMPARE(readBytes(path), old);
    QVERIFY(document.isModified()); // the edit is still there to save elsewhere
    QVERIFY(QDir(m_dir.path()).entryList({"full.meshplan*"}, QDir::Files | QDir::Hidden).size() == 1); // no temp left
    QVERIFY_OK(document.saveAs(path));
    QVERIFY(readBytes(path) != old);
}

// The same on a real full filesystem, where one can be mounted (root, outside a container).
void PlanDocumentTest::saveOnATinyTmpfsKeepsTheOldFile()
{
    QTemporaryDir mountPoint;
    QProcess mount;
    mount.start("mount", {"-t", "tmpfs", "-o", "size=8k", "tmpfs", mountPoint.path()});
    if (!mount.waitForFinished(10000) || mount.exitStatus() != QProcess::NormalExit || mount.exitCode() != 0)
        QSKIP("cannot mount a tmpfs here: saveOnAFullDiskKeepsTheOldFile covers it with a file-size limit");
    const auto unmount = qScopeGuard([&] { QProcess::execute("umount", {mountPoint.path()}); });
    const QString path = mountPoint.filePath("plan.meshplan");
    const QByteArray old = readBytes(m_validFile);
    QVERIFY(writeBytes(path, old));
    // Fill the rest of the filesystem.
    {
        QFile filler(mountPoint.filePath("filler"));
        QVERIFY(filler.open(QIODevice::WriteOnly | QIODevice::Unbuffered));
        const QByteArray block(512, 'x');
        while (filler.write(block) == block.size()) {
        }
    }
    PlanDocument document;
    QVERIFY_OK(document.open(path));
    QVERIFY_OK(document.apply("batch", withField(document.json(), "/workload/global_batch", 2048)));
    const auto error = document.saveAs(path);
    QVERIFY(error);
    QVERIFY2(error->contains("No space left on device"), qPrintable(*error));
    QCOMPARE(readBytes(path), old);
}

void PlanDocumentTest::saveRefusesNonFiniteNumbersAndKeepsOldFile()
{
    const QString path = m_dir.filePath("finite.meshplan");
    PlanDocument document;
    QVERIFY_OK(document.saveAs(path));
    const QByteArray old = readBytes(path);

    // apply() refuses NaN; setJson() is the commands' back door and checks only that the plan loads.
    json plan = document.json();
    plan["notes"] = {{"ratio", std::numeric_limits<double>::infinity()}};
    document.setJson(plan);
    QVERIFY(document.json() == plan);
    const auto error = document.save();
    QVERIFY(error);
    QVERIFY2(error->contains("notes.ratio") && error->contains("finite.meshplan"), qPrintable(*error));
    QCOMPARE(readBytes(path), old);
    QVERIFY(!QFileInfo::exists(path + ".tmp"));
    QCOMPARE(QDir(m_dir.path()).entryList({"finite.meshplan*"}, QDir::Files | QDir::Hidden).size(), 1);
}

void PlanDocumentTest::restoreMarksModified()
{
    PlanDocument document;
    QVERIFY_OK(document.apply("batch", withField(document.json(), "/workload/global_batch", 1100)));
    const json recovered = withField(embeddedDefault(), "/workload/global_batch", 2048);
    const QString original = m_dir.filePath("original.meshplan");
    QSignalSpy changed(&document, &PlanDocument::changed);

    QVERIFY_OK(document.restore(recovered, original));
    QVERIFY(document.json() == recovered);
    QCOMPARE(document.path(), original);
    QVERIFY(document.isModified());
    QCOMPARE(document.undoStack()->count(), 0);
    QCOMPARE(changed.count(), 1);
    QVERIFY(stepTokens(document) == 2048.0 * 4096.0);

    // Edits and their undo never make a recovered plan look saved.
    QVERIFY_OK(document.apply("batch", withField(document.json(), "/workload/global_batch", 4096)));
    document.undoStack()->undo();
    QVERIFY(document.json() == recovered);
    QVERIFY(document.isModified());
    QVERIFY_OK(document.save());
    QVERIFY(!document.isModified());
}

void PlanDocumentTest::restoreRefusesBadPlan()
{
    PlanDocument document;
    QVERIFY_OK(document.apply("batch", withField(document.json(), "/workload/global_batch", 1100)));
    const State before = State::of(document);
    const auto error = document.restore(withField(embeddedDefault(), "/parallelism/tensor", 0), "/x/y.meshplan");
    QVERIFY(error);
    QVERIFY2(error->contains("parallelism.tensor"), qPrintable(*error));
    QVERIFY(State::of(document) == before);
}

void PlanDocumentTest::recentFilesNewestFirstWithoutDuplicates()
{
    RecentFiles::clear();
    QCOMPARE(RecentFiles::list(), QStringList());
    QStringList files;
    for (const char *name : {"a.meshplan", "b.meshplan", "c.meshplan"}) {
        files.append(m_dir.filePath(name));
        QVERIFY(writeBytes(files.last(), "{}\n"));
        RecentFiles::add(files.last());
    }
    QCOMPARE(RecentFiles::list(), (QStringList{files[2], files[1], files[0]}));
    RecentFiles::add(files[0]);
    QCOMPARE(RecentFiles::list(), (QStringList{files[0], files[2], files[1]}));
    RecentFiles::add(m_dir.path() + "/./b.meshplan"); // the same file, spelt differently
    QCOMPARE(RecentFiles::list(), (QStringList{files[1], files[0], files[2]}));
    RecentFiles::clear();
    QCOMPARE(RecentFiles::list(), QStringList());
}

void PlanDocumentTest::recentFilesCappedAtTen()
{
    RecentFiles::clear();
    QStringList added;
    for (int i = 0; i < 12; ++i) {
        added.prepend(m_dir.filePath(QStringLiteral("recent-%1.meshplan").arg(i)));
        QVERIFY(writeBytes(added.first(), "{}\n"));
        RecentFiles::add(added.first());
    }
    QCOMPARE(RecentFiles::kMaxFiles, 10);
    QCOMPARE(RecentFiles::list(), added.mid(0, 10));
    QCOMPARE(QSettings().value("recentFiles").toStringList().size(), 10);
    RecentFiles::clear();
}

void PlanDocumentTest::recentFilesDropMissingAndStoreAbsolutePaths()
{
    RecentFiles::clear();
    const QString kept = m_dir.filePath("kept.meshplan");
    const QString removed = m_dir.filePath("removed.meshplan");
    QVERIFY(writeBytes(kept, "{}\n"));
    QVERIFY(writeBytes(removed, "{}\n"));
    RecentFiles::add(kept);
    RecentFiles::add(removed);
    QCOMPARE(RecentFiles::list(), (QStringList{removed, kept}));
    QVERIFY(QFile::remove(removed));
    QCOMPARE(RecentFiles::list(), QStringList{kept});
    RecentFiles::add(m_dir.filePath("never-existed.meshplan"));
    QCOMPARE(RecentFiles::list(), QStringList{kept});

    const QString before = QDir::currentPath();
    QVERIFY(QDir::setCurrent(m_dir.path()));
    const auto back = qScopeGuard([&] { QDir::setCurrent(before); });
    QVERIFY(writeBytes("relative.meshplan", "{}\n"));
    RecentFiles::add("relative.meshplan");
    QCOMPARE(RecentFiles::list().first(), QFileInfo(m_dir.filePath("relative.meshplan")).absoluteFilePath());
    QVERIFY(QFileInfo(QSettings().value("recentFiles").toStringList().first()).isAbsolute());
    RecentFiles::clear();
}

QTEST_GUILESS_MAIN(PlanDocumentTest)
#include "tst_plandocument.moc"
