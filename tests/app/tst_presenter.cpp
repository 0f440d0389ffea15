// Presenter mode (issue 19), offscreen: the keys a keyboard and a clicker send step through the
// slides without wrapping, slides whose plan is missing or bad show the problem, a click marks a
// chip's groups (or a box of nodes), nothing a presenter does changes a plan until Ctrl+E unlocks
// editing, an unlocked edit reaches the deck and the open plan, labels grow with the screen, the
// speaker window shows the next slide, and `meshplan --present DECK --slide N --screenshot`
// renders a slide.
#include "chartpicture.h"
#include "deckfile.h"
#include "deckpanel.h"
#include "dragmime.h"
#include "mainwindow.h"
#include "meshcanvas.h"
#include "plandocument.h"
#include "presenterwindow.h"
#include "speakerwindow.h"
#include "windowdriver.h"

#include "hardware/chipcatalog.h"
#include "plan/meshgroups.h"
#include "plan/plan.h"
#include "transformer/modelcatalog.h"

#include <QAction>
#include <QClipboard>
#include <QRegularExpression>
#include <QTimer>
#include <QFileDialog>
#include <QDockWidget>
#include <QLabel>
#include <QMenu>
#include <QContextMenuEvent>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <QUndoStack>
#include <QWheelEvent>

#include <memory>

using meshplan::app::PresenterWindow;
using namespace meshplan;
using namespace meshplan::testing;

namespace {

const QString kDeck = QStringLiteral(MESHPLAN_TEST_DATA "/decks/review.meshdeck");

model::Deck reviewDeck()
{
    auto deck = app::loadDeck(kDeck);
    if (!deck)
        qFatal("%s", deck.error().toString().c_str());
    return std::move(*deck);
}

/// A wheel turn over `target` at `pos`, as a mouse sends it.
void wheel(QWidget *target, QPoint pos, int delta)
{
    QWheelEvent event(QPointF(pos), QPointF(target->mapToGlobal(pos)), QPoint(), QPoint(0, delta), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(target, &event);
}

/// MESHPLAN_SCREENSHOTS=dir keeps pictures of the windows for a person to look at.
void keep(QWidget *widget, const QString &name)
{
    const QString dir = qEnvironmentVariable("MESHPLAN_SCREENSHOTS");
    if (!dir.isEmpty())
        widget->grab().save(dir + QLatin1Char('/') + name + QStringLiteral(".png"));
}

/// The text of every visible label in `window`.
QStringList visibleLabels(QWidget *window)
{
    QStringList texts;
    for (auto *label : window->findChildren<QLabel *>())
        if (label->isVisible())
            texts << label->text();
    return texts;
}

} // namespace

class TestPresenter : public QObject
{
    Q_OBJECT

private:
    std::unique_ptr<PresenterWindow> m_presenter;

    PresenterWindow &presenter() { return *m_presenter; }

private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void init()
    {
        m_presenter = std::make_unique<PresenterWindow>(reviewDeck());
        m_presenter->resize(1280, 720);
        m_presenter->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_presenter.get()));
    }
    void cleanup() { m_presenter.reset(); }

    void opensOnTheFirstSlide()
    {
        QCOMPARE(presenter().slideCount(), 4);
        QCOMPARE(presenter().currentSlide(), 0);
        QCOMPARE(presenter().counterText(), QStringLiteral("1 / 4"));
        QCOMPARE(presenter().titleText(), QStringLiteral("Training LLaMA-3 70B on a v5p pod"));
        QVERIFY(visibleLabels(&presenter()).contains(QStringLiteral("1 / 4")));
    }

    void keysStepThroughTheSlides_data()
    {
        QTest::addColumn<int>("start");
        QTest::addColumn<int>("key");
        QTest::addColumn<int>("expected");
        QTest::newRow("Right") << 0 << int(Qt::Key_Right) << 1;
        QTest::newRow("Down") << 1 << int(Qt::Key_Down) << 2;
        QTest::newRow("PageDown (clicker)") << 0 << int(Qt::Key_PageDown) << 1;
        QTest::newRow("Space") << 2 << int(Qt::Key_Space) << 3;
        QTest::newRow("N") << 1 << int(Qt::Key_N) << 2;
        QTest::newRow("Left") << 2 << int(Qt::Key_Left) << 1;
        QTest::newRow("Up") << 1 << int(Qt::Key_Up) << 0;
        QTest::newRow("PageUp (clicker)") << 3 << int(Qt::Key_PageUp) << 2;
        QTest::newRow("Backspace") << 3 << int(Qt::Key_Backspace) << 2;
        QTest::newRow("P") << 1 << int(Qt::Key_P) << 0;
        QTest::newRow("Home") << 3 << int(Qt::Key_Home) << 0;
        QTest::newRow("End") << 0 << int(Qt::Key_End) << 3;
        // No wrap past either end: a clicker pressed once too often stays on the last slide.
        QTest::newRow("PageDown on the last slide") << 3 << int(Qt::Key_PageDown) << 3;
        QTest::newRow("Right on the last slide") << 3 << int(Qt::Key_Right) << 3;
        QTest::newRow("PageUp on the first slide") << 0 << int(Qt::Key_PageUp) << 0;
        QTest::newRow("Left on the first slide") << 0 << int(Qt::Key_Left) << 0;
    }
    void keysStepThroughTheSlides()
    {
        QFETCH(int, start);
        QFETCH(int, key);
        QFETCH(int, expected);
        presenter().showSlide(start);
        QCOMPARE(presenter().currentSlide(), start);
        QTest::keyClick(&presenter(), Qt::Key(key));
        QCOMPARE(presenter().currentSlide(), expected);
        QCOMPARE(presenter().counterText(), QStringLiteral("%1 / 4").arg(expected + 1));
        QVERIFY(visibleLabels(&presenter()).contains(QStringLiteral("%1 / 4").arg(expected + 1)));
    }

    void keysOnTheMeshStepToo()
    {
        // The mesh takes no focus, and a key that reaches it still turns the page instead of scrolling.
        QCOMPARE(presenter().canvas()->focusPolicy(), Qt::NoFocus);
        QTest::keyClick(presenter().canvas(), Qt::Key_PageDown);
        QCOMPARE(presenter().currentSlide(), 1);
        QTest::keyClick(presenter().canvas()->viewport(), Qt::Key_PageUp);
        QCOMPARE(presenter().currentSlide(), 0);
    }

    void escapeLeavesPresenting()
    {
        QVERIFY(presenter().isVisible());
        QTest::keyClick(&presenter(), Qt::Key_Escape);
        QVERIFY(!presenter().isVisible());
    }

    void slidesWithAPlanShowTheMeshAndTheirCharts()
    {
        QVERIFY(presenter().problemText().isEmpty());
        QVERIFY(presenter().canvas()->isVisible());
        QCOMPARE(presenter().chartNames(), (QStringList{QStringLiteral("memory"), QStringLiteral("timeline")}));
        QCOMPARE(presenter().charts().size(), 2);
        for (auto *chart : presenter().charts()) {
            QVERIFY(chart->isVisible());
            QVERIFY(chart->chart());
            QVERIFY(chart->message().isEmpty());
        }
        presenter().showSlide(1); // the serving slide names only the roofline
        QVERIFY(presenter().problemText().isEmpty());
        QCOMPARE(presenter().chartNames(), QStringList{QStringLiteral("roofline")});
        QCOMPARE(presenter().charts().size(), 1);
        QVERIFY(presenter().charts().front()->chart());
        // The mesh shows that slide's plan: tensor 8 x data 2 on a 4x4 v5e, tensor 4 along x.
        QCOMPARE(presenter().canvas()->axisLabels(),
                 (QStringList{QStringLiteral("x · 4 · ici: tensor 4"), QStringLiteral("y · 4 · ici: tensor 2 · data 2")}));
    }

    void slidesWithoutTheirChartsGetTheDefaults()
    {
        model::Deck deck = reviewDeck();
        for (auto &slide : deck.slides)
            slide.charts.clear();
        PresenterWindow window(std::move(deck));
        QCOMPARE(window.chartNames(), (QStringList{QStringLiteral("memory"), QStringLiteral("timeline")}));
        window.showSlide(1);
        QCOMPARE(window.chartNames(), (QStringList{QStringLiteral("roofline"), QStringLiteral("sweep")}));
    }

    void missingAndBadPlansAreMarked()
    {
        presenter().showSlide(2);
        QCOMPARE(presenter().titleText(), QStringLiteral("A slide whose plan was moved"));
        QVERIFY2(presenter().problemText().contains(QStringLiteral("no-such-plan.meshplan")), qPrintable(presenter().problemText()));
        QVERIFY(!presenter().canvas()->isVisible());
        bool shown = false;
        for (const QString &text : visibleLabels(&presenter()))
            shown = shown || text.contains(presenter().problemText());
        QVERIFY(shown);
        QCOMPARE(presenter().counterText(), QStringLiteral("3 / 4"));

        presenter().showSlide(3);
        QCOMPARE(presenter().titleText(), QStringLiteral("A plan with a typo"));
        QVERIFY2(presenter().problemText().contains(QStringLiteral("parallelism.tensor")), qPrintable(presenter().problemText()));
        shown = false;
        for (const QString &text : visibleLabels(&presenter()))
            shown = shown || text.contains(presenter().problemText());
        QVERIFY(shown);

        // Back to a good slide: the mark goes with the slide.
        presenter().showSlide(0);
        QVERIFY(presenter().problemText().isEmpty());
        QVERIFY(presenter().canvas()->isVisible());
    }

    void aClickMarksTheChipsGroups()
    {
        views::MeshCanvas *canvas = presenter().canvas();
        QApplication::processEvents();
        // The slide's plan: fsdp 2048 x tensor 4 on 16x16x32, tensor 4 along x. Chip 0's tensor
        // group is chips 0-3 of the first row; chip 4 is in the next one.
        QCOMPARE(canvas->hoveredChip(), -1);
        const QPoint chip0 = canvas->mapFromScene(canvas->chipRect(0).center());
        QCOMPARE(canvas->chipAt(chip0), 0);
        QTest::mouseClick(canvas->viewport(), Qt::LeftButton, Qt::NoModifier, chip0);
        QCOMPARE(canvas->hoveredChip(), 0);
        QVERIFY(canvas->isHighlighted(3, model::Role::Tensor));
        QVERIFY(!canvas->isHighlighted(4, model::Role::Tensor));
        keep(&presenter(), QStringLiteral("presenter-marked"));
        // The pointer moving away, or leaving the mesh, keeps the mark for the room.
        QTest::mouseMove(canvas->viewport(), canvas->mapFromScene(canvas->chipRect(300).center()));
        QCOMPARE(canvas->hoveredChip(), 0);
        QEvent leave(QEvent::Leave);
        QApplication::sendEvent(canvas, &leave);
        QCOMPARE(canvas->hoveredChip(), 0);
        // A second click on it clears the mark; the next slide starts without one.
        QTest::mouseClick(canvas->viewport(), Qt::LeftButton, Qt::NoModifier, chip0);
        QCOMPARE(canvas->hoveredChip(), -1);
        QTest::mouseClick(canvas->viewport(), Qt::LeftButton, Qt::NoModifier, chip0);
        presenter().next();
        QCOMPARE(canvas->hoveredChip(), -1);
    }

    void presentingNeverEditsThePlan()
    {
        const nlohmann::json before = model::planToJson(*presenter().deck().slides[0].plan);
        views::MeshCanvas *canvas = presenter().canvas();
        const QTransform zoom = canvas->transform();
        const QStringList axes = canvas->axisLabels();
        const QPoint onMesh = canvas->mapFromScene(canvas->chipRect(0).center());
        // A role dropped on an axis bar, as in the window: refused.
        const QRectF bar = canvas->axisBarRect(0);
        const QPoint onBar = canvas->mapFromScene(bar.center());
        QVERIFY(!dropOn(canvas->viewport(), onBar, std::unique_ptr<QMimeData>(views::roleMimeData(model::Role::Tensor))));
        QVERIFY(!dropOn(canvas->viewport(), onMesh,
                        std::unique_ptr<QMimeData>(views::modelMimeData(nlohmann::json("llama-3-8b")))));
        // The wheel neither edits nor zooms the slide.
        wheel(canvas->viewport(), onMesh, 480);
        wheel(canvas->viewport(), onMesh, -960);
        wheel(&presenter(), QPoint(10, 10), 240);
        QCOMPARE(canvas->transform(), zoom);
        // Double clicks, drags, every key (Ctrl+E twice: unlocked, then locked again).
        QTest::mouseDClick(canvas->viewport(), Qt::LeftButton, Qt::NoModifier, onMesh);
        QTest::mousePress(canvas->viewport(), Qt::LeftButton, Qt::NoModifier, onMesh);
        QTest::mouseMove(canvas->viewport(), onBar);
        QTest::mouseRelease(canvas->viewport(), Qt::LeftButton, Qt::NoModifier, onBar);
        for (int key : {int(Qt::Key_Delete), int(Qt::Key_Plus), int(Qt::Key_Minus), int(Qt::Key_Z), int(Qt::Key_T)})
            QTest::keyClick(&presenter(), Qt::Key(key));
        QTest::keyClick(&presenter(), Qt::Key_E, Qt::ControlModifier);
        QTest::keyClick(&presenter(), Qt::Key_E, Qt::ControlModifier);
        QVERIFY(!presenter().editingUnlocked());
        QTest::keyClick(&presenter(), Qt::Key_Z, Qt::ControlModifier);
        presenter().showSlide(0);
        QCOMPARE(model::planToJson(*presenter().deck().slides[0].plan), before);
        QCOMPARE(canvas->axisLabels(), axes);
    }

    void ctrlEUnlocksEditing()
    {
        const nlohmann::json before = model::planToJson(*presenter().deck().slides[0].plan);
        views::MeshCanvas *canvas = presenter().canvas();
        QApplication::processEvents();
        const QStringList axes = canvas->axisLabels();
        const QPoint onY = canvas->mapFromScene(canvas->axisBarRect(1).center());
        QSignalSpy edited(&presenter(), &PresenterWindow::slideEdited);
        const auto tensor = [] { return std::unique_ptr<QMimeData>(views::roleMimeData(model::Role::Tensor)); };
        // Locked: the drop is refused and the room sees no badge.
        QVERIFY(!dropOn(canvas->viewport(), onY, tensor()));
        QCOMPARE(model::planToJson(*presenter().deck().slides[0].plan), before);
        QVERIFY(presenter().badgeText().isEmpty());
        // Ctrl+E unlocks, with a badge the room can read.
        QTest::keyClick(&presenter(), Qt::Key_E, Qt::ControlModifier);
        QVERIFY(presenter().editingUnlocked());
        QVERIFY(visibleLabels(&presenter()).contains(QStringLiteral("EDITING UNLOCKED · Ctrl+E locks")));
        keep(&presenter(), QStringLiteral("presenter-unlocked"));
        QVERIFY(dropOn(canvas->viewport(), onY, tensor()));
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.at(0).at(0).toInt(), 0);
        QCOMPARE(edited.at(0).at(2).toString(), QStringLiteral("Place tensor on axis y"));
        const nlohmann::json after = model::planToJson(*presenter().deck().slides[0].plan);
        QVERIFY(after != before);
        QVERIFY(canvas->axisLabels() != axes); // the slide shows the edited plan
        QCOMPARE(presenter().currentSlide(), 0);
        // Unlocked or not, the wheel neither edits nor zooms.
        QApplication::processEvents();
        const QTransform zoom = canvas->transform();
        wheel(canvas->viewport(), onY, 480);
        QCOMPARE(canvas->transform(), zoom);
        QCOMPARE(model::planToJson(*presenter().deck().slides[0].plan), after);
        // Ctrl+E locks again: the next drop is refused and the badge is gone.
        QTest::keyClick(&presenter(), Qt::Key_E, Qt::ControlModifier);
        QVERIFY(!presenter().editingUnlocked());
        QVERIFY(!visibleLabels(&presenter()).contains(QStringLiteral("EDITING UNLOCKED · Ctrl+E locks")));
        QVERIFY(!dropOn(canvas->viewport(), canvas->mapFromScene(canvas->axisBarRect(0).center()), tensor()));
        QCOMPARE(edited.count(), 1);
        QCOMPARE(model::planToJson(*presenter().deck().slides[0].plan), after);
        // The same switch as an action in the presenter's context menu, with Ctrl+E and a tooltip.
        QAction *unlock = presenter().unlockAction();
        QVERIFY(unlock);
        QCOMPARE(unlock->objectName(), QStringLiteral("unlockEditingAction"));
        QCOMPARE(unlock->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_E));
        QVERIFY(unlock->toolTip().contains(QStringLiteral("Ctrl+E")));
        QVERIFY(presenter().actions().contains(unlock));
        QCOMPARE(presenter().contextMenuPolicy(), Qt::ActionsContextMenu);
        QVERIFY(!unlock->isChecked());
        // A right click on the mesh opens that menu (and marks nothing).
        QStringList offered;
        QTimer::singleShot(0, this, [&offered] {
            if (auto *menu = qobject_cast<QMenu *>(QApplication::activePopupWidget())) {
                for (QAction *a : menu->actions())
                    offered << a->objectName();
                menu->close();
            }
        });
        const QPoint onChip = canvas->mapFromScene(canvas->chipRect(0).center());
        QTest::mouseClick(canvas->viewport(), Qt::RightButton, Qt::NoModifier, onChip);
        QContextMenuEvent menuEvent(QContextMenuEvent::Mouse, onChip, canvas->viewport()->mapToGlobal(onChip));
        QApplication::sendEvent(canvas->viewport(), &menuEvent);
        QCOMPARE(offered, QStringList{QStringLiteral("unlockEditingAction")});
        QCOMPARE(canvas->hoveredChip(), -1);
        unlock->trigger();
        QVERIFY(presenter().editingUnlocked());
        QVERIFY(!presenter().badgeText().isEmpty());
        QTest::keyClick(&presenter(), Qt::Key_E, Qt::ControlModifier); // the key and the action agree
        QVERIFY(!presenter().editingUnlocked());
        QVERIFY(!unlock->isChecked());
        QVERIFY(!dropOn(canvas->viewport(), canvas->mapFromScene(canvas->axisBarRect(0).center()), tensor()));
        QCOMPARE(edited.count(), 1);
    }

    void unlockedEditsReachTheDeckAndThePlan()
    {
        QTemporaryDir autosave;
        auto window = showTestWindow(autosave.path());
        QVERIFY(window);
        // Presenting the open plan: an unlocked edit is one undo step of the document.
        const nlohmann::json before = model::planToJson(window->document()->plan());
        QPointer<PresenterWindow> shown = window->present();
        QVERIFY(QTest::qWaitForWindowExposed(shown.data()));
        views::MeshCanvas *canvas = shown->canvas();
        QApplication::processEvents();
        QTest::keyClick(shown.data(), Qt::Key_E, Qt::ControlModifier);
        const int steps = window->document()->undoStack()->count();
        QVERIFY(dropOn(canvas->viewport(), canvas->mapFromScene(canvas->axisBarRect(0).center()),
                       std::unique_ptr<QMimeData>(views::roleMimeData(model::Role::Pipeline))));
        QCOMPARE(window->document()->undoStack()->count(), steps + 1);
        const nlohmann::json documentPlan = model::planToJson(window->document()->plan());
        const nlohmann::json slidePlan = model::planToJson(*shown->deck().slides[0].plan);
        // The same plan (the document may retitle it after the edit, as it does for any edit).
        QCOMPARE(documentPlan["parallelism"], slidePlan["parallelism"]);
        QCOMPARE(documentPlan["hardware"], slidePlan["hardware"]);
        QCOMPARE(documentPlan["workload"], slidePlan["workload"]);
        QVERIFY(model::planToJson(window->document()->plan()) != before);
        window->document()->undoStack()->undo();
        QCOMPARE(model::planToJson(window->document()->plan()), before);
        QTest::keyClick(shown.data(), Qt::Key_Escape);
        QTRY_VERIFY(!shown);

        // Presenting a deck: the edit reaches the slide, inline, and the deck is modified.
        app::DeckPanel *panel = window->deckPanel();
        QVERIFY(panel->openDeck(kDeck));
        window->findChild<QDockWidget *>(QStringLiteral("deckDock"))->show();
        QVERIFY(!panel->isModified());
        panel->setCurrentSlide(1);
        const nlohmann::json slideBefore = model::planToJson(*panel->deck().slides[1].plan);
        const nlohmann::json documentBefore = model::planToJson(window->document()->plan());
        shown = window->present();
        QVERIFY(QTest::qWaitForWindowExposed(shown.data()));
        QCOMPARE(shown->currentSlide(), 1);
        canvas = shown->canvas();
        QApplication::processEvents();
        QTest::keyClick(shown.data(), Qt::Key_E, Qt::ControlModifier);
        QVERIFY(dropOn(canvas->viewport(), canvas->mapFromScene(canvas->axisBarRect(1).center()),
                       std::unique_ptr<QMimeData>(views::roleMimeData(model::Role::Data))));
        QVERIFY(panel->isModified());
        QVERIFY(model::planToJson(*panel->deck().slides[1].plan) != slideBefore);
        QCOMPARE(model::planToJson(*panel->deck().slides[1].plan), model::planToJson(*shown->deck().slides[1].plan));
        QVERIFY(panel->deck().slides[1].planPath.empty());
        QCOMPARE(model::planToJson(window->document()->plan()), documentBefore); // not this slide's plan
        QTest::keyClick(shown.data(), Qt::Key_Escape);
        QTRY_VERIFY(!shown);
    }

    void meshLabelsGrowWithTheScreen()
    {
        views::MeshCanvas *canvas = presenter().canvas();
        QCOMPARE(canvas->textScale(), 1.0); // 1280x720
        const int small = canvas->headerHeight();
        presenter().resize(3840, 2160);
        QApplication::processEvents();
        QCOMPARE(canvas->textScale(), 3.25); // 2160 / 640 in quarter steps
        QVERIFY2(canvas->headerHeight() > 2 * small, qPrintable(QStringLiteral("%1 vs %2").arg(canvas->headerHeight()).arg(small)));
        keep(&presenter(), QStringLiteral("presenter-4k"));
        presenter().resize(1920, 1080);
        QApplication::processEvents();
        QCOMPARE(canvas->textScale(), 1.5);
        // The main window's canvas keeps its size.
        views::MeshCanvas plain;
        QCOMPARE(plain.textScale(), 1.0);
    }

    void aClickOnABoxOfNodesMarksItsGroup()
    {
        // 1024 H100s in 128 nodes: drawn as boxes of nodes, too small to click a GPU in.
        auto plan = app::loadDeck(kDeck);
        QVERIFY(plan);
        model::Deck deck;
        auto big = model::planFromJson(
            nlohmann::json::parse(R"({"format": "meshplan/plan", "version": 1, "title": "1024 GPUs",
                "model": "llama-3-70b",
                "hardware": {"chip": "h100-sxm", "topology": {"nodes": 128, "gpus_per_node": 8}},
                "parallelism": {"data": 16, "tensor": 8, "pipeline": 8},
                "workload": {"kind": "training", "seq_len": 8192, "global_batch": 1024}})"),
            model::ChipCatalog::builtin(), model::ModelCatalog::builtin());
        QVERIFY2(big, big ? "" : big.error().toString().c_str());
        deck.slides.push_back(model::slideFromPlan(*big, "1024 GPUs"));
        PresenterWindow window(std::move(deck));
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        views::MeshCanvas *canvas = window.canvas();
        QApplication::processEvents();
        QVERIFY(canvas->boxCount() > 1);
        const QPoint box = canvas->mapFromScene(canvas->boxRect(1).center());
        QCOMPARE(canvas->chipAt(box), -1); // no single GPU under the pointer
        const std::int64_t first = canvas->markableChipAt(box);
        QVERIFY(first > 0);
        QTest::mouseClick(canvas->viewport(), Qt::LeftButton, Qt::NoModifier, box);
        QCOMPARE(canvas->hoveredChip(), first);
        keep(&window, QStringLiteral("presenter-box-marked"));
        QTest::mouseClick(canvas->viewport(), Qt::LeftButton, Qt::NoModifier, box);
        QCOMPARE(canvas->hoveredChip(), -1);
    }

    void theWindowsPlanIsLeftAlone()
    {
        QTemporaryDir autosave;
        auto window = showTestWindow(autosave.path());
        QVERIFY(window);
        const nlohmann::json before = model::planToJson(window->document()->plan());
        auto *action = window->findChild<QAction *>(QStringLiteral("presentAction"));
        QVERIFY(action);
        QCOMPARE(action->shortcut(), QKeySequence(Qt::Key_F5));
        action->trigger();
        QPointer<PresenterWindow> shown = window->presenter();
        QVERIFY(shown);
        QVERIFY(QTest::qWaitForWindowExposed(shown.data()));
        QCOMPARE(shown->slideCount(), 1);
        QCOMPARE(shown->titleText(), QString::fromStdString(window->document()->plan().title));
        views::MeshCanvas *canvas = shown->canvas();
        const QPoint onBar = canvas->mapFromScene(canvas->axisBarRect(0).center());
        QVERIFY(!dropOn(canvas->viewport(), onBar, std::unique_ptr<QMimeData>(views::roleMimeData(model::Role::Pipeline))));
        wheel(canvas->viewport(), onBar, 480);
        QTest::mouseClick(canvas->viewport(), Qt::LeftButton, Qt::NoModifier,
                          canvas->mapFromScene(canvas->chipRect(0).center()));
        for (int key : {int(Qt::Key_Right), int(Qt::Key_PageDown), int(Qt::Key_End), int(Qt::Key_Home)})
            QTest::keyClick(shown.data(), Qt::Key(key));
        QCOMPARE(shown->currentSlide(), 0);
        QTest::keyClick(shown.data(), Qt::Key_Escape);
        QTRY_VERIFY(!shown); // closed and deleted
        QCOMPARE(model::planToJson(window->document()->plan()), before);
        QCOMPARE(window->document()->undoStack()->count(), 0);
        QVERIFY(window->document()->undoStack()->isClean());
    }

    void exportReportAndCopyMarkdown()
    {
        QTemporaryDir autosave;
        auto window = showTestWindow(autosave.path());
        QVERIFY(window);
        auto *report = window->findChild<QAction *>(QStringLiteral("exportReportAction"));
        QVERIFY(report);
        QCOMPARE(report->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
        QTemporaryDir dir;
        const QString html = dir.filePath(QStringLiteral("plan.html"));
        QCOMPARE(window->exportReport(html), std::nullopt);
        QFile file(html);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(file.readAll());
        // The built-in plan: LLaMA-3 70B on 8192 v5p as fsdp 1024 x context 2 x tensor 4.
        QVERIFY(text.contains(QStringLiteral("LLaMA-3 70B")));
        QVERIFY(text.contains(QStringLiteral("fsdp 1024")));
        QVERIFY(text.contains(QStringLiteral("data:image/png;base64,"))); // the charts, embedded
        QVERIFY(!QGuiApplication::overrideCursor()); // the wait cursor is gone again
        QVERIFY(text.contains(QStringLiteral("background:#ffffff")));
        // File > Export Report (Dark): the same report on dark pages, as `report --dark` writes it.
        auto *dark = window->findChild<QAction *>(QStringLiteral("exportDarkReportAction"));
        QVERIFY(dark);
        QCOMPARE(dark->shortcut(), QKeySequence(Qt::CTRL | Qt::ALT | Qt::SHIFT | Qt::Key_E));
        const QString darkHtml = dir.filePath(QStringLiteral("plan-dark.html"));
        QCOMPARE(window->exportReport(darkHtml, true), std::nullopt);
        QFile darkFile(darkHtml);
        QVERIFY(darkFile.open(QIODevice::ReadOnly));
        const QString darkText = QString::fromUtf8(darkFile.readAll());
        QVERIFY(darkText.contains(QStringLiteral("background:#1e1f22")));
        QVERIFY(darkText.contains(QStringLiteral("fsdp 1024")));
        const QString darkPdf = dir.filePath(QStringLiteral("plan-dark.pdf"));
        QCOMPARE(window->exportReport(darkPdf, true), std::nullopt);
        QVERIFY(QFileInfo(darkPdf).size() > 10000);
        // A folder that is not there: a message naming the file, nothing written.
        const QString nowhere = dir.filePath(QStringLiteral("no/such/folder/plan.pdf"));
        const auto error = window->exportReport(nowhere);
        QVERIFY(error);
        QVERIFY2(error->contains(QStringLiteral("plan.pdf")), qPrintable(*error));
        QCOMPARE(window->lastError(), *error);
        QVERIFY(!QFile::exists(nowhere));
        QVERIFY(!QGuiApplication::overrideCursor());

        auto *copy = window->findChild<QAction *>(QStringLiteral("copyMarkdownAction"));
        QVERIFY(copy);
        QCOMPARE(copy->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
        QApplication::clipboard()->clear();
        copy->trigger();
        const QString pasted = QApplication::clipboard()->text();
        QCOMPARE(pasted, window->summaryMarkdown());
        QVERIFY2(pasted.contains(QStringLiteral("| Parallelism | fsdp 1024 × tensor 4 × context 2 |\n")), qPrintable(pasted));
        QVERIFY(pasted.contains(QStringLiteral("| Chips | 8192 |\n")));
    }

    void exportReportWithDarkPages()
    {
        QTemporaryDir autosave;
        auto window = showTestWindow(autosave.path());
        QVERIFY(window);
        QTemporaryDir dir;
        // Through the action and its dialog, as a user does: the dark action's dialog says so.
        const auto exportThrough = [&](const QString &actionName, const QString &path) {
            QString dialogTitle;
            QTimer::singleShot(0, this, [&dialogTitle, path] {
                auto *dialog = qobject_cast<QFileDialog *>(QApplication::activeModalWidget());
                if (!dialog)
                    return;
                dialogTitle = dialog->windowTitle();
                dialog->selectNameFilter(QStringLiteral("HTML, self-contained (*.html)"));
                dialog->selectFile(path);
                static_cast<QDialog *>(dialog)->accept(); // public there, protected in QFileDialog
            });
            auto *action = window->findChild<QAction *>(actionName);
            if (action)
                action->trigger();
            return dialogTitle;
        };
        const QString darkPath = dir.filePath(QStringLiteral("dark.html"));
        QCOMPARE(exportThrough(QStringLiteral("exportDarkReportAction"), darkPath), QStringLiteral("Export Report (Dark)"));
        const QString lightPath = dir.filePath(QStringLiteral("light.html"));
        QCOMPARE(exportThrough(QStringLiteral("exportReportAction"), lightPath), QStringLiteral("Export Report"));
        const auto read = [](const QString &path) {
            QFile file(path);
            return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
        };
        const QString dark = read(darkPath);
        const QString light = read(lightPath);
        // The page background of each: dark as `report --dark` writes it, light otherwise.
        const QRegularExpression background(QStringLiteral("body\\{[^}]*background:(#[0-9a-f]{6})"));
        const auto darkMatch = background.match(dark);
        const auto lightMatch = background.match(light);
        QVERIFY2(darkMatch.hasMatch(), qPrintable(dark.left(400)));
        QVERIFY(lightMatch.hasMatch());
        QVERIFY2(qGray(QColor(darkMatch.captured(1)).rgb()) < 60, qPrintable(darkMatch.captured(1)));
        QVERIFY(qGray(QColor(lightMatch.captured(1)).rgb()) > 200);
        QVERIFY(dark.contains(QStringLiteral("fsdp 1024")));
        QVERIFY(dark.contains(QStringLiteral("data:image/png;base64,"))); // the charts too
        QVERIFY(!QGuiApplication::overrideCursor());
        // A folder that is not there: the same message as the light export gives, nothing written.
        const QString nowhere = dir.filePath(QStringLiteral("no/such/folder/plan.html"));
        exportThrough(QStringLiteral("exportReportAction"), nowhere);
        const QString lightError = window->lastError();
        QVERIFY2(lightError.contains(QStringLiteral("plan.html")), qPrintable(lightError));
        const auto darkError = window->exportReport(nowhere, true);
        QVERIFY(darkError);
        QCOMPARE(*darkError, lightError);
        QVERIFY(!QFile::exists(nowhere));
    }

    void notesOverlayAndSpeakerWindow()
    {
        QVERIFY(!presenter().notesShown());
        QTest::keyClick(&presenter(), Qt::Key_S);
        QVERIFY(presenter().notesShown());
        const QString notes = QStringLiteral("FSDP over the whole pod, tensor 4 along x: the book's chapter 6 layout.");
        QVERIFY(visibleLabels(&presenter()).contains(notes));
        keep(&presenter(), QStringLiteral("presenter-notes"));
        QTest::keyClick(&presenter(), Qt::Key_S);
        QVERIFY(!presenter().notesShown());

        // One screen offscreen: the speaker window is asked for, as on a second screen.
        app::SpeakerWindow *speaker = presenter().showSpeakerWindow();
        QVERIFY(speaker);
        QCOMPARE(speaker->notesText(), notes);
        QCOMPARE(speaker->nextText(), QStringLiteral("Next: Serving it on v5e"));
        QVERIFY2(QRegularExpression(QStringLiteral("^\\d\\d:\\d\\d · \\d+:\\d\\d elapsed$")).match(speaker->clockText()).hasMatch(),
                 qPrintable(speaker->clockText()));
        speaker->resize(1280, 720);
        QApplication::processEvents();
        // The next slide as the room will see it: the dark theme, drawn at 16:9.
        const QPixmap picture = speaker->nextPicture();
        QVERIFY(!picture.isNull());
        QCOMPARE(picture.width() * 9, picture.height() * 16);
        QVERIFY(qGray(picture.toImage().pixel(2, 2)) < 30);
        keep(speaker, QStringLiteral("speaker"));
        QTest::keyClick(&presenter(), Qt::Key_Right);
        QCOMPARE(speaker->notesText(), QStringLiteral("int8 weights halve the bytes each decode step reads."));
        QTest::keyClick(&presenter(), Qt::Key_End);
        QCOMPARE(speaker->nextText(), QStringLiteral("Last slide"));
        QVERIFY(speaker->nextPicture().isNull());
        QVERIFY(visibleLabels(speaker).contains(QStringLiteral("End of the deck")));
        keep(speaker, QStringLiteral("speaker-last"));
        QTest::keyClick(&presenter(), Qt::Key_Escape);
        QVERIFY(!speaker->isVisible()); // leaving presenting closes the notes too
    }

    void screenshotOfASlide_data()
    {
        QTest::addColumn<int>("slide");
        QTest::addColumn<QString>("size");
        QTest::newRow("slide 1, 1920x1080") << 1 << QStringLiteral("1920x1080");
        QTest::newRow("slide 2, 1280x720") << 2 << QStringLiteral("1280x720");
        QTest::newRow("slide 3 (missing plan), 1024x768") << 3 << QStringLiteral("1024x768");
    }
    void screenshotOfASlide()
    {
        QFETCH(int, slide);
        QFETCH(QString, size);
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("slide.png"));
        QProcess gui;
        gui.start(QStringLiteral(MESHPLAN_GUI_PATH), {QStringLiteral("--present"), kDeck, QStringLiteral("--slide"),
                                                      QString::number(slide), QStringLiteral("--screenshot"), out,
                                                      QStringLiteral("--size"), size});
        QVERIFY(gui.waitForFinished(120000));
        QCOMPARE(gui.exitStatus(), QProcess::NormalExit);
        QCOMPARE(gui.exitCode(), 0);
        QImage image(out);
        QCOMPARE(image.size(), QSize(size.section(QLatin1Char('x'), 0, 0).toInt(), size.section(QLatin1Char('x'), 1).toInt()));
        // The high-contrast theme: a near-black corner, white title text in the top band.
        QVERIFY(qGray(image.pixel(2, 2)) < 30);
        int white = 0;
        for (int x = 0; x < image.width() / 2; ++x)
            for (int y = 0; y < image.height() / 12; ++y)
                white += qGray(image.pixel(x, y)) > 230 ? 1 : 0;
        QVERIFY2(white > 500, qPrintable(QString::number(white)));
    }

    void screenshotRefusesASlideOutsideTheDeck()
    {
        QTemporaryDir dir;
        QProcess gui;
        gui.start(QStringLiteral(MESHPLAN_GUI_PATH), {QStringLiteral("--present"), kDeck, QStringLiteral("--slide"),
                                                      QStringLiteral("5"), QStringLiteral("--screenshot"),
                                                      dir.filePath(QStringLiteral("x.png"))});
        QVERIFY(gui.waitForFinished(60000));
        QCOMPARE(gui.exitCode(), 2);
        QVERIFY(QString::fromUtf8(gui.readAllStandardError()).contains(QStringLiteral("--slide: expected a slide from 1 to 4")));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("x.png"))));
    }
};

QTEST_MAIN(TestPresenter)
#include "tst_presenter.moc"
