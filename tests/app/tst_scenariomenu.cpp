// The Scenarios menu (issue 18): each of the book's worked examples opens from its action as a new
// untitled plan, equal to the scenario's, with a clean history and its teaching note shown above
// the mesh; unsaved edits are asked about first; another plan ends the scenario.
#include "mainwindow.h"
#include "plandocument.h"
#include "windowdriver.h"

#include "plan/scenariocatalog.h"

#include <QAbstractButton>
#include <QAction>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>
#include <QUndoStack>

using namespace meshplan;
using namespace meshplan::testing;

namespace {

QAction *scenarioAction(app::MainWindow *window, const std::string &id)
{
    return window->findChild<QAction *>(QStringLiteral("scenario:") + QString::fromStdString(id));
}

} // namespace

class TestScenarioMenu : public QObject
{
    Q_OBJECT

private slots:
    void menuSitsBetweenViewAndCompare()
    {
        QTemporaryDir dir;
        auto window = showTestWindow(dir.path());
        QVERIFY(window);
        QStringList titles;
        for (QAction *a : window->menuBar()->actions())
            titles << a->text().remove(QLatin1Char('&'));
        const auto view = titles.indexOf(QStringLiteral("View"));
        const auto scenarios = titles.indexOf(QStringLiteral("Scenarios"));
        QVERIFY2(view >= 0 && scenarios == view + 1, qPrintable(titles.join(QLatin1Char(','))));
        // One submenu per chapter, named after it; every scenario has its action in its chapter's.
        auto *menu = window->findChild<QMenu *>(QStringLiteral("scenariosMenu"));
        QVERIFY(menu);
        QStringList chapters;
        for (QAction *a : menu->actions())
            chapters << a->text();
        QVERIFY2(chapters.contains(QStringLiteral("Ch. 5 — How to Parallelize a Transformer for Training")),
                 qPrintable(chapters.join(QLatin1Char('|'))));
        QVERIFY(chapters.contains(QStringLiteral("Ch. 12 — How to Think About GPUs")));
        for (const auto &s : model::builtInScenarios()) {
            QAction *action = scenarioAction(window.get(), s.id);
            QVERIFY2(action, s.id.c_str());
            QCOMPARE(action->text(), QString::fromStdString(s.title));
            QMenu *parent = qobject_cast<QMenu *>(action->parent());
            QVERIFY(parent);
            QVERIFY(parent->title().startsWith(QStringLiteral("Ch. %1 — ").arg(QString::fromStdString(s.chapter))));
        }
    }

    void actionOpensTheScenario_data()
    {
        QTest::addColumn<QString>("id");
        for (const auto &s : model::builtInScenarios())
            QTest::newRow(s.id.c_str()) << QString::fromStdString(s.id);
    }
    void actionOpensTheScenario()
    {
        QFETCH(QString, id);
        const model::Scenario *s = model::findScenario(id.toStdString());
        QVERIFY(s);
        QTemporaryDir dir;
        auto window = showTestWindow(dir.path());
        QVERIFY(window);
        QVERIFY(!window->scenarioNoteBar()->isVisible());
        scenarioAction(window.get(), s->id)->trigger();
        app::PlanDocument *doc = window->document();
        QCOMPARE(QString::fromStdString(doc->json().dump()), QString::fromStdString(s->plan.dump()));
        QVERIFY2(doc->evaluation().hasValue(), doc->evaluation() ? "" : doc->evaluation().error().toString().c_str());
        QVERIFY(doc->path().isEmpty());
        QVERIFY(!doc->isModified());
        QCOMPARE(doc->undoStack()->count(), 0);
        QCOMPARE(window->scenarioId(), id);
        QVERIFY(window->scenarioNoteBar()->isVisible());
        auto *note = window->scenarioNoteBar()->findChild<QLabel *>(QStringLiteral("scenarioNote"));
        QCOMPARE(note->text(), QString::fromStdString(s->note));
        auto *heading = window->scenarioNoteBar()->findChild<QLabel *>(QStringLiteral("scenarioHeading"));
        QVERIFY(heading->text().contains(QStringLiteral("ch. %1").arg(QString::fromStdString(s->chapter))));
        QVERIFY2(window->windowTitle().startsWith(QString::fromStdString(s->title)), qPrintable(window->windowTitle()));
    }

    void unsavedEditsAreAskedAbout()
    {
        QTemporaryDir dir;
        auto window = showTestWindow(dir.path());
        QVERIFY(window);
        QVERIFY(window->editDegree(model::Role::Tensor, 8));
        QVERIFY(window->document()->isModified());
        const nlohmann::json edited = window->document()->json();
        // Interactive: the usual question comes; Cancel keeps the edits and opens nothing.
        window->setInteractive(true);
        bool asked = false;
        QTimer::singleShot(0, window.get(), [&] {
            auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget());
            asked = box && box->text().contains(QStringLiteral("unsaved changes"));
            if (box)
                box->button(QMessageBox::Cancel)->click();
        });
        QVERIFY(!window->openScenario(QStringLiteral("pipeline-bubble")));
        QVERIFY(asked);
        QCOMPARE(window->document()->json().dump(), edited.dump());
        QVERIFY(window->document()->isModified());
        QVERIFY(window->scenarioId().isEmpty());
        QVERIFY(!window->scenarioNoteBar()->isVisible());
    }

    void anotherPlanOrTheCloseButtonEndsIt()
    {
        QTemporaryDir dir;
        auto window = showTestWindow(dir.path());
        QVERIFY(window);
        QVERIFY(window->openScenario(QStringLiteral("matmul-roofline")));
        // An edit keeps the scenario (and its note); undo goes back to the scenario's plan.
        QVERIFY(window->editField(QStringLiteral("Batch"), "/workload/batch", 512));
        QVERIFY(window->scenarioNoteBar()->isVisible());
        QVERIFY(window->windowTitle().contains(QStringLiteral("(scenario)")));
        window->document()->undoStack()->undo();
        QCOMPARE(window->document()->json().dump(), model::findScenario("matmul-roofline")->plan.dump());
        // The close button hides the note; the plan stays.
        auto *close = window->scenarioNoteBar()->findChild<QAbstractButton *>(QStringLiteral("scenarioCloseButton"));
        QVERIFY(close);
        close->click();
        QVERIFY(!window->scenarioNoteBar()->isVisible());
        QVERIFY(window->scenarioId().isEmpty());
        QCOMPARE(window->document()->json().dump(), model::findScenario("matmul-roofline")->plan.dump());
        QVERIFY(window->windowTitle().startsWith(QStringLiteral("Untitled")));
        // File > New ends a scenario too.
        QVERIFY(window->openScenario(QStringLiteral("tensor-parallel-limit")));
        QVERIFY(window->scenarioNoteBar()->isVisible());
        for (QAction *a : window->findChildren<QAction *>())
            if (a->text() == QStringLiteral("&New"))
                a->trigger();
        QVERIFY(!window->scenarioNoteBar()->isVisible());
        QCOMPARE(window->document()->plan().title, model::defaultPlan().title);
        // An unknown id is refused with the known ones named.
        QVERIFY(!window->openScenario(QStringLiteral("nope")));
        QVERIFY(window->lastError().contains(QStringLiteral("tensor-parallel-limit")));
    }
};

QTEST_MAIN(TestScenarioMenu)
#include "tst_scenariomenu.moc"
