// What a new user tripped over in the window (issue 14): stale titles, plans named .json, serving
// views, the wheel editing the plan, silent rewrites of degrees, refusals that lose the edit, and
// a kill that leaves the session's lock behind. Each test fails without its fix.
#include "autosaver.h"
#include "fulldisk.h"
#include "chartfeed.h"
#include "importedmodels.h"
#include "mainwindow.h"
#include "plan/plantitle.h"
#include "plandocument.h"
#include "planinspector.h"
#include "windowdriver.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QProcess>
#include <QScrollArea>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

#include <signal.h>

using meshplan::app::MainWindow;
using meshplan::model::Role;
using namespace meshplan::testing;
using nlohmann::json;

namespace {

QString plansDir()
{
    return QStringLiteral(MESHPLAN_TEST_DATA "/plans/");
}

bool copyTo(const QString &from, const QString &to)
{
    QFile::remove(to);
    return QFile::copy(from, to);
}

/// The card the palette shows as current, by its payload ("" when none).
json currentPayload(meshplan::views::CardList *list)
{
    return list->currentItem() && list->currentItem()->isSelected()
               ? meshplan::views::CardList::payload(list->currentItem())
               : json();
}

/// Sends a wheel turn (one notch up) to the middle of `widget`.
void wheelOn(QWidget *widget)
{
    const QPointF pos = QRectF(widget->rect()).center();
    QWheelEvent wheel(pos, widget->mapToGlobal(pos), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(widget, &wheel);
}

} // namespace

class TestFirstUse : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_autosave;
    std::unique_ptr<MainWindow> m_window;

    MainWindow &window() { return *m_window; }
    meshplan::app::PlanDocument &doc() { return *m_window->document(); }
    meshplan::views::PlanInspector *inspector() { return m_window->inspector(); }
    bool open(const QString &plan) { return window().openFile(plansDir() + plan); }

private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void init()
    {
        m_window = showTestWindow(m_autosave.path());
        QVERIFY(m_window);
    }

    void cleanup() { m_window.reset(); }

    // 1. The title follows the model, the cluster and the layout until the user types one; the
    // mesh header, the chart exports and the Models list follow it, undo included.
    void titleFollowsEveryEdit()
    {
        const std::string first = doc().plan().title;
        QCOMPARE(first, meshplan::model::generatedTitle(doc().plan()));
        QCOMPARE(first, std::string("LLaMA-3 70B training on 8192 TPU v5p, 16x16x32: fsdp 1024 x context 2 x tensor 4"));
        QVERIFY(dropOn(window().canvas()->viewport(), meshPoint(window().canvas()),
                       cardMime(window().modelPalette(), QStringLiteral("DeepSeek-V3"))));
        const std::string second = doc().plan().title;
        QVERIFY2(second.rfind("DeepSeek-V3 training on 8192 TPU v5p, 16x16x32: ", 0) == 0, second.c_str());
        QCOMPARE(second, meshplan::model::generatedTitle(doc().plan()));
        // The mesh and the charts carry the same title (the plan's, and its dtype).
        QCOMPARE(window().canvas()->titleText(), meshplan::app::exportTitle(doc().plan()));
        QVERIFY(meshplan::app::exportTitle(doc().plan()).startsWith(QString::fromStdString(second)));
        QCOMPARE(currentPayload(window().modelPalette()), json("deepseek-v3"));
        // A cluster dropped on it: the chips change in the title too.
        QVERIFY(window().dropHardware({{"chip", "gb200"}, {"topology", {{"nodes", 1}, {"gpus_per_node", 72}}}}));
        QVERIFY2(doc().plan().title.find("on 72 NVIDIA GB200") != std::string::npos, doc().plan().title.c_str());
        QVERIFY(window().canvas()->titleText().startsWith(QString::fromStdString(doc().plan().title)));

        doc().undoStack()->undo();
        doc().undoStack()->undo();
        QCOMPARE(doc().plan().title, first);
        QVERIFY(window().canvas()->titleText().startsWith(QString::fromStdString(first)));
        QCOMPARE(currentPayload(window().modelPalette()), json("llama-3-70b"));

        // A title the user typed is theirs: later edits keep it; clearing it brings one back.
        QVERIFY(window().editField(QStringLiteral("Edit title"), "/title", "Kickoff: 70B on the pod"));
        QVERIFY(window().dropModel("llama-3-8b"));
        QCOMPARE(doc().plan().title, std::string("Kickoff: 70B on the pod"));
        QVERIFY(window().canvas()->titleText().startsWith(QStringLiteral("Kickoff: 70B on the pod · ")));
        QVERIFY(window().editField(QStringLiteral("Edit title"), "/title", ""));
        QCOMPARE(doc().plan().title, meshplan::model::generatedTitle(doc().plan()));
        QVERIFY(doc().plan().title.rfind("LLaMA-3 8B training", 0) == 0);
    }

    // 1. The mesh exports at the charts' scale (twice the on-screen pixels), header and title included.
    void meshExportsAtTheChartScale()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("mesh.png"));
        QVERIFY(!window().exportMesh(path).has_value());
        const QImage image(path);
        QCOMPARE(image.size(), window().canvas()->size() * 2);
        // Not a blank picture: the header's title and the chips are drawn.
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 5)
            for (int x = 0; x < image.width(); x += 5)
                colours.insert(image.pixel(x, y));
        QVERIFY2(colours.size() > 8, qPrintable(QString::number(colours.size())));
        // A folder that does not exist: refused with the reason, nothing half-written.
        const auto error = window().exportMesh(dir.filePath(QStringLiteral("missing/mesh.png")));
        QVERIFY(error.has_value());
        QVERIFY(error->contains(QStringLiteral("mesh.png")));
    }

    // Issue 15.3: the screenshot and the mesh export left a partial file over the one they
    // overwrote on a full disk. Now the old file is byte-identical and the exit code says so.
    void fullDiskKeepsOldPictures()
    {
        QTemporaryDir dir;
        const QString shot = dir.filePath(QStringLiteral("shot.png"));
        const QString mesh = dir.filePath(QStringLiteral("mesh.png"));
        const QByteArray old("yesterday's picture\n");
        for (const QString &path : {shot, mesh}) {
            QFile file(path);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(old);
        }
        const meshplan::testing::FullDisk full(4096);
        QVERIFY(full.isActive());
        const auto error = window().exportMesh(mesh);
        QVERIFY(error.has_value());
        QVERIFY2(error->contains(QStringLiteral("unchanged")), qPrintable(*error));
        QProcess process;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        process.setProcessEnvironment(env);
        process.start(QStringLiteral(MESHPLAN_GUI_PATH),
                      {QStringLiteral("--screenshot"), shot, QStringLiteral("--size"), QStringLiteral("800x600")});
        QVERIFY(process.waitForFinished(60000));
        QCOMPARE(process.exitStatus(), QProcess::NormalExit);
        QVERIFY(process.exitCode() != 0);
        QVERIFY(process.readAllStandardError().contains("unchanged"));
        for (const QString &path : {shot, mesh}) {
            QFile file(path);
            QVERIFY(file.open(QIODevice::ReadOnly));
            QCOMPARE(file.readAll(), old);
        }
    }

    // 2. What a file holds decides how it opens, not its name.
    void plansNamedJsonOpenAsPlans()
    {
        QTemporaryDir dir;
        const QString plan = dir.filePath(QStringLiteral("plan.json"));
        QVERIFY(copyTo(plansDir() + QStringLiteral("mixtral-8x7b-h100-moe.meshplan"), plan));
        QCOMPARE(meshplan::app::PlanDocument::kindOf(plan), meshplan::app::PlanDocument::FileKind::Plan);
        QVERIFY2(window().openFile(plan), qPrintable(window().lastError()));
        QCOMPARE(doc().plan().model.id, std::string("mixtral-8x7b"));
        QCOMPARE(doc().path(), QFileInfo(plan).absoluteFilePath());

        // A config named like a plan is a config: it adds a card and plans the model.
        const QString config = dir.filePath(QStringLiteral("tiny.meshplan"));
        QFile file(config);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 512,
                      "intermediate_size": 1536, "num_hidden_layers": 4, "num_attention_heads": 8,
                      "num_key_value_heads": 8, "vocab_size": 32000})");
        file.close();
        QCOMPARE(meshplan::app::PlanDocument::kindOf(config), meshplan::app::PlanDocument::FileKind::HfConfig);
        QVERIFY2(window().openFile(config), qPrintable(window().lastError()));
        QVERIFY(doc().json().at("model").contains("hf_config"));
        QCOMPARE(doc().plan().model.layers, 4);
        // Neither kind: a .json file is taken for a config, and the error says what it lacks.
        const QString other = dir.filePath(QStringLiteral("other.json"));
        QFile junk(other);
        QVERIFY(junk.open(QIODevice::WriteOnly));
        junk.write(R"({"hello": 1})");
        junk.close();
        QVERIFY(!window().openFile(other));
        QVERIFY(window().lastError().contains(QStringLiteral("config")));
    }

    // 4. Serving shows decode MFU, hides the training-only fields, and a switch proposes a
    // serving layout (tensor in the NVLink domain, replicas over the rest).
    void servingViews()
    {
        QVERIFY(open(QStringLiteral("qwen3-30b-a3b-gb200-serving.meshplan")));
        QVERIFY(doc().evaluation());
        const double mfu = doc().evaluation()->serving.decodeMfu;
        QVERIFY2(mfu > 0 && mfu < 1, qPrintable(QString::number(mfu)));
        const QString summary = inspector()->summaryText();
        // The value may be an explain link (issue 18), drawn as plain text.
        const QRegularExpression row(QStringLiteral("Decode MFU</td><td><b>(?:<a [^>]*>)?([^<]+)<"));
        const auto match = row.match(summary);
        QVERIFY2(match.hasMatch(), qPrintable(summary));
        QVERIFY2(match.captured(1).endsWith(QLatin1Char('%')), qPrintable(match.captured(1)));
        for (const char *pointer : {"/parallelism/zero_stage", "/parallelism/microbatches", "/parallelism/virtual_stages",
                                    "/parallelism/pipeline_schedule", "/parallelism/sequence_parallel"})
            QVERIFY2(!inspector()->editorFor(pointer)->isVisibleTo(inspector()), pointer);

        // The way the user got there: Qwen3 and the rack dropped on the default plan, then serving.
        window().document()->newDefault();
        QVERIFY(window().dropModel("qwen3-30b-a3b"));
        QVERIFY(window().dropHardware({{"chip", "gb200"}, {"topology", {{"nodes", 1}, {"gpus_per_node", 72}}}}));
        QVERIFY(window().editKind("inference"));
        QVERIFY2(doc().evaluation(), doc().evaluation() ? "" : doc().evaluation().error().toString().c_str());
        QVERIFY(doc().evaluation()->serving.decodeMfu > 0);
        QVERIFY(row.match(inspector()->summaryText()).captured(1).endsWith(QLatin1Char('%')));

        QVERIFY(open(QStringLiteral("llama-3-405b-h100-16k.meshplan")));
        QVERIFY(inspector()->editorFor("/parallelism/microbatches")->isVisibleTo(inspector()));
        QVERIFY(window().editKind("inference"));
        const auto &p = doc().plan().parallelism;
        // 405B in bf16 is 810 GB: 101 GB per GPU even at tensor 8, the widest inside a node.
        QCOMPARE(p.degree(Role::Tensor), 8);
        QCOMPARE(p.degree(Role::Data), 2048);
        QCOMPARE(p.degree(Role::Fsdp), 1);
        QCOMPARE(p.degree(Role::Pipeline), 1);
        QVERIFY(doc().evaluation());
        QVERIFY(!inspector()->editorFor("/parallelism/microbatches")->isVisibleTo(inspector()));
        // The switch says what it did to the degrees.
        QVERIFY2(doc().undoStack()->undoText().contains(QStringLiteral("pipeline 16 → 1")),
                 qPrintable(doc().undoStack()->undoText()));
    }

    // 5. The wheel over an unfocused field scrolls the inspector and leaves the plan alone.
    void wheelDoesNotEditUnfocusedFields()
    {
        QVERIFY(open(QStringLiteral("llama-3-405b-h100-16k.meshplan")));
        auto *chip = inspector()->findChild<QComboBox *>();
        QVERIFY(chip);
        auto *nodes = inspector()->findChildren<QSpinBox *>().value(1);
        const json before = doc().json();
        for (QWidget *field : inspector()->findChildren<QWidget *>()) {
            if (!qobject_cast<QAbstractSpinBox *>(field) && !qobject_cast<QComboBox *>(field))
                continue;
            QCOMPARE(field->focusPolicy(), Qt::StrongFocus);
            if (field->isVisibleTo(inspector()))
                wheelOn(field);
        }
        QCOMPARE(doc().json(), before);
        QCOMPARE(doc().undoStack()->count(), 0);
        // With focus, the wheel steps the field as usual.
        auto *microbatches = qobject_cast<QSpinBox *>(inspector()->editorFor("/parallelism/microbatches"));
        QVERIFY(microbatches && nodes);
        microbatches->setFocus();
        QVERIFY(microbatches->hasFocus() || QApplication::focusWidget() == microbatches);
        const int value = microbatches->value();
        wheelOn(microbatches);
        QCOMPARE(microbatches->value(), value + 1);
    }

    // 6. A cluster dropped on a plan rewrites degrees only aloud: in the undo entry and the status bar.
    void automaticDegreeChangesAreSaid()
    {
        QVERIFY(open(QStringLiteral("deepseek-v3-h100-2048.meshplan")));
        QVERIFY(window().editDegree(Role::Expert, 16));
        QCOMPARE(doc().plan().parallelism.degree(Role::Expert), 16);
        QVERIFY(dropOn(window().canvas()->viewport(), meshPoint(window().canvas()),
                       cardMime(window().hardwarePalette(), QStringLiteral("GB200 NVL72"))));
        QCOMPARE(doc().plan().topology.chipCount(), 72);
        const int expert = doc().plan().parallelism.degree(Role::Expert);
        QVERIFY(expert != 16);
        const QString said = QStringLiteral("expert 16 → %1").arg(expert);
        const QString undo = doc().undoStack()->undoText();
        QVERIFY2(undo.startsWith(QStringLiteral("Change cluster: ")) && undo.contains(said), qPrintable(undo));
        QVERIFY2(undo.contains(QStringLiteral("because the cluster has 72 chips, not 2048")), qPrintable(undo));
        QVERIFY2(window().statusBar()->currentMessage().contains(said), qPrintable(window().statusBar()->currentMessage()));
        // An edit that changes no other degree says nothing extra.
        QVERIFY(window().editField(QStringLiteral("Set sequence length"), "/workload/seq_len", 2048));
        QCOMPARE(doc().undoStack()->undoText(), QStringLiteral("Set sequence length"));
    }

    // 7. Refused (tensor 7 on 72 GPUs) or accepted but not evaluable (microbatches 17): both keep
    // the typed value in the field, mark it, and say why beside it.
    void refusalsKeepTheTypedValue()
    {
        QVERIFY(window().dropHardware({{"chip", "gb200"}, {"topology", {{"nodes", 1}, {"gpus_per_node", 72}}}}));
        const json before = doc().json();
        QVERIFY(!window().editDegree(Role::Tensor, 7));
        QCOMPARE(doc().json(), before);
        auto *tensor = inspector()->degreeEditor(Role::Tensor);
        QCOMPARE(tensor->value(), 7);
        QCOMPARE(inspector()->markedField(), std::string("/parallelism/tensor"));
        QVERIFY2(inspector()->markedReason().contains(QStringLiteral("7")), qPrintable(inspector()->markedReason()));
        QVERIFY(tensor->property("refused").toBool());
        QVERIFY(tensor->palette().color(QPalette::Base) != inspector()->palette().color(QPalette::Base));
        auto *note = inspector()->findChild<QLabel *>(QStringLiteral("refusalNote"));
        QVERIFY(note && note->isVisibleTo(inspector()));

        QVERIFY(open(QStringLiteral("mixtral-8x7b-h100-moe.meshplan")));
        QVERIFY(inspector()->markedField().empty());
        QVERIFY(!note->isVisibleTo(inspector()));
        QVERIFY(window().editField(QStringLiteral("Set microbatches"), "/parallelism/microbatches", 17));
        QVERIFY(!doc().evaluation());
        auto *microbatches = qobject_cast<QSpinBox *>(inspector()->editorFor("/parallelism/microbatches"));
        QCOMPARE(microbatches->value(), 17);
        QCOMPARE(inspector()->markedField(), std::string("/parallelism/microbatches"));
        QVERIFY(note->isVisibleTo(inspector()));
        QCOMPARE(inspector()->markedReason(), QString::fromStdString(doc().evaluation().error().message));
        // Putting it right clears the mark.
        QVERIFY(window().editField(QStringLiteral("Set microbatches"), "/parallelism/microbatches", 8));
        QVERIFY(doc().evaluation());
        QVERIFY(inspector()->markedField().empty());
        QVERIFY(!microbatches->property("refused").toBool());
    }

    // 8. Ended by a signal, the session keeps unsaved work as a recovery copy and releases its lock.
    void quittingForASignalKeepsTheWork()
    {
        QVERIFY(window().dropModel("llama-3-8b"));
        const QString copy = window().autosaver()->recoveryFile();
        QVERIFY(!QFile::exists(copy));
        window().quitForSignal();
        QVERIFY(QFile::exists(copy));
        m_window.reset(); // what main() does once the event loop has exited
        const auto orphans = meshplan::app::Autosaver::orphans(m_autosave.path());
        QCOMPARE(orphans.size(), 1);
        QVERIFY(QDir(m_autosave.path()).entryList({QStringLiteral("*.lock")}, QDir::Files | QDir::Hidden).isEmpty());
        meshplan::app::Autosaver::dismiss(orphans.front());
    }

    void sigtermEndsTheSessionCleanly_data()
    {
        QTest::addColumn<int>("signal");
        QTest::newRow("SIGTERM") << 15;
        QTest::newRow("SIGINT") << 2;
    }

    void sigtermEndsTheSessionCleanly()
    {
        QFETCH(int, signal);
        QTemporaryDir home;
        QProcess process;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        env.insert(QStringLiteral("XDG_DATA_HOME"), home.filePath(QStringLiteral("data")));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), home.filePath(QStringLiteral("config")));
        process.setProcessEnvironment(env);
        process.start(QStringLiteral(MESHPLAN_GUI_PATH), {});
        QVERIFY(process.waitForStarted(20000));
        const QString autosave = home.filePath(QStringLiteral("data/Meshplan/Meshplan/autosave"));
        const auto locks = [&] {
            return QDir(autosave).entryList({QStringLiteral("*.lock")}, QDir::Files | QDir::Hidden);
        };
        QTRY_VERIFY_WITH_TIMEOUT(!locks().isEmpty(), 30000);
        QTest::qWait(500); // past the start, into the event loop
        ::kill(static_cast<pid_t>(process.processId()), signal);
        QVERIFY(process.waitForFinished(20000));
        QCOMPARE(process.exitStatus(), QProcess::NormalExit);
        QCOMPARE(process.exitCode(), 0);
        QVERIFY2(locks().isEmpty(), qPrintable(locks().join(u' ')));
        // A clean plan leaves nothing to recover.
        QVERIFY(meshplan::app::Autosaver::orphans(autosave).isEmpty());
    }
};

QTEST_MAIN(TestFirstUse)
#include "tst_firstuse.moc"
