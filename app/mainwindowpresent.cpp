// The planner window's presenting and forwarding (issue 19): View > Present, File > Export
// Report, Edit > Copy Summary as Markdown, the Deck dock.
#include "mainwindow.h"

#include "deckpanel.h"
#include "planfilename.h"
#include "planmarkdown.h"
#include "planreport.h"
#include "plandocument.h"
#include "presenterwindow.h"

#include "plan/deck.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QMenu>
#include <QScreen>
#include <QStatusBar>

#include <algorithm>

namespace meshplan::app {

void MainWindow::createPresentActions(QMenu *file, QMenu *edit)
{
    QAction *presentAction = m_viewMenu->addAction(tr("&Present"), this, [this] { present(); });
    presentAction->setObjectName(QStringLiteral("presentAction"));
    presentAction->setShortcut(QKeySequence(Qt::Key_F5));
    presentAction->setToolTip(tr("Show the open plan full screen for a room: the mesh and two charts, large and "
                                 "high-contrast; Esc ends it. Presenting never changes the plan."));

    // Above Quit, beside the other exports.
    QAction *quit = file->findChild<QAction *>(QStringLiteral("quitAction"));
    const auto actions = file->actions();
    QAction *before = quit && actions.indexOf(quit) > 0 ? actions[actions.indexOf(quit) - 1] : quit; // its separator
    auto *report = new QAction(tr("Export &Report…"), this);
    report->setObjectName(QStringLiteral("exportReportAction"));
    report->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    report->setToolTip(tr("A report to forward: the model, the cluster, the plan, the summary, every chart, the "
                          "warnings and where the headline numbers come from, as PDF or self-contained HTML."));
    connect(report, &QAction::triggered, this, [this] { exportReportDialog(false); });
    file->insertAction(before, report);
    // Dark pages for a screen share or a dark-mode wiki; print and forward the light ones.
    auto *darkReport = new QAction(tr("Export Report (&Dark)…"), this);
    darkReport->setObjectName(QStringLiteral("exportDarkReportAction"));
    darkReport->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::SHIFT | Qt::Key_E));
    darkReport->setToolTip(tr("The same report on dark pages, as meshplan-cli report --dark writes it: for a screen "
                              "share or a dark wiki."));
    connect(darkReport, &QAction::triggered, this, [this] { exportReportDialog(true); });
    file->insertAction(before, darkReport);

    // The Deck dock, hidden until View > Deck: most sessions plan rather than present.
    m_deckPanel = new DeckPanel(this);
    m_deckDock = new QDockWidget(tr("Deck"), this);
    m_deckDock->setObjectName(QStringLiteral("deckDock"));
    m_deckDock->setWidget(m_deckPanel);
    addDockWidget(Qt::RightDockWidgetArea, m_deckDock);
    m_deckDock->hide();
    connect(m_deckPanel, &DeckPanel::addCurrentPlanRequested, this, [this] {
        m_deckPanel->addSlide(m_document->plan());
        statusBar()->showMessage(tr("Added the open plan as slide %1").arg(m_deckPanel->currentSlide() + 1), 5000);
    });
    connect(m_deckPanel, &DeckPanel::presentRequested, this, [this] { present(); });

    edit->addSeparator();
    QAction *markdown = edit->addAction(tr("Copy Summary as &Markdown"), this, &MainWindow::copySummaryMarkdown);
    markdown->setObjectName(QStringLiteral("copyMarkdownAction"));
    markdown->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    markdown->setToolTip(tr("The plan and its summary numbers as Markdown tables, for a chat or a design doc."));
}

PresenterWindow *MainWindow::presenter() const
{
    return m_presenter;
}

bool MainWindow::deckIsOpen() const
{
    return m_deckDock && !m_deckDock->isHidden() && !m_deckPanel->deck().slides.empty();
}

PresenterWindow *MainWindow::present()
{
    if (m_presenter)
        m_presenter->close();
    // Copies: whatever happens while presenting, the document and the deck are left as they were.
    model::Deck deck;
    int first = 0;
    if (deckIsOpen()) {
        deck = m_deckPanel->deck();
        first = std::max(0, m_deckPanel->currentSlide());
    } else {
        const model::Plan &plan = m_document->plan();
        deck.title = plan.title;
        deck.slides.push_back(model::slideFromPlan(plan, plan.title));
    }
    // Which slides are the open plan: their unlocked edits reach the document as undo steps.
    std::vector<bool> isDocument(deck.slides.size(), !deckIsOpen());
    if (deckIsOpen() && !m_document->path().isEmpty()) {
        const QDir folder = QFileInfo(m_deckPanel->path()).absoluteDir();
        for (std::size_t i = 0; i < deck.slides.size(); ++i)
            isDocument[i] = !deck.slides[i].planPath.empty()
                            && QFileInfo(folder.filePath(QString::fromStdString(deck.slides[i].planPath))).absoluteFilePath()
                                   == QFileInfo(m_document->path()).absoluteFilePath();
    }
    const bool fromDeck = deckIsOpen();
    m_presenter = new PresenterWindow(std::move(deck), this);
    connect(m_presenter, &PresenterWindow::slideEdited, this,
            [this, isDocument, fromDeck](int index, const nlohmann::json &plan, const QString &label) {
                const auto i = static_cast<std::size_t>(index);
                // The presenter holds the edited plan already parsed.
                const auto &edited = m_presenter->deck().slides[i].plan;
                if (fromDeck && edited)
                    m_deckPanel->setSlidePlan(index, *edited);
                if (i < isDocument.size() && isDocument[i])
                    applyEdit(label, plan);
            });
    m_presenter->showSlide(first);
    m_presenter->setAttribute(Qt::WA_DeleteOnClose);
    if (!m_interactive) {
        m_presenter->resize(size());
        m_presenter->show();
        return m_presenter;
    }
    if (QScreen *here = screen())
        m_presenter->setGeometry(here->geometry());
    m_presenter->showFullScreen();
    if (QGuiApplication::screens().size() > 1)
        m_presenter->showSpeakerWindow();
    m_presenter->activateWindow();
    return m_presenter;
}

void MainWindow::exportReportDialog(bool dark)
{
    const bool deck = deckIsOpen();
    const QString title = QString::fromStdString(deck ? m_deckPanel->deck().title : m_document->plan().title);
    QString suggested = deck && !m_deckPanel->path().isEmpty() ? m_deckPanel->path()
                                                               : suggestedPlanPath(title, m_document->path());
    suggested = QFileInfo(suggested).path() + QLatin1Char('/') + QFileInfo(suggested).completeBaseName() + QStringLiteral(".pdf");
    QString filter;
    QString path = QFileDialog::getSaveFileName(this, dark ? tr("Export Report (Dark)") : tr("Export Report"), suggested,
                                                tr("PDF (*.pdf);;HTML, self-contained (*.html)"), &filter);
    if (path.isEmpty())
        return;
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix != QLatin1String("pdf") && suffix != QLatin1String("html"))
        path += filter.startsWith(QLatin1String("HTML")) ? QStringLiteral(".html") : QStringLiteral(".pdf");
    exportReport(path, dark);
}

std::optional<QString> MainWindow::exportReport(const QString &path, bool dark)
{
    std::vector<ReportSection> sections;
    if (deckIsOpen()) {
        for (const auto &slide : m_deckPanel->deck().slides)
            sections.push_back({slide.plan, QString::fromStdString(slide.title), QString::fromStdString(slide.notes),
                                QString::fromStdString(slide.problem)});
    } else {
        sections.push_back({m_document->plan(), QString(), QString(), QString()});
    }
    statusBar()->showMessage(tr("Writing %1…").arg(QFileInfo(path).fileName()));
    // Every chart is drawn and the derivations recorded: a second or two on a large plan.
    QGuiApplication::setOverrideCursor(Qt::WaitCursor);
    QApplication::processEvents(QEventLoop::ExcludeUserInputEvents);
    auto error = writeReport(sections, path, dark);
    QGuiApplication::restoreOverrideCursor();
    if (error) {
        reportError(tr("Cannot export the report"), *error);
        return error;
    }
    statusBar()->showMessage(tr("Report written to %1").arg(QFileInfo(path).fileName()), 5000);
    return std::nullopt;
}

QString MainWindow::summaryMarkdown() const
{
    return planMarkdown(m_document->plan(), m_document->evaluation());
}

void MainWindow::copySummaryMarkdown()
{
    QApplication::clipboard()->setText(summaryMarkdown());
    statusBar()->showMessage(tr("The plan and its summary are on the clipboard as Markdown"), 5000);
}

} // namespace meshplan::app
