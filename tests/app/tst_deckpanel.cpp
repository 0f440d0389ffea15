// The Deck dock (issue 19): a deck opens with its bad slides marked, the open plan is added as a
// slide, slides are reordered and retitled, notes edited, and the deck round-trips through its
// file; the window presents and reports the open deck.
#include "deckfile.h"
#include "deckpanel.h"
#include "mainwindow.h"
#include "plandocument.h"
#include "presenterwindow.h"
#include "testplans.h"
#include "windowdriver.h"

#include <QDockWidget>
#include <QFile>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QTimer>
#include <QApplication>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using meshplan::app::DeckPanel;
using namespace meshplan;
using namespace meshplan::testing;
namespace m = meshplan::model;

namespace {

const QString kDeck = QStringLiteral(MESHPLAN_TEST_DATA "/decks/review.meshdeck");
const QString kServing = QStringLiteral(MESHPLAN_TEST_DATA "/plans/llama-3-70b-int8-v5e-serving.meshplan");

QStringList titles(const m::Deck &deck)
{
    QStringList list;
    for (const auto &slide : deck.slides)
        list << QString::fromStdString(slide.title);
    return list;
}

} // namespace

class TestDeckPanel : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void opensWithBadSlidesMarked()
    {
        DeckPanel panel;
        QVERIFY(panel.openDeck(kDeck));
        QCOMPARE(panel.slideList()->count(), 4);
        QCOMPARE(panel.slideList()->item(0)->text(), QStringLiteral("1. Training LLaMA-3 70B on a v5p pod"));
        QCOMPARE(panel.slideList()->item(1)->text(), QStringLiteral("2. Serving it on v5e"));
        QVERIFY(panel.slideList()->item(2)->text().startsWith(QStringLiteral("⚠ 3. A slide whose plan was moved — ")));
        QVERIFY(panel.slideList()->item(2)->text().contains(QStringLiteral("no-such-plan.meshplan")));
        QVERIFY(panel.slideList()->item(3)->text().startsWith(QStringLiteral("⚠ 4. A plan with a typo — ")));
        QVERIFY(panel.slideList()->item(3)->toolTip().contains(QStringLiteral("parallelism.tensor")));
        QVERIFY(!panel.isModified());
        // The first slide is selected, its title and notes in the fields.
        QCOMPARE(panel.currentSlide(), 0);
        QCOMPARE(panel.findChild<QLineEdit *>(QStringLiteral("slideTitle"))->text(),
                 QStringLiteral("Training LLaMA-3 70B on a v5p pod"));
        QVERIFY(panel.findChild<QPlainTextEdit *>(QStringLiteral("slideNotes"))->toPlainText().startsWith(QStringLiteral("FSDP over")));
    }

    // Closing the window, or New and Open in the dock, ask about a deck's unsaved slides: Cancel
    // keeps the deck open and unchanged, Discard lets it go. (Unsaved slides are not lost quietly.)
    void unsavedDeckIsAskedAbout()
    {
        DeckPanel panel;
        QVERIFY(panel.openDeck(kDeck));
        QVERIFY(panel.maybeSaveDeck()); // nothing to ask about
        panel.addSlide(loadPlan(kServing));
        QVERIFY(panel.isModified());
        const auto answer = [](QMessageBox::StandardButton button) {
            QTimer::singleShot(0, [button] {
                auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget());
                QVERIFY(box);
                QVERIFY(box->text().contains(QStringLiteral("not saved")));
                box->button(button)->click();
            });
        };
        answer(QMessageBox::Cancel);
        QVERIFY(!panel.maybeSaveDeck());
        QCOMPARE(panel.deck().slides.size(), std::size_t(5));
        QVERIFY(panel.isModified());
        answer(QMessageBox::Discard);
        QVERIFY(panel.maybeSaveDeck());
        // The window asks too: Cancel on the deck's question keeps the window open.
        QTemporaryDir autosave;
        auto window = showTestWindow(autosave.path());
        QVERIFY(window);
        window->deckPanel()->addSlide(loadPlan(kServing));
        QVERIFY(window->deckPanel()->isModified());
        answer(QMessageBox::Cancel);
        QVERIFY(!window->close());
        QVERIFY(window->isVisible());
        answer(QMessageBox::Discard);
        QVERIFY(window->close());
    }

    void refusesAFileThatIsNoDeck()
    {
        DeckPanel panel;
        QVERIFY(panel.openDeck(kDeck));
        QVERIFY(!panel.openDeck(kServing)); // a plan, not a deck
        QVERIFY(!panel.lastError().isEmpty());
        QCOMPARE(panel.deck().slides.size(), std::size_t(4)); // the open deck stays
    }

    void editsRoundTripThroughTheFile()
    {
        DeckPanel panel;
        QVERIFY(panel.openDeck(kDeck));
        const m::Plan serving = loadPlan(kServing);
        panel.setCurrentSlide(1);
        panel.addSlide(serving); // after the selected slide
        QCOMPARE(panel.currentSlide(), 2);
        QCOMPARE(panel.deck().slides.size(), std::size_t(5));
        QVERIFY(panel.isModified());
        // Reorder with the buttons, as a user would: the new slide up to the top.
        auto buttons = panel.findChildren<QPushButton *>();
        QPushButton *up = nullptr;
        for (auto *b : buttons)
            if (b->text() == QStringLiteral("Move Up"))
                up = b;
        QVERIFY(up);
        QTest::mouseClick(up, Qt::LeftButton);
        QTest::mouseClick(up, Qt::LeftButton);
        QCOMPARE(panel.currentSlide(), 0);
        QVERIFY(!up->isEnabled()); // nothing above the first slide
        panel.moveSlide(4, 3);      // the typo slide before the missing one
        // Retitle by typing, as a user would; notes through the field.
        panel.setCurrentSlide(0);
        auto *title = panel.findChild<QLineEdit *>(QStringLiteral("slideTitle"));
        title->selectAll();
        QTest::keyClicks(title, QStringLiteral("Serving | int8"));
        panel.findChild<QPlainTextEdit *>(QStringLiteral("slideNotes"))->setPlainText(QStringLiteral("Say why int8.\nThen stop."));
        const QStringList expected{QStringLiteral("Serving | int8"), QStringLiteral("Training LLaMA-3 70B on a v5p pod"),
                                   QStringLiteral("Serving it on v5e"), QStringLiteral("A plan with a typo"),
                                   QStringLiteral("A slide whose plan was moved")};
        QCOMPARE(titles(panel.deck()), expected);
        QCOMPARE(panel.slideList()->item(0)->text(), QStringLiteral("1. Serving | int8"));

        // Saved in another folder: the slide given by a relative path still finds its plan.
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("talks/q3")));
        const QString saved = dir.filePath(QStringLiteral("talks/q3/review.meshdeck"));
        QCOMPARE(panel.saveDeck(saved), std::nullopt);
        QVERIFY(!panel.isModified());
        auto reloaded = app::loadDeck(saved);
        QVERIFY(reloaded);
        QCOMPARE(titles(*reloaded), expected);
        QCOMPARE(reloaded->slides[0].notes, std::string("Say why int8.\nThen stop."));
        QVERIFY(reloaded->slides[0].plan);
        QCOMPARE(m::planToJson(*reloaded->slides[0].plan), m::planToJson(serving));
        QVERIFY2(reloaded->slides[1].plan, reloaded->slides[1].problem.c_str()); // ../plans/... rewritten
        QCOMPARE(m::planToJson(*reloaded->slides[1].plan), m::planToJson(*panel.deck().slides[1].plan));
        QVERIFY(!reloaded->slides[3].plan); // still a typo
        QVERIFY(!reloaded->slides[4].plan); // still missing
        QCOMPARE(reloaded->slides[2].charts, (std::vector<std::string>{"roofline"}));
    }

    void saveFailureNamesTheFile()
    {
        DeckPanel panel;
        QVERIFY(panel.openDeck(kDeck));
        panel.setSlideNotes(0, QStringLiteral("changed"));
        QTemporaryDir dir;
        const QString nowhere = dir.filePath(QStringLiteral("missing/deck.meshdeck"));
        const auto error = panel.saveDeck(nowhere);
        QVERIFY(error);
        QVERIFY2(error->contains(QStringLiteral("deck.meshdeck")), qPrintable(*error));
        QVERIFY(panel.isModified());
        QCOMPARE(panel.path(), kDeck);
    }

    void theWindowPresentsAndReportsTheOpenDeck()
    {
        QTemporaryDir autosave;
        auto window = showTestWindow(autosave.path());
        QVERIFY(window);
        QVERIFY(window->deckDock()->isHidden()); // until View > Deck
        QVERIFY(!window->deckIsOpen());
        window->deckDock()->show();
        DeckPanel *panel = window->deckPanel();
        // Add Current Plan as Slide: the window's plan, a copy.
        QTest::mouseClick(panel->findChild<QPushButton *>(QStringLiteral("addSlideButton")), Qt::LeftButton);
        QCOMPARE(panel->deck().slides.size(), std::size_t(1));
        QCOMPARE(m::planToJson(*panel->deck().slides[0].plan), m::planToJson(window->document()->plan()));
        QVERIFY(window->deckIsOpen());

        QVERIFY(panel->openDeck(kDeck));
        panel->setCurrentSlide(1);
        // MESHPLAN_SCREENSHOTS=dir keeps the window with its Deck dock for a person to look at.
        if (const QString keep = qEnvironmentVariable("MESHPLAN_SCREENSHOTS"); !keep.isEmpty()) {
            QApplication::processEvents();
            window->grab().save(keep + QStringLiteral("/deck-dock.png"));
            window->setDarkTheme(true);
            QApplication::processEvents();
            window->grab().save(keep + QStringLiteral("/deck-dock-dark.png"));
            window->setDarkTheme(false);
        }
        auto *presenter = window->present();
        QVERIFY(presenter);
        QCOMPARE(presenter->slideCount(), 4);
        QCOMPARE(presenter->currentSlide(), 1); // from the selected slide
        presenter->close();

        QTemporaryDir dir;
        const QString html = dir.filePath(QStringLiteral("deck.html"));
        QCOMPARE(window->exportReport(html), std::nullopt);
        QFile file(html);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(file.readAll());
        for (const QString &title : titles(panel->deck()))
            QVERIFY2(text.contains(title.toHtmlEscaped()), qPrintable(title));
        QVERIFY(text.contains(QStringLiteral("no-such-plan.meshplan")));

        // With the dock closed the open plan is presented again.
        window->deckDock()->hide();
        presenter = window->present();
        QCOMPARE(presenter->slideCount(), 1);
        presenter->close();
    }
};

QTEST_MAIN(TestDeckPanel)
#include "tst_deckpanel.moc"
